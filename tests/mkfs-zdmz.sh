#!/bin/bash
# mkfs.erofs --zD (directory data compressed: each directory a whole
# fragment of the packed inode) and --MZ[=i|id] (inode records, and with d
# the directories' blocks, in a metadata zone of their own at the end, as
# erofs-utils 1.9.4 writes them): round trips of the test tree and of a
# tree of many directories (and gen-tree.sh's big one) through our fsck.erofs,
# dump.erofs and erofs-utils 1.9.4's fsck.erofs (skipped without it);
# erofs-utils' own --zD / --MZ images through ours; the fields each option
# fixes (feature bits, layouts, where the zone is); byte-identical images
# for --workers=1 and 2; refusal of bad values naming the option, with no
# image left; --max-kernel below what they need.
. "$(dirname "$0")/lib.sh"
require_root

# erofs-utils 1.9.4 from ../shared/anchors (the second reader's directory)
REF=$(dirname "$READER2_REF")
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
[ -x "$REF/mkfs.erofs" ] && [ "$READER2" = "$READER2_REF" ] && have_ref=1 || have_ref=0
[ "$have_ref" = 1 ] || echo "note: no erofs-utils 1.9.4 at $REF: its checks are skipped"
UUID=0f0e0d0c-0b0a-0908-0706-050403020100

src=$WORK/src
bash "$GEN_TREE" "$src" >/dev/null
rm -f "$src/sizes/sparse-100m"
# many directories besides gen-tree.sh's big one (big-dir: many blocks of entries)
for i in $(seq 1 60); do
	mkdir -p "$src/many/d$i/sub"
	printf '%s\n' "$i" >"$src/many/d$i/f"
done
last=/big-dir/$(ls "$src/big-dir" | tail -1)

le() { od -An -v -t "u$3" -j "$2" -N "$3" "$1" | tr -d ' \n'; }
sb=1024

# our_check LABEL IMAGE: our fsck.erofs extracts the source tree, our
# dump.erofs finds a file in the big directory
our_check() {
	ours_extract "$1" "$2" "$src"
	if "$DUMP" --path="$last" "$2" >"$WORK/dump.log" 2>&1 &&
	   "$DUMP" -s "$2" >/dev/null 2>&1; then
		pass "$1: our dump.erofs finds a file in the big directory"
	else
		fail "$1: our dump.erofs: $(tail -2 "$WORK/dump.log")"
	fi
}

# ref_check LABEL IMAGE: erofs-utils 1.9.4's fsck.erofs checks and extracts
# it (Debian's 1.5, the fallback second reader, predates fragments)
ref_check() {
	if [ "$have_ref" = 0 ]; then
		echo "skip: $1: no erofs-utils 1.9.4"
		return
	fi
	reader2_extract "$1" "$2" "$src"
}

# roundtrip LABEL OPTIONS...
roundtrip() {
	local label=$1 img=$WORK/$1.img
	shift
	if ! "$MKFS" --quiet -U "$UUID" "$@" "$img" "$src" >"$WORK/mkfs.log" 2>&1; then
		fail "$label: mkfs.erofs $*: $(tail -2 "$WORK/mkfs.log")"
		return 1
	fi
	our_check "$label" "$img"
	ref_check "$label" "$img"
}

# dir_layout IMAGE PATH: the directory's data layout (dump.erofs's "Layout:")
dir_layout() { "$DUMP" --path="$2" "$1" | sed -n 's/.*Layout: *\([0-9]*\).*/\1/p'; }

# --- --zD ---
roundtrip zd-plain   --zD
roundtrip zd-lz4hc   --zD -zlz4hc
roundtrip zd-lzma    --zD -zlzma -C65536 -Eall-fragments
roundtrip zd-frag    --zD -zlz4hc,12 -C16384 -Efragments,ztailpacking -Ededupe
roundtrip zd-zstd    --zD -zzstd -E48bit
roundtrip zd-deflate --zD -zdeflate -b 1024
roundtrip zd-mbox    --zD -m4096 -zlz4hc -Enoinline_data

img=$WORK/zd-lz4hc.img
incompat=$(le "$img" $((sb + 0x50)) 4)
[ $((incompat & 0x20)) -ne 0 ] && pass "zd: INCOMPAT_FRAGMENTS set" ||
	fail "zd: incompat $incompat without FRAGMENTS"
[ "$(le "$img" $((sb + 0x60)) 8)" != 0 ] && pass "zd: the superblock names the packed inode" ||
	fail "zd: no packed nid"
for d in / /big-dir /many/d7/sub; do
	l=$(dir_layout "$img" "$d")
	[ "$l" = 1 ] && pass "zd: $d is COMPRESSED_FULL" || fail "zd: $d has layout '$l', not 1"
done
# the map header: the fragment offset with bit 63 set, in the 8 bytes after the core
"$DUMP" --path=/big-dir "$img" >"$WORK/big-dir.txt"
nid=$(sed -n 's/^NID: *\([0-9]*\).*/\1/p' "$WORK/big-dir.txt")
isize=$(sed -n 's/^Inode size: *\([0-9]*\).*/\1/p' "$WORK/big-dir.txt")
meta=$(le "$img" $((sb + 0x28)) 4)
hdr7=$(le "$img" $((meta * 4096 + nid * 32 + isize + 7)) 1)
[ $((hdr7 & 0x80)) -ne 0 ] && pass "zd: /big-dir's map header has the whole-fragment bit" ||
	fail "zd: /big-dir's map header byte 7 is $hdr7"
img=$WORK/zd-plain.img
incompat=$(le "$img" $((sb + 0x50)) 4)
# FRAGMENTS, and 0-padding, without which Linux 7.x refuses compressed inodes
[ "$incompat" = 33 ] && pass "zd without -z: FRAGMENTS and ZERO_PADDING (the packed inode stored plain)" ||
	fail "zd without -z: incompat $incompat"
"$MKFS" --quiet -U "$UUID" -T 1700000000 --zD=0 "$WORK/zd0.img" "$src" >/dev/null 2>&1
[ "$(dir_layout "$WORK/zd0.img" /big-dir)" != 1 ] && [ "$(le "$WORK/zd0.img" $((sb + 0x50)) 4)" = 0 ] &&
	pass "--zD=0: directories stored plain" || fail "--zD=0 compressed directories"

# --- --MZ ---
roundtrip mz-i       --MZ=i
roundtrip mz-id      --MZ=id
roundtrip mz-bare    --MZ
roundtrip mz-zd      --MZ=id --zD -zlz4hc -Eztailpacking
roundtrip mz-48bit   --MZ=i -E48bit -zlzma
roundtrip mz-xattrs  --MZ=id -x1

for label in mz-i mz-id; do
	img=$WORK/$label.img
	meta=$(le "$img" $((sb + 0x28)) 4)
	root=$(le "$img" $((sb + 0x0e)) 2)
	blocks=$(le "$img" $((sb + 0x24)) 4)
	# erofs-utils 1.9.4: meta_blkaddr is the block before the zone, so the
	# root, first in the zone, has a block's worth of slots as its nid
	[ "$root" = 128 ] && pass "$label: root nid 128, first in the zone" ||
		fail "$label: root nid $root"
	[ "$(le "$img" $((sb + 0x50)) 4)" = 0 ] &&
		pass "$label: no feature bit" || fail "$label: incompat bits set"
	[ "$meta" -ge 1 ] && [ "$meta" -lt "$blocks" ] &&
		pass "$label: meta_blkaddr $meta inside the image ($blocks blocks)" ||
		fail "$label: meta_blkaddr $meta, $blocks blocks"
	# nothing beside the superblock: block 0 is zero after it
	if [ "$(dd if="$img" bs=1 skip=2048 count=2048 2>/dev/null | tr -d '\0' | wc -c)" = 0 ]; then
		pass "$label: no inode beside the superblock"
	else
		fail "$label: block 0 holds more than the superblock"
	fi
done
mi=$(le "$WORK/mz-i.img" $((sb + 0x28)) 4)
mid=$(le "$WORK/mz-id.img" $((sb + 0x28)) 4)
# with d, the directories' blocks follow the records in the zone, which
# then starts before them (erofs-utils' --MZ=id: meta_blkaddr 0 on a small tree)
[ "$mid" -lt "$mi" ] && pass "mz-id: the zone starts before the directories' blocks ($mid < $mi)" ||
	fail "mz-id: meta_blkaddr $mid, --MZ=i $mi"
cmp -s "$WORK/mz-id.img" "$WORK/mz-bare.img" && pass "bare --MZ is --MZ=id" ||
	fail "bare --MZ differs from --MZ=id"
"$MKFS" --quiet -U "$UUID" -T 1700000000 --MZ=0 "$WORK/mz0.img" "$src" >/dev/null 2>&1
"$MKFS" --quiet -U "$UUID" -T 1700000000 "$WORK/plain.img" "$src" >/dev/null 2>&1
cmp -s "$WORK/mz0.img" "$WORK/plain.img" && pass "--MZ=0: the default image" ||
	fail "--MZ=0 changes the image"

# --- --incremental: a layer added to a --zD / --MZ image, with them again ---
up=$WORK/up
mkdir -p "$up/newdir" "$up/big-dir"
printf 'new\n' >"$up/newdir/f"
: >"$up/big-dir/entry-added"
cp -a "$src" "$WORK/merged"
cp -a "$up/." "$WORK/merged/"
for opt in "--zD -zlz4hc" "--MZ=id" "--zD --MZ=i"; do
	img=$WORK/inc.img
	"$MKFS" --quiet -U "$UUID" $opt "$img" "$src" >/dev/null 2>&1 || fail "incremental $opt: base failed"
	if ! "$MKFS" --quiet --incremental $opt "$img" "$up" >"$WORK/mkfs.log" 2>&1; then
		fail "incremental $opt: $(tail -2 "$WORK/mkfs.log")"
		continue
	fi
	ours_extract "incremental $opt" "$img" "$WORK/merged"
	[ "$have_ref" = 1 ] && reader2_extract "incremental $opt" "$img" "$WORK/merged"
done

# --- the same bytes for every --workers ---
for opt in "--zD -zlz4hc -Efragments" "--MZ=id --zD -zlzma"; do
	"$MKFS" --quiet -U "$UUID" -T 1700000000 --workers=1 $opt "$WORK/w1.img" "$src" >/dev/null 2>&1
	"$MKFS" --quiet -U "$UUID" -T 1700000000 --workers=2 $opt "$WORK/w2.img" "$src" >/dev/null 2>&1
	cmp -s "$WORK/w1.img" "$WORK/w2.img" && pass "$opt: --workers=1 and 2 give the same bytes" ||
		fail "$opt: --workers changes the image"
done

# --- erofs-utils 1.9.4's own images through our readers ---
if [ "$have_ref" = 1 ]; then
	for opt in "--zD=0" "--zD=0 -zlz4hc" "--MZ=i" "--MZ=id" "--zD=0 --MZ=id -zlzma"; do
		# (its parser reads an explicit --zD value inverted: =0 compresses)
		img=$WORK/theirs.img
		if "$REF/mkfs.erofs" --quiet $opt "$img" "$src" >/dev/null 2>&1; then
			our_check "theirs $opt" "$img"
		else
			fail "erofs-utils mkfs $opt failed"
		fi
	done
fi

# --- bad values, named; nothing left behind ---
for arg in --zD=2 --zD=yes --MZ=x --MZ=d --MZ=ix; do
	rm -f "$WORK/no.img"
	expect_failure "refuse $arg" "error: $arg:" "$MKFS" "$arg" "$WORK/no.img" "$src"
	[ ! -e "$WORK/no.img" ] && pass "refuse $arg: no image" || fail "refuse $arg: image left"
done
"$MKFS" --quiet --MZ=di "$WORK/di.img" "$src" >/dev/null 2>&1 &&
	pass "--MZ=di: the letters in any order" || fail "--MZ=di refused"
expect_failure "max-kernel 5.15 --zD" '--zD: fragments needs Linux 6.1' \
	"$MKFS" --max-kernel=5.15 --zD "$WORK/no.img" "$src"
expect_failure "max-kernel 6.1 --zD -b1024" '--zD with -b 1024: .* needs Linux 6.8' \
	"$MKFS" --max-kernel=6.1 --zD -b 1024 "$WORK/no.img" "$src"
"$MKFS" --quiet --max-kernel=6.1 --zD --MZ=id "$WORK/k.img" "$src" >/dev/null 2>&1 &&
	pass "--max-kernel=6.1 takes --zD --MZ=id" || fail "--max-kernel=6.1 refuses --zD --MZ=id"

finish
