#!/bin/bash
# tar-headerball.sh: mkfs.erofs --tar=headerball reads a stream of tar headers
# without file data (tests/tar-headerball.py makes one from a real tar): the
# image has every entry with its metadata, each regular file as long as its
# header says and all zeros, and no data blocks.  From a file and from a pipe;
# erofs-utils 1.9.4, when present, makes the same tree of the same stream.
. "$(dirname "$0")/lib.sh"
require_root

ANCHOR=$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs
src=$WORK/src
mkdir -p "$src/dir/sub" && echo hello > "$src/dir/hello" && : > "$src/empty"
head -c 4096 /dev/urandom > "$src/block" && head -c 5000000 /dev/urandom > "$src/dir/big"
ln "$src/dir/hello" "$src/dir/hardlink" && ln -s dir/hello "$src/sym"
mknod "$src/null" c 1 3 && mkfifo "$src/fifo" && chown 1234:5678 "$src/block"
setfattr -n user.note -v headerball "$src/dir/hello" && setfattr -n trusted.t -v 1 "$src/dir"
long=$src/$(printf 'n%.0s' $(seq 1 150)) && echo long > "$long"
touch -h -d '2020-02-02 02:02:02.5' "$src"/* "$src"/dir/* "$src"
tar --format=pax --xattrs --xattrs-include='*' --numeric-owner -C "$src" -cf "$WORK/full.tar" .
python3 "$top_srcdir/tests/tar-headerball.py" "$WORK/full.tar" "$WORK/hb"

# what the image must hold: tar -x of the full tar, every file's bytes zeroed
mkdir -p "$WORK/expect"
tar --xattrs --xattrs-include='*' --numeric-owner -xpf "$WORK/full.tar" -C "$WORK/expect"
find "$WORK/expect" -type f | while read -r f; do
	size=$(stat -c %s "$f")
	cp -p "$f" "$WORK/stamp" && truncate -s 0 "$f" && truncate -s "$size" "$f" && touch -r "$WORK/stamp" "$f"
done

"$MKFS" --quiet --tar=headerball "$WORK/file.img" "$WORK/hb" || fail "--tar=headerball from a file"
ours_extract "headerball from a file" "$WORK/file.img" "$WORK/expect"
"$MKFS" --quiet --tar=headerball "$WORK/pipe.img" < <(cat "$WORK/hb") || fail "--tar=headerball from a pipe"
ours_extract "headerball from a pipe" "$WORK/pipe.img" "$WORK/expect"
size=$(stat -c %s "$WORK/file.img")
if [ "$size" -lt 65536 ]; then pass "no data blocks: $size bytes for 5 MB of files"
else fail "the headerball image has $size bytes"; fi
"$MKFS" --quiet -U clear -T0 --tar=headerball "$WORK/p.img" "$WORK/hb" &&
	"$MKFS" --quiet -U clear -T0 --tar=headerball -zlz4hc "$WORK/z.img" "$WORK/hb" &&
	cmp -s "$WORK/z.img" "$WORK/p.img" && pass "-z changes nothing: there is no data" ||
	fail "-z changed a headerball image"
# a real tar read as a headerball is refused at its first data block, not imaged
expect_failure "a full tar is not a headerball" "header checksum|not a tar" \
	"$MKFS" --quiet --tar=headerball "$WORK/bad.img" "$WORK/full.tar"
[ ! -e "$WORK/bad.img" ] && pass "no image left" || fail "an image was left"

if [ -x "$ANCHOR" ]; then
	"$ANCHOR" --quiet --tar=headerball "$WORK/theirs.img" "$WORK/hb" >/dev/null 2>&1 ||
		fail "erofs-utils --tar=headerball failed"
	rm -rf "$WORK/t"
	"$FSCK" --extract="$WORK/t" "$WORK/theirs.img" >/dev/null || fail "our fsck on erofs-utils' headerball image"
	"$MANIFEST" "$WORK/t" | sed 1d > "$WORK/theirs.m"
	"$MANIFEST" "$WORK/expect" | sed 1d > "$WORK/ours.m"
	if diff -u "$WORK/ours.m" "$WORK/theirs.m" > "$WORK/m.diff"; then
		pass "erofs-utils 1.9.4 makes the same tree of the headerball (its root aside)"
	else fail "erofs-utils' headerball tree differs:"; head -20 "$WORK/m.diff" >&2; fi
else
	echo "skip: erofs-utils 1.9.4 not in ../shared/anchors"
fi
finish
