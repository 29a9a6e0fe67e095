# shellcheck shell=bash
# The second, independent reader the tests check images with (sourced by
# lib.sh and fsck-common.sh): erofs-utils 1.9.4's fsck.erofs from
# ../shared/anchors when present, else Debian's (erofs-utils 1.5,
# /usr/bin/fsck.erofs).  Their limits, left out of every comparison here:
#   1.9.4  restores xattrs only with --xattrs (given), and drops a file's
#          xattrs from the first one with an empty value on;
#   1.5    restores no xattrs and no setuid/setgid/sticky bits, turns hard
#          links into copies, writes wrong bytes for chunked files with
#          holes (--chunksize), reads 4096-byte blocks only and predates
#          fragments (-E fragments, all-fragments).
# Tests skip what the reader cannot do (reader2_reads) and say so; without
# either reader the cross-check is skipped with a note.

READER2_REF=${READER2_REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/fsck.erofs}
if [ -x "$READER2_REF" ]; then
	READER2=$READER2_REF READER2_NAME="erofs-utils 1.9.4's fsck.erofs"
elif [ -x /usr/bin/fsck.erofs ]; then
	READER2=/usr/bin/fsck.erofs READER2_NAME="Debian's fsck.erofs (erofs-utils 1.5)"
else
	READER2='' READER2_NAME="no second fsck.erofs"
fi

# reader2_old: the second reader is Debian's 1.5
reader2_old() { [ "$READER2" = /usr/bin/fsck.erofs ]; }

# reader2_reads MKFS_OPTIONS...: the second reader can read such an image
# (a note says why not otherwise)
reader2_reads() {
	local why=
	if [ -z "$READER2" ]; then
		why="no second fsck.erofs (erofs-utils) installed"
	elif reader2_old; then
		case " $* " in
		*fragments*) why="erofs-utils 1.5 predates fragments" ;;
		*lzma*|*deflate*|*zstd*) why="erofs-utils 1.5 reads LZ4 only here" ;;
		*" -b"*) why="erofs-utils 1.5 reads 4096-byte blocks only" ;;
		*--chunksize*) why="erofs-utils 1.5 writes wrong bytes for chunked files with holes" ;;
		esac
	fi
	[ -z "$why" ] && return 0
	echo "note: '$*' not cross-checked: $why"
	return 1
}

# reader2_manifests SOURCE OUT: the manifests of both trees, less what the
# second reader cannot restore, in $WORK/reader2.a and $WORK/reader2.b
reader2_manifests() {
	if reader2_old; then
		"$MANIFEST" --no-xattrs "$1" | sed -E 's/ (mode|link)=[^ ]*//g' >"$WORK/reader2.a"
		"$MANIFEST" --no-xattrs "$2" | sed -E 's/ (mode|link)=[^ ]*//g' >"$WORK/reader2.b"
		return
	fi
	"$MANIFEST" "$1" >"$WORK/reader2.src"
	"$MANIFEST" "$2" >"$WORK/reader2.out"
	# the xattrs of files that have one with an empty value (xattrs come last)
	# shellcheck disable=SC2016 # an awk program
	local drop='NR == FNR { if ($0 ~ / xattrs=([^ ]*;)?[^=; ]+=(;|$)/) drop[$1] = 1; next }
		($1 in drop) { sub(/ xattrs=[^ ]*$/, "") } { print }'
	awk "$drop" "$WORK/reader2.src" "$WORK/reader2.src" >"$WORK/reader2.a"
	awk "$drop" "$WORK/reader2.src" "$WORK/reader2.out" >"$WORK/reader2.b"
}

# reader2_extract LABEL IMAGE SOURCE [OPTIONS...]: the second reader checks
# and extracts the image (given OPTIONS too), and the tree matches SOURCE as
# far as that reader can tell
reader2_extract() {
	local label=$1 img=$2 src=$3 out=$WORK/reader2.x args=(--extract="$WORK/reader2.x")
	[ -n "$READER2" ] || { echo "note: $label: $READER2_NAME: not cross-checked"; return 0; }
	reader2_old || args+=(--xattrs)
	args+=("${@:4}")
	rm -rf "$out"
	if ! "$READER2" "${args[@]}" "$img" >"$WORK/reader2.log" 2>&1; then
		fail "$label: $READER2_NAME rejects the image: $(tail -2 "$WORK/reader2.log")"
		return
	fi
	reader2_manifests "$src" "$out"
	if diff -u "$WORK/reader2.a" "$WORK/reader2.b" >"$WORK/$label.reader2.diff"; then
		pass "$label: $READER2_NAME extracts the same tree"
	else
		fail "$label: $READER2_NAME extracts a different tree:"
		head -20 "$WORK/$label.reader2.diff" >&2
	fi
	rm -rf "$out"
}

# reader2_check LABEL IMAGE: the second reader finds the image clean
reader2_check() {
	[ -n "$READER2" ] || { echo "note: $1: $READER2_NAME: not cross-checked"; return 0; }
	if "$READER2" "$2" >"$WORK/reader2.log" 2>&1; then
		pass "$1: $READER2_NAME accepts the image"
	else
		fail "$1: $READER2_NAME rejects the image: $(tail -2 "$WORK/reader2.log")"
	fi
}
