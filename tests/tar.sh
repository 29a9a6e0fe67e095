#!/bin/bash
# tar.sh: --tar=f round trips.  The test tree is archived by GNU tar (gnu and
# pax with every xattr), bsdtar and Python's tarfile (pax and gnu); each tar
# is extracted by tar -x (the reference) and imaged by mkfs.erofs --tar=f,
# from a file and from a pipe, plain and through gzip, xz and zstd; our
# fsck.erofs extracts the image and both trees must match.  The same tar
# gives the same bytes whatever --workers, the input (file or pipe) and its
# compression; erofs-utils 1.9.4's mkfs.erofs, when present, makes an image
# of the same tar that must extract to the same tree.
. "$(dirname "$0")/lib.sh"
require_root

UUID=01234567-89ab-cdef-0123-456789abcdef
ANCHOR=$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs
bash "$GEN_TREE" "$WORK/src" >/dev/null
TARS=$WORK/tars
mkdir -p "$TARS"
tar --format=gnu --sparse -cf "$TARS/gnu.tar" -C "$WORK/src" . 2>/dev/null
tar --format=pax --sparse --xattrs --xattrs-include='*' -cf "$TARS/pax.tar" -C "$WORK/src" . 2>/dev/null
WRITERS="gnu pax python-pax python-gnu"
if command -v bsdtar >/dev/null; then
	bsdtar --xattrs -cf "$TARS/bsdtar.tar" -C "$WORK/src" . 2>/dev/null
	WRITERS="$WRITERS bsdtar"
else
	echo "note: no bsdtar (libarchive-tools): its tars are not tested"
fi
# erofs-utils 1.9.4 reads no PAX sparse files: the tar it is compared on has none
tar --format=pax --xattrs --xattrs-include='*' --exclude='./sizes/sparse-*' \
	-cf "$TARS/pax-nosparse.tar" -C "$WORK/src" . 2>/dev/null
for fmt in pax gnu; do
	python3 - "$WORK/src" "$TARS/python-$fmt.tar" "$fmt" <<'PY' 2>/dev/null
import sys, tarfile
fmt = tarfile.PAX_FORMAT if sys.argv[3] == "pax" else tarfile.GNU_FORMAT
with tarfile.open(sys.argv[2], "w", format=fmt) as t:
    t.add(sys.argv[1], arcname=".")
PY
done

# reference NAME: what tar -x makes of the tar
reference() {
	local name=$1 dir=$WORK/ref-$1
	rm -rf "$dir" && mkdir "$dir"
	if [ "$name" = bsdtar ]; then
		bsdtar --xattrs --numeric-owner -xpf "$TARS/$name.tar" -C "$dir"
		# bsdtar leaves the mtime of "." (the extraction directory) alone
		touch -m -d "@$(stat -c %Y "$WORK/src")" "$dir"
	else
		tar --xattrs --xattrs-include='*' --numeric-owner -xpf "$TARS/$name.tar" \
			-C "$dir" 2>/dev/null
	fi
}

for name in $WRITERS; do
	reference "$name"
	img=$WORK/$name.img
	if ! "$MKFS" --tar=f --quiet -U "$UUID" "$img" "$TARS/$name.tar" 2>"$WORK/err.txt"; then
		fail "$name: mkfs.erofs --tar=f failed: $(head -3 "$WORK/err.txt")"
		continue
	fi
	if [ "$name" = bsdtar ]; then
		# bsdtar keeps ACLs as SCHILY.acl.* text, which we do not convert (nor
		# does erofs-utils), and writes negative fractional times its own way
		rm -rf "$WORK/ours"
		"$FSCK" --extract="$WORK/ours" "$img" >/dev/null
		"$MANIFEST" "$WORK/ref-$name" | grep -vE '^(xattrs/acl|times/before-1970)' >"$WORK/a"
		"$MANIFEST" "$WORK/ours" | grep -vE '^(xattrs/acl|times/before-1970)' >"$WORK/b"
		if diff -u "$WORK/a" "$WORK/b" >&2; then
			pass "$name: trees match (but ACLs, times before 1970)"
		else
			fail "$name: trees differ"
		fi
		rm -rf "$WORK/ours"
	else
		ours_extract "$name" "$img" "$WORK/ref-$name"
	fi
	# from a pipe: no seeking, the data spooled, the same image
	if cat "$TARS/$name.tar" | "$MKFS" --tar=f --quiet -U "$UUID" "$WORK/pipe.img" &&
	   cmp -s "$img" "$WORK/pipe.img"; then
		pass "$name: from a pipe, the same bytes"
	else
		fail "$name: from a pipe, a different image (or a failure)"
	fi
	rm -rf "$WORK/ref-$name" "$WORK/pipe.img"
done

# the layer command lines of container tooling, compressed, every worker count
reference pax
for opts in "-zlz4hc" "-zlz4hc -Enoinline_data --sort=none" "-E^inline_data --aufs" \
	    "-zlz4 -C65536 -Eztailpacking,fragments"; do
	# shellcheck disable=SC2086
	"$MKFS" --tar=f --quiet -U "$UUID" --workers=1 $opts "$WORK/w1.img" "$TARS/pax.tar"
	# shellcheck disable=SC2086
	"$MKFS" --tar=f --quiet -U "$UUID" --workers=2 $opts "$WORK/w2.img" <"$TARS/pax.tar"
	if cmp -s "$WORK/w1.img" "$WORK/w2.img"; then
		pass "$opts: the same bytes for --workers=1 (file) and 2 (stdin)"
	else
		fail "$opts: --workers=1 and 2 differ"
	fi
	ours_extract "pax $opts" "$WORK/w2.img" "$WORK/ref-pax"
done
reader2_reads -zlz4 -C65536 -Eztailpacking,fragments &&
	reader2_extract pax-lz4-fragments "$WORK/w1.img" "$WORK/ref-pax"
"$MKFS" --tar=f --quiet -U "$UUID" -zlz4hc "$WORK/plain.img" "$TARS/pax.tar"
for codec in "gzip --ungzip" "xz --unxz" "zstd --unzstd"; do
	set -- $codec
	$1 -c "$TARS/pax.tar" >"$TARS/pax.tar.$1"
	if $1 -c "$TARS/pax.tar" | "$MKFS" --tar=f --quiet -U "$UUID" -zlz4hc "$2" "$WORK/z.img" &&
	   cmp -s "$WORK/plain.img" "$WORK/z.img"; then
		pass "$1 through $2 (a pipe): the same image as the plain tar"
	else
		fail "$1 through $2: a different image (or a failure)"
	fi
	"$MKFS" --tar=f --quiet -U "$UUID" -zlz4hc "$2" "$WORK/z.img" "$TARS/pax.tar.$1" &&
		cmp -s "$WORK/plain.img" "$WORK/z.img" &&
		pass "$1 through $2 (a file): the same image" ||
		fail "$1 through $2 (a file): a different image"
	expect_failure "$1 without $2" "$1-compressed: add $2" \
		"$MKFS" --tar=f --quiet "$WORK/z.img" "$TARS/pax.tar.$1"
	[ ! -e "$WORK/z.img" ] || [ "$WORK/z.img" -nt "$TARS/pax.tar.$1" ] ||
		fail "$1 without $2: an image was left behind"
	rm -f "$WORK/z.img" "$TARS/pax.tar.$1"
done

# erofs-utils 1.9.4 on the same tar: the same tree
if [ -x "$ANCHOR" ]; then
	for opts in "" "-zlz4hc -Enoinline_data --sort=none"; do
		# shellcheck disable=SC2086
		if "$ANCHOR" --tar=f --quiet -U "$UUID" $opts "$WORK/theirs.img" "$TARS/pax-nosparse.tar" \
			>/dev/null 2>&1; then
			rm -rf "$WORK/theirs" "$WORK/ours"
			"$FSCK" --extract="$WORK/theirs" "$WORK/theirs.img" >/dev/null
			# shellcheck disable=SC2086
			"$MKFS" --tar=f --quiet -U "$UUID" $opts "$WORK/ours.img" "$TARS/pax-nosparse.tar"
			"$FSCK" --extract="$WORK/ours" "$WORK/ours.img" >/dev/null
			same_manifest "erofs-utils 1.9.4 '$opts'" "$WORK/theirs" "$WORK/ours"
			rm -rf "$WORK/theirs" "$WORK/ours"
		else
			fail "erofs-utils 1.9.4 --tar=f $opts failed"
		fi
	done
else
	echo "note: erofs-utils 1.9.4 not in ../shared/anchors: no comparison with it"
fi
finish
