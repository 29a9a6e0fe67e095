#!/bin/bash
# fsck.erofs on damaged compressed images: each case edits one field of a
# compressed file's map header, lcluster index or pcluster (located by
# parsing the image here) and expects exit status 1 with a message naming
# the path, the nid and the problem.  Then random damage to the index and
# the compressed data: never a crash or a hang, and under valgrind (when
# installed) no memory error.
. "$(dirname "$0")/fsck-common.sh"

[ -x "$OUR_MKFS" ] || skip "our mkfs.erofs is not built"

SRC=$WORK/src
mkdir -p "$SRC/d"
python3 - "$SRC" <<'EOF' || { fail "cannot build the source tree"; finish; }
import os, random, sys
rnd = random.Random(99)
words = [b"alpha", b"beta", b"gamma", b"delta", b"erofs", b"\n"]
def text(n):
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words) + b" "
    return bytes(out[:n])
d = sys.argv[1]
open(os.path.join(d, "text"), "wb").write(text(200000))
mixed = bytearray()
for i in range(12):
    mixed += rnd.randbytes(rnd.randint(3000, 9000)) + text(rnd.randint(5000, 20000))
open(os.path.join(d, "mixed"), "wb").write(bytes(mixed) + text(30000))
open(os.path.join(d, "d", "small"), "wb").write(text(9000))
open(os.path.join(d, "plain"), "wb").write(b"not compressed")
EOF

# FULL indexes are edited here: 8 bytes an lcluster, easy to find
BIG=$WORK/big.img	# big pclusters (CBLKCNT entries)
ONE=$WORK/one.img	# one-block pclusters
CMP=$WORK/compact.img	# compact index, big pclusters
ZT=$WORK/ztail.img	# compact index, inline tails
"$OUR_MKFS" --quiet -T 1000 -z lz4hc -C 16384 -E legacy-compress "$BIG" "$SRC" &&
"$OUR_MKFS" --quiet -T 1000 -z lz4 -E legacy-compress "$ONE" "$SRC" &&
"$OUR_MKFS" --quiet -T 1000 -z lz4hc -C 16384 "$CMP" "$SRC" &&
"$OUR_MKFS" --quiet -T 1000 -z lz4hc -E ztailpacking "$ZT" "$SRC" || { fail "mkfs"; finish; }
for img in "$BIG" "$ONE" "$CMP" "$ZT"; do
	"$FSCK" "$img" >"$WORK/base.log" 2>&1 ||
		{ fail "base image $(basename "$img") is not clean: $(head -2 "$WORK/base.log")"; finish; }
done

# zinode NID: sets IO (inode), HDR (map header), IDX (first full index entry), NLC
zinode() {
	local fmt isize icount xs size
	IO=$(ino_off "$1")
	fmt=$(rd "$IO" 2)
	isize=$(((fmt & 1) ? 64 : 32))
	icount=$(rd $((IO + 2)) 2)
	xs=$((icount ? 12 + 4 * (icount - 1) : 0))
	if [ $((fmt & 1)) -eq 1 ]; then size=$(rd $((IO + 8)) 8); else size=$(rd $((IO + 8)) 4); fi
	HDR=$((((IO + isize + xs) + 7) / 8 * 8))
	IDX=$((HDR + 16))
	NLC=$(((size + 4095) / 4096))
	ZLAYOUT=$(((fmt >> 1) & 7))
}
ent() { echo $((IDX + 8 * $1)); }			# full index entry of lcluster N
etype() { echo $(($(rd "$(ent "$1")" 2) & 3)); }
# first lcluster after FROM with type T (0 plain, 1 head1, 2 nonhead)
find_type() {
	local l
	for ((l = $2; l < NLC; l++)); do
		[ "$(etype "$l")" -eq "$1" ] && { echo "$l"; return 0; }
	done
	return 1
}
# a nonhead that is not a block count entry, after FROM
find_plain_nonhead() {
	local l
	for ((l = $1; l < NLC; l++)); do
		[ "$(etype "$l")" -eq 2 ] && [ $(($(rd $(($(ent "$l") + 4)) 2) & 0x800)) -eq 0 ] &&
			{ echo "$l"; return 0; }
	done
	return 1
}

case_no=0
# zcorrupt LABEL BASE EDIT WORDS...: fresh copy, edit, expect rc 1 + words
# (with XFSCK=--extract=DIR set, the extraction must fail the same way)
zcorrupt() {
	local label=$1 base=$2 edit=$3 rc log args=()
	shift 3
	case_no=$((case_no + 1))
	IMG=$WORK/case$case_no.img
	log=$WORK/case$case_no.log
	cp "$base" "$IMG"
	sb_nocsum
	$edit
	[ -n "${XFSCK:-}" ] && args=("$XFSCK" --overwrite)
	timeout 30 "$FSCK" "${args[@]}" "$IMG" >"$log" 2>&1
	rc=$?
	fsck_failed_as "$label" "$label: $(grep -m1 'error: /' "$log")" "$rc" "$log" "$@"
}

# ---- full index, big pclusters ----
IMG=$BIG
N_TEXT=$(nid_path /text)
N_MIXED=$(nid_path /mixed)
[ -n "$N_TEXT" ] && [ -n "$N_MIXED" ] || { fail "cannot locate the files"; finish; }
zinode "$N_TEXT"
[ "$ZLAYOUT" -eq 1 ] || { fail "/text is not a full-index compressed file (layout $ZLAYOUT)"; finish; }
H1=$(find_type 1 1)	# a head after lcluster 0
NH=$(find_plain_nonhead 2)
CB=$(($(find_type 1 0) + 1))	# the block count entry after the first head
LASTNH=$((NLC - 1))
P0=$(rd $(($(ent 0) + 4)) 4)	# the first pcluster's block
for v in H1 NH CB P0; do [ -n "${!v}" ] || { fail "no $v in /text"; finish; }; done
T="/text (nid $N_TEXT)"

e_type0() { wr "$(ent 0)" 2 2; wr $(($(ent 0) + 4)) 4 $((1 | 1 << 16)); }
zcorrupt "lcluster 0 a non-head" "$BIG" e_type0 "$T: lcluster 0: delta[0] 1 points before lcluster 0"
e_plain() { wr "$(ent 0)" 2 0; }
zcorrupt "compressed head typed plain" "$BIG" e_plain "$T: lcluster 0: uncompressed extent continues into lcluster 1"
e_d0zero() { wr $(($(ent "$NH") + 4)) 2 0; }
zcorrupt "delta[0] 0" "$BIG" e_d0zero "$T: lcluster $NH: delta[0] 0 does not lead back to its head"
e_d0far() { wr $(($(ent "$LASTNH") + 4)) 2 2000; }
zcorrupt "delta[0] before lcluster 0" "$BIG" e_d0far "$T: lcluster $LASTNH:"
e_d1zero() { wr $(($(ent "$NH") + 6)) 2 0; }
zcorrupt "delta[1] 0" "$BIG" e_d1zero "$T: lcluster $NH: delta[1] is 0"
e_d1past() { wr $(($(ent "$NH") + 6)) 2 2000; }
if [ "$(find_type 1 "$NH")" ]; then
	zcorrupt "delta[1] past the next head" "$BIG" e_d1past "$T: lcluster $NH: delta[1] 2000 jumps past the next head"
fi
e_cbmiss() { wr $(($(ent "$CB") + 4)) 2 1; }
zcorrupt "big pcluster without its block count" "$BIG" e_cbmiss "$T: lcluster $CB: no block count (CBLKCNT) after the head of a big pcluster"
e_cbzero() { wr $(($(ent "$CB") + 4)) 2 0x800; }
zcorrupt "block count 0" "$BIG" e_cbzero "$T: lcluster $CB: block count 0"
e_cbhuge() { wr $(($(ent "$CB") + 4)) 2 $((0x800 | 100)); }
zcorrupt "block count above the sb limit" "$BIG" e_cbhuge "$T: lcluster $((CB - 1)): pcluster of 100 blocks (the superblock allows 4)"
e_blk() { wr $(($(ent "$H1") + 4)) 4 99999; }
zcorrupt "blkaddr beyond the image" "$BIG" e_blk "$T: lcluster $H1: pcluster at block 99999" "beyond the end of the image"
e_blk0() { wr $(($(ent "$H1") + 4)) 4 0; }
zcorrupt "blkaddr 0 (the superblock)" "$BIG" e_blk0 "$T: data at block 0 overlaps the superblock"
e_cofs() { wr $(($(ent "$H1") + 2)) 2 4096; }
zcorrupt "clusterofs 4096" "$BIG" e_cofs "$T: lcluster $H1: clusterofs 4096 beyond the lcluster (4096 bytes)"
e_cofs0() { wr $(($(ent 0) + 2)) 2 100; }
zcorrupt "first extent not at byte 0" "$BIG" e_cofs0 "$T: lcluster 0: the first extent starts at byte 100, not 0"
e_hdr_alg() { wr $((HDR + 6)) 1 7; }
zcorrupt "unknown algorithm in the map header" "$BIG" e_hdr_alg "$T: unknown HEAD1 compression algorithm 7"
e_hdr_ztail() { wr $((HDR + 4)) 2 $((0x8 | 0x6)); }
zcorrupt "ztailpacking advise without inline bytes" "$BIG" e_hdr_ztail "$T: inline tail pcluster (ztailpacking) of 0 bytes"
e_hdr_frag() { wr $((HDR + 7)) 1 0x80; }
zcorrupt "whole-file fragment" "$BIG" e_hdr_frag "$T: the whole file is a fragment of the packed inode"
e_hdr_lcl() { wr $((HDR + 7)) 1 2; }
zcorrupt "lclusters of 4 blocks" "$BIG" e_hdr_lcl "$T: lclusters of 4 blocks are not supported"
# the pcluster itself
e_lz4() { python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 37 + 11) % 256 for i in range(3000)))' |
	dd of="$IMG" bs=1 seek=$((P0 * 4096 + 4096 * 4 - 3000)) conv=notrunc status=none; }
zcorrupt "garbage LZ4 stream" "$BIG" e_lz4 "$T: pcluster at block $P0:"
XFSCK=--extract=$WORK/x zcorrupt "garbage LZ4 stream, extracting" "$BIG" e_lz4 "$T: pcluster at block $P0:"
# a file that fails half-way is not left behind, empty or cut short
P1=$(rd $(($(ent "$H1") + 4)) 4)
e_lz4_later() { python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 37 + 11) % 256 for i in range(4096)))' |
	dd of="$IMG" bs=4096 seek="$P1" conv=notrunc status=none; }
rm -rf "$WORK/x"
XFSCK=--extract=$WORK/x zcorrupt "a later pcluster damaged, extracting" "$BIG" e_lz4_later \
	"$T: pcluster at block $P1:"
if [ ! -e "$WORK/x/text" ] && grep -q "/text: not extracted (the partial file was removed)" "$WORK/case$case_no.log" &&
	cmp -s "$WORK/x/mixed" "$SRC/mixed" && cmp -s "$WORK/x/d/small" "$SRC/d/small"; then
	pass "the damaged file is not left in the target; the others are extracted"
else
	fail "after a failed extraction: $(ls -l "$WORK/x" 2>&1 | tr '\n' ' ')"
fi
e_zero() { dd if=/dev/zero of="$IMG" bs=4096 seek="$P0" count=4 conv=notrunc status=none; }
zcorrupt "all-zero pcluster" "$BIG" e_zero "$T: pcluster at block $P0: its first block is all zeros"
e_short() { # the stream's last literal dropped: decodes short or fails
	dd if="$IMG" of="$WORK/pc" bs=4096 skip="$P0" count=4 status=none
	{ head -c 1 /dev/zero; head -c $((4 * 4096 - 1)) "$WORK/pc"; } |
		dd of="$IMG" bs=4096 seek="$P0" conv=notrunc status=none
}
zcorrupt "LZ4 stream cut short" "$BIG" e_short "$T: pcluster at block $P0:"
# truncation: the superblock's block count first, then a count that leaves
# the pclusters outside the filesystem
e_trunc() { truncate -s $(($(stat -c %s "$IMG") / 2)) "$IMG"; }
zcorrupt "truncated image" "$BIG" e_trunc "image is truncated"
e_trunc_sb() {
	local half=$(($(stat -c %s "$IMG") / 4096 / 2))
	truncate -s $((half * 4096)) "$IMG"
	wr $((1024 + 0x24)) 4 "$half"
}
zcorrupt "pclusters past the block count" "$BIG" e_trunc_sb "beyond the end of the image"
# superblock compression config
e_cfg_short() { wr $((1024 + 128)) 2 4; }
zcorrupt "short LZ4 config record" "$BIG" e_cfg_short "superblock: LZ4 config of 4 bytes (want 14)"
e_cfg_blks() { wr $((1024 + 128 + 4)) 2 2; }
zcorrupt "pcluster above the configured limit" "$BIG" e_cfg_blks "$T: lcluster 0: pcluster of 4 blocks (the superblock allows 2)"
e_cfg_algs() { wr $((1024 + 0x54)) 2 0x11; }
zcorrupt "an unknown algorithm in the bitmap" "$BIG" e_cfg_algs \
	"superblock: unsupported compression algorithms: unknown bits 0x10"
# without big pcluster, ztailpacking or fragments in the superblock, the
# kernel ignores the map header of full indexes: then CBLKCNT is corrupt
e_nobig() { wr $((1024 + 0x50)) 4 1; wr $((1024 + 0x54)) 2 0; }
zcorrupt "big pclusters without the sb feature (full index)" "$BIG" e_nobig "$T: lcluster 1: block count (CBLKCNT) without big pclusters"
e_alg2() { wr "$(ent 0)" 2 3; wr $((HDR + 6)) 1 0x10; }
zcorrupt "HEAD2 with an algorithm the sb lacks" "$BIG" e_alg2 "$T: lcluster 0: HEAD2 extent with algorithm 1, which the superblock does not list (0x1)"

# ---- full index, one-block pclusters ----
IMG=$ONE
N_TEXT1=$(nid_path /text)
zinode "$N_TEXT1"
NH1=$(find_plain_nonhead 1)
e_cbnobig() { wr $(($(ent "$NH1") + 4)) 2 $((0x800 | 2)); }
zcorrupt "CBLKCNT without big pclusters" "$ONE" e_cbnobig "/text (nid $N_TEXT1): lcluster $NH1: block count (CBLKCNT) without big pclusters"

# ---- compact index ----
IMG=$CMP
N_TEXTC=$(nid_path /text)
zinode "$N_TEXTC"
[ "$ZLAYOUT" -eq 3 ] || { fail "/text is not a compact-index file (layout $ZLAYOUT)"; finish; }
EBASE=$((HDR + 8))
N0=$(((32 - EBASE % 32) / 4 % 8))
e_cbase() { wr $((EBASE + (N0 ? 4 : 28))) 4 0x7FFFFFF0; }
zcorrupt "compact: pack base beyond the image" "$CMP" e_cbase "/text (nid $N_TEXTC): lcluster 0: pcluster at block" "beyond the end of the image"
e_cwipe() { dd if=/dev/zero of="$IMG" bs=1 seek="$EBASE" count=64 conv=notrunc status=none; }
zcorrupt "compact: zeroed packs" "$CMP" e_cwipe "/text (nid $N_TEXTC):"
e_cnonhead() { dd if=/dev/zero of="$IMG" bs=1 seek="$EBASE" count=64 conv=notrunc status=none
	wr "$EBASE" 2 $((2 << 12 | 5)); }
zcorrupt "compact: lcluster 0 a non-head" "$CMP" e_cnonhead "/text (nid $N_TEXTC): lcluster 0: delta[0] 5 points before lcluster 0"
e_chalf() { wr $((HDR + 4)) 2 $((0x1 | 0x2)); }
zcorrupt "compact: one big pcluster bit" "$CMP" e_chalf "/text (nid $N_TEXTC): compact index with only one of the two big pcluster bits"
e_cnobig() { wr $((1024 + 0x50)) 4 1; wr $((1024 + 0x54)) 2 0; }
zcorrupt "compact: big pclusters without the sb feature" "$CMP" e_cnobig "/text (nid $N_TEXTC): big pclusters (advise 0x0007) without the superblock's big pcluster feature"
e_cisize() { wr $((IO + 8)) 4 0xFFFFFF00; }
zcorrupt "compact: i_size whose index runs past the image" "$CMP" e_cisize "/text (nid $N_TEXTC): lcluster index" "beyond the end of the image"

# ---- inline tails (ztailpacking) ----
IMG=$ZT
N_SMALL=$(nid_path /d/small)
zinode "$N_SMALL"
ISZ=$(rd $((HDR + 2)) 2)
if [ $(($(rd $((HDR + 4)) 2) & 8)) -ne 0 ] && [ "$ISZ" -gt 0 ]; then
	S="/d/small (nid $N_SMALL)"
	e_zt0() { wr $((HDR + 2)) 2 0; }
	zcorrupt "inline tail of 0 bytes" "$ZT" e_zt0 "$S: inline tail pcluster (ztailpacking) of 0 bytes"
	e_ztshort() { wr $((HDR + 2)) 2 $((ISZ - 1)); }
	zcorrupt "inline tail one byte short" "$ZT" e_ztshort "$S: inline tail pcluster at byte"
	e_ztjunk() { # non-zero junk over the whole inline tail
		python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 91 + 7) % 251 + 1 for i in range(int(sys.argv[1]))))' "$ISZ" |
			dd of="$IMG" bs=1 seek="$ZTAIL_AT" conv=notrunc status=none
	}
	# the tail sits at the end of the record: find it by the index size
	EB=$((HDR + 8)); N0=$(((32 - EB % 32) / 4 % 8)); ADV=$(rd $((HDR + 4)) 2)
	if [ "$NLC" -le "$N0" ]; then IB=$(((NLC + 1) / 2 * 8)); else
		N2=0; [ $((ADV & 1)) -eq 1 ] && N2=$(((NLC - N0) / 16 * 16))
		IB=$((N0 * 4 + N2 * 2 + (NLC - N0 - N2 + 1) / 2 * 8)); fi
	ZTAIL_AT=$((EB + IB))
	zcorrupt "garbage inline tail" "$ZT" e_ztjunk "$S: inline tail pcluster at byte $ZTAIL_AT: corrupt LZ4 data"
	e_ztbig() { wr $((HDR + 2)) 2 $((4096 - ZTAIL_AT % 4096 + 1)); }
	zcorrupt "inline tail crossing its block" "$ZT" e_ztbig "$S: inline tail pcluster of $((4096 - ZTAIL_AT % 4096 + 1)) bytes at offset $((ZTAIL_AT % 4096)) crosses a block boundary"
else
	fail "/d/small has no inline tail in the ztailpacking image"
fi

# ---- i_u, the compressed block count (st_blocks, all 6.1 uses it for) ----
# erofs-utils counts only the blocks a file adds: pclusters shared with an
# earlier file (-Ededupe, fragments) are not counted again, so a count
# below what the extents use, down to 0, is sound; one above is not
IMG=$BIG
zinode "$N_TEXT"
TEXT_BLOCKS=$(rd $((IO + 16)) 4)
for v in 0 $((TEXT_BLOCKS - 1)) $((TEXT_BLOCKS + 1)); do
	IMG=$WORK/iu.img
	cp "$BIG" "$IMG"
	sb_nocsum
	wr $((IO + 16)) 4 "$v"
	"$FSCK" "$IMG" >"$WORK/iu.log" 2>&1
	rc=$?
	if [ "$v" -le "$TEXT_BLOCKS" ]; then
		if [ "$rc" -eq 0 ] && ! grep -q warning "$WORK/iu.log"; then
			pass "i_u $v of $TEXT_BLOCKS blocks: clean, no warning"
		else
			fail "i_u $v of $TEXT_BLOCKS blocks: rc $rc: $(head -2 "$WORK/iu.log")"
		fi
	elif [ "$rc" -eq 0 ] && grep -q "$T: compressed block count $v in the inode, but its extents use only $TEXT_BLOCKS blocks" "$WORK/iu.log"; then
		pass "i_u $v of $TEXT_BLOCKS blocks: warned"
	else
		fail "i_u $v of $TEXT_BLOCKS blocks: rc $rc, no warning: $(head -2 "$WORK/iu.log")"
	fi
done

# ---- random damage: index and compressed data ----
sweep_start 777
for base in "$BIG" "$CMP" "$ONE" "$ZT"; do
	IMG=$base
	zinode "$(nid_path /mixed)"
	ilo=$IO ihi=$((IDX + 8 * NLC + 64))
	size=$(stat -c %s "$base")
	for i in $(seq 1 120); do
		IMG=$WORK/sweep.img
		cp "$base" "$IMG"
		sb_nocsum
		n=$((1 + RANDOM % 6))
		for ((k = 0; k < n; k++)); do
			case $((RANDOM % 4)) in
			0) off=$(((RANDOM * 32768 + RANDOM) % size)) ;;	# anywhere
			*) off=$((ilo + (RANDOM * 32768 + RANDOM) % (ihi - ilo))) ;;	# /mixed's index
			esac
			wr "$off" 1 $((RANDOM % 256))
		done
		[ $((i % 25)) -eq 0 ] && truncate -s $(((RANDOM * 32768 + RANDOM) % size)) "$IMG"
		sweep_check "$i" 30 3 30
	done
done
sweep_verdict
finish
