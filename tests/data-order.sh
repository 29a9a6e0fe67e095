#!/bin/bash
# data-order.sh: the order files' data is written in, for every source that
# hands files over (a directory, a tar, a rebuild from an image): depth
# first, a directory's own files in name order before its subdirectories'
# subtrees.  Neighbours in a directory tend to look alike, so keeping a
# subtree together is what lets the packed inode (-Efragments) and each
# pcluster compress them together; breadth first put a directory's
# subdirectories after all of its cousins.  Each file here is 8 KiB of
# random bytes in an uncompressed image, so the block order is the order
# the files were handed over in.  Then a -Efragments image of a tree where
# every file's twin sits in a subdirectory of its own directory must pack
# the two side by side: breadth first put them a whole level apart.
. "$(dirname "$0")/lib.sh"

DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
S=$WORK/src
# expected order: the root's files, then a (its files, then a/sub, a/sub2), then b
ORDER="top z-top a/x a/y a/sub/z a/sub/deeper/w a/sub2/v b/y b/c/u"
mkdir -p "$S/a/sub/deeper" "$S/a/sub2" "$S/b/c"
for f in $ORDER; do
	head -c 8192 /dev/urandom > "$S/$f"
done
ln "$S/a/x" "$S/b/c/hardlink-to-a-x"	# met first under a: no second copy, no move

# check_order LABEL IMAGE: the files' first blocks rise in ORDER's order
check_order() {
	local label=$1 img=$2 prev=-1 f phys
	for f in $ORDER; do
		phys=$("$DUMP" -e --path="/$f" "$img" | awk '$1 == "0:" { split($7, p, "\\."); print p[1] }')
		if ! [[ "$phys" =~ ^[0-9]+$ ]]; then
			fail "$label: no extent read for /$f"
			return
		fi
		if [ "$phys" -le "$prev" ]; then
			fail "$label: /$f at $phys, not after the file before it ($prev): not depth first"
			return
		fi
		prev=$phys
	done
	pass "$label: data depth first ($ORDER)"
}

"$MKFS" --quiet -T0 "$WORK/dir.img" "$S"
check_order "directory" "$WORK/dir.img"

(cd "$S" && tar --sort=name --format=pax -cf "$WORK/src.tar" .)
"$MKFS" --quiet -T0 --tar=f "$WORK/tar.img" "$WORK/src.tar"
check_order "tar" "$WORK/tar.img"

"$MKFS" --quiet -T0 --clean=data "$WORK/rebuilt.img" "$WORK/dir.img"
check_order "rebuild --clean=data" "$WORK/rebuilt.img"

# twins: d$i/f and d$i/t/f are the same 2 KiB of random bytes, then 2 KiB of
# their own zeros and text, so each goes to the packed inode alone too.
# Breadth first packs all d*/f, then all d*/t/f, 36 files apart, beyond
# the reach of a 16 KiB packed pcluster; depth first packs each pair side
# by side, where the second costs a match.
T=$WORK/twins
for i in $(seq 10 45); do
	mkdir -p "$T/d$i/t"
	head -c 2048 /dev/urandom > "$WORK/common"
	{ cat "$WORK/common"; head -c 2000 /dev/zero; printf 'f%05d' "$i" ; } > "$T/d$i/f"
	{ cat "$WORK/common"; head -c 2000 /dev/zero; printf 't%05d' "$i" ; } > "$T/d$i/t/f"
done
"$MKFS" --quiet -zlz4hc -C16384 -Efragments "$WORK/twins.img" "$T"
"$FSCK" --extract="$WORK/twins.out" "$WORK/twins.img" >/dev/null
same_manifest "twins -Efragments" "$T" "$WORK/twins.out"
size=$(stat -c %s "$WORK/twins.img")
# 36 pairs of 2 KiB random twins: about 72 KiB once, 144 KiB twice
if [ "$size" -le $((120 * 1024)) ]; then
	pass "twins -Efragments: $size bytes, each twin packed by its pair"
else
	fail "twins -Efragments: $size bytes, over 120 KiB: the twins were not packed side by side"
fi
finish
