# shellcheck shell=bash
# Per-path dump.erofs views of one image, compared between two tools in one
# diff (sourced by tests/dump-erofs-utils.sh and tests/read48.sh, which
# compare ours with erofs-utils').  A test compares hundreds of paths per
# image; a diff and a filter per path made six processes where two do the
# work, and read48.sh spent ten minutes of make check on them.  Each view
# is still one tool run, preceded by a header line "@@view --path=PATH
# OPTIONS", so a failure names the views that differ.

# ours_only: our dump.erofs's output less what erofs-utils' does not print
# (the -s lines it lacks, the '# algorithm' comments of -e)
ours_only() {
	sed -E -e 's/  # (lz4|lzma|deflate|zstd|fragment|hole|algorithm).*$//' \
		-e '/^Filesystem ([a-z0-9 ]+ config|volume name|extra devices):/d'
}

# dump_views TOOL IMAGE SRC PATHS: `TOOL --path=P -e IMAGE` for each path P
# listed in the file PATHS (with --ls for a directory of SRC), stdout and
# stderr, each after its header
dump_views() {
	local tool=$1 img=$2 src=$3 paths=$4 p o
	while read -r p; do
		o=-e
		[ -d "$src$p" ] && [ ! -L "$src$p" ] && o="-e --ls"
		printf '@@view --path=%s %s\n' "$p" "$o"
		# shellcheck disable=SC2086 # o is a list of options
		"$tool" --path="$p" $o "$img" 2>&1 || true	# its message is the view
	done <"$paths"
}

# differing_views A B: the headers of the views that differ between the
# dump_views outputs A and B (or that B lacks), in A's order.  Both get
# their headers from one path list, so B has no header A lacks; were a
# tool to print one, the text it cuts off differs, or compare_views' cmp
# catches it.
differing_views() {
	awk '
		FNR == 1 { file++ }
		/^@@view / { head = $0; if (file == 1) order[++n] = head; seen[file, head] = 1; next }
		{ text[file, head] = text[file, head] $0 "\n" }
		END {
			for (i = 1; i <= n; i++)
				if (!seen[2, order[i]] || text[1, order[i]] != text[2, order[i]])
					print order[i]
		}' "$1" "$2"
}

# view_of FILE HEADER: the lines of FILE's view under HEADER (given through
# the environment: awk -v would take a backslash in a path for an escape)
view_of() {
	view_head=$2 awk '/^@@view / { inside = ($0 == ENVIRON["view_head"]); next } inside' "$1"
}

# compare_views LABEL A B: a failure for each of the first three views that
# differ between the dump_views outputs A and B, with its diff; sets
# views_differ to the number of views that differ
compare_views() {
	local label=$1 a=$2 b=$3 h
	views_differ=0
	cmp -s "$a" "$b" && return 0
	while IFS= read -r h; do
		views_differ=$((views_differ + 1))
		[ "$views_differ" -le 3 ] || continue
		fail "$label: dump.erofs ${h#@@view } differs:"
		diff <(view_of "$a" "$h") <(view_of "$b" "$h") | head -12 >&2 || true
	done < <(differing_views "$a" "$b")
	if [ "$views_differ" -eq 0 ]; then	# text outside any view
		views_differ=1
		fail "$label: the dump.erofs views differ: $(cmp "$a" "$b" 2>&1)"
	fi
}
