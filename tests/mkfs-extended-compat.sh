#!/bin/bash
# The -E words erofs-utils 1.9.4 has and scripts use (osbuild's enum,
# archiso's fragdedupe=inode, -Enosbcrc): each one's effect read back from
# the image bytes, the images checked by our fsck and, when ../shared has
# them, by erofs-utils' fsck (extracting and diffing the tree).
. "$(dirname "$0")/lib.sh"
command -v setfattr >/dev/null || { echo "$test_name: needs setfattr; skipped"; exit 77; }
require_root
REF_FSCK=${REF_FSCK:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/fsck.erofs}
REF_MKFS=${REF_MKFS:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs}

le() { # IMAGE OFFSET BYTES: an unsigned little-endian number
	od -An -tu"$3" -j "$2" -N "$3" "$1" | tr -d ' '
}
nid_of() { # IMAGE PATH
	"$top_builddir/dump/dump.erofs" --path="$2" "$1" | sed -n 's/^NID: \([0-9]*\).*/\1/p'
}
inode_at() { # IMAGE NID: byte offset of the inode (meta_blkaddr from the superblock)
	echo $(( ($(le "$1" $((1024 + 0x28)) 4) << $(le "$1" $((1024 + 0x0C)) 1)) + 32 * $2 ))
}
checked() { # LABEL IMAGE SOURCE: our fsck extracts SOURCE; erofs-utils' fsck agrees
	ours_extract "$1" "$2" "$3"
	if [ -x "$REF_FSCK" ]; then
		rm -rf "$WORK/ref"
		if "$REF_FSCK" --extract="$WORK/ref" "$2" >"$WORK/ref.log" 2>&1 &&
		   diff -r "$3" "$WORK/ref" >/dev/null; then
			pass "$1: erofs-utils' fsck extracts the same tree"
		else
			fail "$1: erofs-utils' fsck: $(tail -1 "$WORK/ref.log")"
		fi
		rm -rf "$WORK/ref"
	fi
}

src=$WORK/src
mkdir -p "$src/d"
head -c 100000 /dev/urandom >"$src/rand"
cp "$src/rand" "$src/d/rand-again"
head -c 50000 /dev/urandom >"$src/other"
seq 1 20000 >"$src/d/text"
echo small >"$src/small"
# a file with one block four times over: chunk-based with --chunksize
head -c 4096 /dev/urandom >"$WORK/block"
{ cat "$WORK/block" "$WORK/block" "$WORK/block" "$WORK/block"; head -c 9000 /dev/urandom; } >"$src/chunky"
find "$src" -exec touch -h -d @0 {} +	# -T0 below: the times read back as they are

# nosbcrc: no SB_CHKSUM bit and a zero checksum field; otherwise the same bytes
"$MKFS" --quiet -U clear -T0 "$WORK/crc.img" "$src"
"$MKFS" --quiet -U clear -T0 -E nosbcrc "$WORK/nocrc.img" "$src"
[ $(($(le "$WORK/crc.img" 1032 4) & 1)) = 1 ] && [ $(($(le "$WORK/nocrc.img" 1032 4) & 1)) = 0 ] &&
	[ "$(le "$WORK/nocrc.img" 1028 4)" = 0 ] && pass "-E nosbcrc: no sb_csum, checksum field 0" ||
	fail "-E nosbcrc: compat $(le "$WORK/nocrc.img" 1032 4), checksum $(le "$WORK/nocrc.img" 1028 4)"
cmp -s <(head -c 1028 "$WORK/crc.img") <(head -c 1028 "$WORK/nocrc.img") &&
	cmp -s <(tail -c +1037 "$WORK/crc.img") <(tail -c +1037 "$WORK/nocrc.img") &&
	pass "-E nosbcrc: nothing else differs" || fail "-E nosbcrc: other bytes differ"
checked nosbcrc "$WORK/nocrc.img" "$src"

# force-chunk-indexes: 8-byte chunk indexes (format bit 0x20), device 0,
# where chunk-based files have 4-byte block maps by default
"$MKFS" --quiet -U clear -T0 --chunksize=4096 "$WORK/map.img" "$src"
"$MKFS" --quiet -U clear -T0 --chunksize=4096 -E force-chunk-indexes "$WORK/idx.img" "$src"
chunk_form() { # IMAGE: "LAYOUT FORMAT" of /chunky (i_format's layout, i_u's chunk format)
	local at
	at=$(inode_at "$1" "$(nid_of "$1" /chunky)")
	echo "$(( ($(le "$1" "$at" 2) >> 1) & 7 )) $(le "$1" $((at + 16)) 2)"
}
read -r map_layout map_format < <(chunk_form "$WORK/map.img")
read -r idx_layout idx_format < <(chunk_form "$WORK/idx.img")
[ "$map_layout" = 4 ] && [ "$idx_layout" = 4 ] && [ $((map_format & 0x20)) = 0 ] &&
	[ $((idx_format & 0x20)) = 32 ] &&
	pass "-E force-chunk-indexes: chunk format 0x$(printf %x "$idx_format"), block maps without it" ||
	fail "-E force-chunk-indexes: layouts $map_layout/$idx_layout, formats $map_format/$idx_format"
checked force-chunk-indexes "$WORK/idx.img" "$src"
"$MKFS" --quiet -U clear -T0 --chunksize=4096 -E force-inode-blockmap "$WORK/bm.img" "$src"
cmp -s "$WORK/map.img" "$WORK/bm.img" &&
	pass "-E force-inode-blockmap: block maps, as without it" ||
	fail "-E force-inode-blockmap changed the image"
rm -f "$WORK/refused.img"
expect_failure "-E force-inode-blockmap with --blobdev is refused" 'force-inode-blockmap.*--blobdev' \
	"$MKFS" --quiet --chunksize=4096 --blobdev="$WORK/blob" -E force-inode-blockmap \
	"$WORK/refused.img" "$src"
[ ! -e "$WORK/refused.img" ] && pass "refused: no image left" || fail "refused: an image was left"

# plain-xattr-prefixes: the long prefix table beside the superblock
# (COMPAT_PLAIN_XATTR_PFX) although a packed inode exists
for f in rand other d/text; do setfattr -n user.forge.test.${f//\//_} -v "value of $f" "$src/$f"; done
find "$src" -exec touch -h -d @0 {} +
"$MKFS" --quiet -U clear -T0 -zlz4hc -E fragments --xattr-prefix=user.forge.test. "$WORK/pfx.img" "$src"
"$MKFS" -U clear -T0 -zlz4hc -E fragments,plain-xattr-prefixes --xattr-prefix=user.forge.test. \
	"$WORK/plain.img" "$src" >"$WORK/plain.log"
[ $(($(le "$WORK/pfx.img" 1032 4) & 0x10)) = 0 ] && [ "$(le "$WORK/pfx.img" $((1024 + 0x5C)) 4)" = 0 ] &&
	[ $(($(le "$WORK/plain.img" 1032 4) & 0x10)) = 16 ] &&
	[ "$(le "$WORK/plain.img" $((1024 + 0x5C)) 4)" -gt 0 ] &&
	[ "$(le "$WORK/plain.img" $((1024 + 0x60)) 8)" != 0 ] &&
	pass "-E plain-xattr-prefixes: the table outside the packed inode" ||
	fail "-E plain-xattr-prefixes: compat $(le "$WORK/plain.img" 1032 4), start $(le "$WORK/plain.img" $((1024 + 0x5C)) 4)"
grep -q 'needs Linux 6.17 (long xattr prefixes outside the packed inode)' "$WORK/plain.log" &&
	pass "-E plain-xattr-prefixes: the summary says Linux 6.17" ||
	fail "-E plain-xattr-prefixes: $(grep needs "$WORK/plain.log")"
expect_failure "--max-kernel=6.12 refuses -E plain-xattr-prefixes" 'plain-xattr-prefixes' \
	"$MKFS" --quiet --max-kernel=6.12 -zlz4hc -E fragments,plain-xattr-prefixes \
	--xattr-prefix=user.forge.test. "$WORK/refused.img" "$src"
checked plain-xattr-prefixes "$WORK/plain.img" "$src"

# fragdedupe: files ending alike (a shared ending, or a whole file equal to
# another's end) store that ending once with full (the default), only whole
# equal files with inode, nothing twice-used with ^fragdedupe
fsrc=$WORK/fsrc
mkdir -p "$fsrc"
seq 100000 130000 >"$WORK/common"
for i in $(seq 1 12); do
	{ seq 1 $((i * 500)); cat "$WORK/common"; } >"$fsrc/long$i"
	tail -c $((i * 1000)) "$WORK/common" >"$fsrc/end$i"
done
find "$fsrc" -exec touch -h -d @0 {} +
for mode in "" ",fragdedupe" ",fragdedupe=full" ",fragdedupe=inode" ",^fragdedupe"; do
	"$MKFS" --quiet -U clear -T0 -zlz4hc -E all-fragments$mode "$WORK/fd$mode.img" "$fsrc"
done
full=$(stat -c %s "$WORK/fd.img") inode=$(stat -c %s "$WORK/fd,fragdedupe=inode.img")
off=$(stat -c %s "$WORK/fd,^fragdedupe.img")
cmp -s "$WORK/fd.img" "$WORK/fd,fragdedupe.img" && cmp -s "$WORK/fd.img" "$WORK/fd,fragdedupe=full.img" &&
	pass "fragdedupe and fragdedupe=full are the default" || fail "fragdedupe=full is not the default"
[ "$full" -lt "$inode" ] && [ "$inode" -le "$off" ] &&
	pass "all-fragments: full $full < inode $inode <= ^fragdedupe $off bytes" ||
	fail "all-fragments: full $full, inode $inode, ^fragdedupe $off bytes"
for mode in "" ",fragdedupe=inode" ",^fragdedupe"; do
	checked "all-fragments$mode" "$WORK/fd$mode.img" "$fsrc"
done
"$MKFS" --quiet -U clear -T0 -zlz4hc -E all-fragments --workers=3 "$WORK/fd3.img" "$fsrc"
cmp -s "$WORK/fd.img" "$WORK/fd3.img" && pass "fragdedupe=full: the same image with --workers=3" ||
	fail "fragdedupe=full: the image depends on --workers"
# fragdedupe=full cuts a fragment that shares only its end with a stored one
# further back than the packed codec reaches (LZ4: 64 KiB): the head gets
# pclusters of its own, the end points into the stored fragment
ssrc=$WORK/ssrc
mkdir -p "$ssrc"
seq 1 60000 >"$ssrc/a-big"
{ head -c 5000 /dev/urandom; cat "$ssrc/a-big"; } >"$ssrc/b-shifted"
find "$ssrc" -exec touch -h -d @0 {} +
for mode in full inode; do
	"$MKFS" --quiet -U clear -T0 -zlz4hc -E all-fragments,fragdedupe=$mode "$WORK/cut-$mode.img" "$ssrc"
done
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
ext=$("$DUMP" --path=/b-shifted -e "$WORK/cut-full.img")
big=$(stat -c %s "$ssrc/a-big")
# the fragment is the last $big - k bytes of b-shifted, at the same distance
# from the packed data's a-big end: "N..END | LEN : ... # fragment at OFF"
frag=$(sed -n 's/^ *[0-9]*: *\([0-9]*\)\.\. *\([0-9]*\) *| *\([0-9]*\) .*# fragment at \([0-9]*\) .*/\3 \4/p' <<<"$ext")
aoff=$("$DUMP" --path=/a-big -e "$WORK/cut-full.img" | sed -n 's/.*# fragment at \([0-9]*\) .*/\1/p')
nz=$(grep -E '^ *[0-9]+:' <<<"$ext" | grep -vc 'fragment at')
if [ -n "$frag" ] && [ -n "$aoff" ] && [ "${frag% *}" -gt 300000 ] &&
   [ $((${frag#* } + ${frag% *})) -eq $((aoff + big)) ] && [ "$nz" -ge 1 ]; then
	pass "fragdedupe=full: b-shifted's last ${frag% *} bytes point at a-big's end, its head in $nz pcluster(s)"
else
	fail "fragdedupe=full: b-shifted not cut as expected (a-big at ${aoff:-?}): $(tail -4 <<<"$ext" | tr '\n' ' ')"
fi
cut_full=$(stat -c %s "$WORK/cut-full.img") cut_inode=$(stat -c %s "$WORK/cut-inode.img")
[ "$cut_full" -lt $((cut_inode * 6 / 10)) ] &&
	pass "fragdedupe=full: $cut_full bytes, fragdedupe=inode $cut_inode" ||
	fail "fragdedupe=full: $cut_full bytes, not under 0.6 of fragdedupe=inode's $cut_inode"
checked "fragdedupe=full cut" "$WORK/cut-full.img" "$ssrc"
"$MKFS" --quiet -U clear -T0 -zlz4hc -E all-fragments --workers=3 "$WORK/cut3.img" "$ssrc"
cmp -s "$WORK/cut-full.img" "$WORK/cut3.img" && pass "fragdedupe=full cut: the same image with --workers=3" ||
	fail "fragdedupe=full cut: the image depends on --workers"
# LZMA's window reaches the stored end: nothing is cut, the packed inode
# compresses the repeat itself
"$MKFS" --quiet -U clear -T0 -zlzma -E all-fragments "$WORK/cut-lzma.img" "$ssrc"
"$DUMP" --path=/b-shifted -e "$WORK/cut-lzma.img" | grep -q '1 extents found' &&
	pass "fragdedupe=full with LZMA: b-shifted stays a whole fragment" ||
	fail "fragdedupe=full with LZMA: b-shifted was cut"
# a file whose end is stored far back but whose twin was packed just before
# it (c-like0, ending differently): with 128 KiB packed pclusters LZ4
# matches the twin, so a cut would only add its head's block; with 4 KiB
# ones a pcluster holds too little to reach the twin, and the cut pays
asrc=$WORK/alike
mkdir -p "$asrc"
seq 1 4000 >"$WORK/tail-text"
head -c 5000 /dev/urandom >"$WORK/twin-head"
{ head -c 3000 /dev/urandom; cat "$WORK/tail-text"; } >"$asrc/a-old"
seq 500000 520000 >"$asrc/b-between"
{ cat "$WORK/twin-head" "$WORK/tail-text"; echo zz; } >"$asrc/c-like0"
cat "$WORK/twin-head" "$WORK/tail-text" >"$asrc/c-like1"
find "$asrc" -exec touch -h -d @0 {} +
for c in 131072 4096; do
	for mode in full inode; do
		"$MKFS" --quiet -U clear -T0 -zlz4hc -C$c -E all-fragments,fragdedupe=$mode \
			"$WORK/alike-$c-$mode.img" "$asrc"
	done
	full=$(stat -c %s "$WORK/alike-$c-full.img") inode=$(stat -c %s "$WORK/alike-$c-inode.img")
	n=$("$DUMP" --path=/c-like1 -e "$WORK/alike-$c-full.img" | sed -n 's/.*: \([0-9]*\) extents found/\1/p')
	if [ "$c" = 131072 ]; then
		[ "$n" = 1 ] && [ "$full" -le "$inode" ] &&
			pass "fragdedupe=full, -C$c: c-like1 stays whole beside its twin ($full bytes, inode $inode)" ||
			fail "fragdedupe=full, -C$c: c-like1 in ${n:-?} extents, $full bytes, inode $inode"
	else
		[ "${n:-0}" -gt 1 ] && [ "$full" -lt "$inode" ] &&
			pass "fragdedupe=full, -C$c: c-like1 cut ($full bytes, inode $inode)" ||
			fail "fragdedupe=full, -C$c: c-like1 in ${n:-?} extents, $full bytes, inode $inode"
	fi
done
checked "fragdedupe=full beside a twin" "$WORK/alike-4096-full.img" "$asrc"
# --zfeature-bits: bit n turns on erofs-utils' n-th -E word
for pair in "6 ztailpacking,fragments" "65 legacy-compress,48bit" "17 legacy-compress,dedupe" \
	    "40 all-fragments,fragdedupe"; do
	"$MKFS" --quiet -U clear -T0 -zlz4hc --zfeature-bits="${pair%% *}" "$WORK/zb.img" "$fsrc"
	"$MKFS" --quiet -U clear -T0 -zlz4hc -E "${pair#* }" "$WORK/ze.img" "$fsrc"
	cmp -s "$WORK/zb.img" "$WORK/ze.img" && pass "--zfeature-bits=${pair%% *} is -E ${pair#* }" ||
		fail "--zfeature-bits=${pair%% *} is not -E ${pair#* }"
done
rm -f "$WORK/refused.img"
expect_failure "--zfeature-bits=256 is refused" 'bit 8' \
	"$MKFS" --quiet -zlz4hc --zfeature-bits=256 "$WORK/refused.img" "$fsrc"
# against erofs-utils: -E fragments (tails) shares as much as it does
if [ -x "$REF_MKFS" ]; then
	for mode in "" ",^fragdedupe"; do
		"$MKFS" --quiet -U clear -T0 -zlz4hc -E fragments$mode "$WORK/ours.img" "$fsrc"
		"$REF_MKFS" --quiet -U clear -T0 -zlz4hc -E fragments$mode "$WORK/ref.img" "$fsrc"
		[ "$(stat -c %s "$WORK/ours.img")" -le "$(stat -c %s "$WORK/ref.img")" ] &&
			pass "-E fragments$mode: $(stat -c %s "$WORK/ours.img") bytes, erofs-utils $(stat -c %s "$WORK/ref.img")" ||
			fail "-E fragments$mode: $(stat -c %s "$WORK/ours.img") bytes, erofs-utils $(stat -c %s "$WORK/ref.img")"
	done
fi
finish
