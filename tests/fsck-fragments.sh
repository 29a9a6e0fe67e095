#!/bin/bash
# fsck.erofs on images with fragments (-E fragments, -E all-fragments): the
# packed inode and the files whose tail, or whole data, is a fragment of it.
# Every layout our mkfs.erofs makes is checked (-p must count the fragment
# files) and extracted byte for byte; then hostile edits (a packed_nid out
# of range or naming a directory or nothing, a packed inode stored in
# fragments itself, fragment offsets and sizes past the packed inode, the
# feature bit missing, a directory entry naming the packed inode, a damaged
# packed pcluster) must each be refused with exit status 1 and a message
# that says what is wrong; random damage must never crash or hang fsck.
. "$(dirname "$0")/fsck-common.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (devices, owners, trusted xattrs)"
[ -x "$OUR_MKFS" ] || skip "our mkfs.erofs is not built"
[ -x "$MANIFEST" ] || skip "tools/erofs-manifest is not built"

TREE=$WORK/tree
bash "$top_srcdir/tests/gen-tree.sh" "$TREE" >"$WORK/gen-tree.log" 2>&1 ||
	{ fail "tests/gen-tree.sh failed: $(tail -2 "$WORK/gen-tree.log")"; finish; }

# small and mid-sized files of text and random bytes (tails of every
# length, whole-file fragments, identical files sharing one fragment), a
# file longer than a segment, hard links and xattrs
SRC=$WORK/src
mkdir -p "$SRC/d/e"
python3 - "$SRC" <<'EOF' || { fail "cannot build the source tree"; finish; }
import os, random, sys
rnd = random.Random(4242)
words = [b"alpha", b"beta", b"gamma", b"delta", b"erofs", b"packed", b"\n"]
def text(n):
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words) + b" "
    return bytes(out[:n])
d = sys.argv[1]
for i in range(40):
    size = rnd.choice([1, 100, 3000, 4095, 4096, 4097, 9000, 20000, 70000, 140000])
    data = text(size) if i % 4 else bytes(rnd.randbytes(size // 3)) + text(size - size // 3)
    sub = ["", "d", "d/e"][i % 3]
    open(os.path.join(d, sub, "f%02d" % i), "wb").write(data)
same = text(5000)
for i in range(6):
    open(os.path.join(d, "same%d" % i), "wb").write(same)
open(os.path.join(d, "whole"), "wb").write(text(3000))
open(os.path.join(d, "tail"), "wb").write(text(50000))
big = bytearray()
while len(big) < 9 * 1048576 + 12345:
    big += text(rnd.randint(1000, 60000)) + rnd.randbytes(rnd.randint(10, 5000))
open(os.path.join(d, "big"), "wb").write(bytes(big[:9 * 1048576 + 12345]))
open(os.path.join(d, "empty"), "wb").close()
EOF
ln "$SRC/d/f01" "$SRC/d/hardlink"
setfattr -n user.frag -v yes "$SRC/f02"

fsck_ok() { # LABEL IMAGE SRC: check, -p counts fragment files, extraction matches
	fsck_and_extract 'fragments: +[1-9][0-9]* files' "$@"
}

configs=("-z lz4hc -E fragments" "-z lz4hc -E all-fragments"
	 "-z lz4hc -C 65536 -E fragments" "-z lz4 -C 65536 -E all-fragments"
	 "-z lz4hc -E fragments,ztailpacking" "-z lz4hc -C 65536 -E fragments=131072,ztailpacking"
	 "-z lz4 -E fragments,legacy-compress" "-z lz4hc -E all-fragments,legacy-compress"
	 "-z lz4hc -C 16384 -E fragments,ztailpacking,legacy-compress")
for config in "${configs[@]}"; do
	for t in src gen; do
		src=$SRC
		# the shared tree (devices, sparse files, 110 MB) in four layouts
		if [ "$t" = gen ]; then
			case $config in
			"-z lz4hc -E fragments" | "-z lz4 -C 65536 -E all-fragments" | \
			"-z lz4hc -C 65536 -E fragments=131072,ztailpacking" | \
			"-z lz4hc -E all-fragments,legacy-compress") src=$TREE ;;
			*) continue ;;
			esac
		fi
		label=$t${config// /}
		img=$WORK/$label.img
		# shellcheck disable=SC2086 # config is a list of options
		mkfs_or_fail "$label" "$img" "$src" $config || continue
		fsck_ok "$label" "$img" "$src"
		rm -f "$img"
	done
done

# ---- hostile images ----

# F: -E fragments with full indexes (tails keep the high half of their
# offset in the tail head); A: -E all-fragments, compact indexes
F=$WORK/frag.img
A=$WORK/allfrag.img
"$OUR_MKFS" --quiet -T 1000 -z lz4hc -E fragments,legacy-compress "$F" "$SRC" &&
"$OUR_MKFS" --quiet -T 1000 -z lz4hc -E all-fragments "$A" "$SRC" || { fail "mkfs"; finish; }
for img in "$F" "$A"; do
	"$FSCK" "$img" >"$WORK/base.log" 2>&1 ||
		{ fail "base image $(basename "$img") is not clean: $(head -2 "$WORK/base.log")"; finish; }
done

# zinode NID: sets IO (inode), HDR (map header), IDX (first full index
# entry), NLC (lclusters), SIZE, ISIZE
zinode() {
	local fmt icount xs
	IO=$(ino_off "$1")
	fmt=$(rd "$IO" 2)
	ISIZE=$(((fmt & 1) ? 64 : 32))
	icount=$(rd $((IO + 2)) 2)
	xs=$((icount ? 12 + 4 * (icount - 1) : 0))
	if [ $((fmt & 1)) -eq 1 ]; then SIZE=$(rd $((IO + 8)) 8); else SIZE=$(rd $((IO + 8)) 4); fi
	HDR=$((((IO + ISIZE + xs) + 7) / 8 * 8))
	IDX=$((HDR + 16))
	NLC=$(((SIZE + 4095) / 4096))
}

# corrupt LABEL BASE EDIT PATTERN [extract]: edit a copy of BASE; fsck (and
# fsck --extract) must exit 1 with a message matching PATTERN
corrupt() {
	local label=$1 base=$2 edit=$3 pattern=$4 rc mode
	IMG=$WORK/bad.img
	cp "$base" "$IMG"
	sb_nocsum
	$edit
	for mode in check extract; do
		rm -rf "$WORK/bad.out"
		rc=0
		if [ "$mode" = check ]; then
			timeout 60 "$FSCK" "$IMG" >"$WORK/bad.log" 2>&1 || rc=$?
		else
			timeout 60 "$FSCK" --extract="$WORK/bad.out" "$IMG" >"$WORK/bad.log" 2>&1 || rc=$?
		fi
		if [ "$rc" -ne 1 ]; then
			fail "$label ($mode): exit $rc, expected 1: $(head -3 "$WORK/bad.log")"
		elif ! grep -qE -- "$pattern" "$WORK/bad.log"; then
			fail "$label ($mode): no message matching /$pattern/:"
			head -5 "$WORK/bad.log" >&2
		else
			pass "$label ($mode): $(grep -m1 -E -- "$pattern" "$WORK/bad.log")"
		fi
	done
	rm -rf "$WORK/bad.out"
}

IMG=$F
PACKED=$(rd $((1024 + 0x60)) 8)
ROOT=$(sb_root)
WHOLE_F=$(nid_path /whole)	# 3000 bytes: a whole-file fragment with -E fragments
TAIL_F=$(nid_path /tail)	# its tail in the packed inode
zinode "$PACKED"
PACKED_SIZE=$SIZE
IMG=$A
PACKED_A=$(rd $((1024 + 0x60)) 8)
WHOLE_A=$(nid_path /tail)
LINK_A=$(find_dirent "$(nid_path /d)" f01)
[ "$PACKED" -gt 0 ] && [ "$PACKED_A" -gt 0 ] && [ -n "$WHOLE_F" ] && [ -n "$TAIL_F" ] &&
	[ -n "$WHOLE_A" ] && [ -n "$LINK_A" ] ||
	{ fail "cannot find the packed inode or the test files"; finish; }
# the files have the expected form
IMG=$F; zinode "$WHOLE_F"
[ $(($(rd $((HDR + 7)) 1) & 0x80)) -ne 0 ] || fail "/whole is not a whole-file fragment"
IMG=$F; zinode "$TAIL_F"
[ $(($(rd $((HDR + 4)) 2) & 0x20)) -ne 0 ] && [ $(($(rd $((HDR + 7)) 1) & 0x80)) -eq 0 ] ||
	fail "/tail has no tail fragment"

e_nid_range() { wr $((1024 + 0x60)) 8 $((1 << 40)); }
corrupt "packed_nid out of range" "$F" e_nid_range "packed inode \(nid 1099511627776\): nid 1099511627776 out of range"
e_nid_root() { wr $((1024 + 0x60)) 8 "$ROOT"; }
corrupt "packed_nid naming the root" "$F" e_nid_root "packed inode \(nid $ROOT\): not a regular file"
e_nid_zero() { wr $((1024 + 0x60)) 8 0; }
corrupt "packed_nid 0" "$F" e_nid_zero "/whole \(nid $WHOLE_F\): fragment of 3000 bytes, but the superblock names no packed inode"
# (a full index is read as plain LZ4 then, header ignored, as 6.1 does:
# compact indexes, whose header is always read, say it clearly)
e_no_feature() { wr $((1024 + 0x50)) 4 $(($(rd $((1024 + 0x50)) 4) & ~0x20)); }
corrupt "no fragments feature" "$A" e_no_feature "/tail \(nid $WHOLE_A\): the whole file is a fragment of the packed inode, but the superblock lacks the fragments feature"
e_recursion() { wr $((1024 + 0x60)) 8 "$WHOLE_F"; }
corrupt "packed inode stored as a fragment" "$F" e_recursion "packed inode \(nid $WHOLE_F\): the whole file is a fragment, but this is the packed inode itself"
e_recursion2() { zinode "$PACKED"; wr "$HDR" 8 $(((1 << 63) | 0)); }
corrupt "packed inode a fragment of itself" "$F" e_recursion2 "this is the packed inode itself"
e_whole_off() { zinode "$WHOLE_F"; wr "$HDR" 8 $(((1 << 63) | (PACKED_SIZE - 2999))); }
corrupt "whole-file fragment past the packed inode" "$F" e_whole_off "/whole \(nid $WHOLE_F\): fragment of 3000 bytes at offset $((PACKED_SIZE - 2999)) beyond the end of the packed inode"
e_whole_wrap() { zinode "$WHOLE_F"; wr "$HDR" 8 -1; }
corrupt "whole-file fragment offset that wraps" "$F" e_whole_wrap "offset 9223372036854775807 beyond the end of the packed inode"
e_whole_huge() { zinode "$WHOLE_A"; wr $((IO + 8)) 4 4294967295; }
corrupt "huge i_size of a whole-file fragment" "$A" e_whole_huge "/tail \(nid $WHOLE_A\): fragment of 4294967295 bytes at offset [0-9]+ beyond the end"
e_tail_off() { zinode "$TAIL_F"; wr "$HDR" 4 $((0xFFFFFF00)); }
corrupt "tail fragment offset past the packed inode" "$F" e_tail_off "/tail \(nid $TAIL_F\): fragment of [0-9]+ bytes at offset 4294967040 beyond the end"
tail_head() { # full index of the zinode'd file: byte address of the last head entry
	local lcn
	for ((lcn = NLC - 1; lcn > 0; lcn--)); do
		[ $(($(rd $((IDX + lcn * 8)) 2) & 3)) -eq 2 ] || break
	done
	echo $((IDX + lcn * 8))
}
e_tail_hi() { zinode "$TAIL_F"; wr $(($(tail_head) + 4)) 4 1; }
corrupt "tail fragment offset's high half" "$F" e_tail_hi "/tail \(nid $TAIL_F\): fragment of [0-9]+ bytes at offset [0-9]{10} beyond the end"
e_tail_inline() { zinode "$TAIL_F"; wr $((HDR + 4)) 2 $(($(rd $((HDR + 4)) 2) | 0x08)); }
corrupt "tail fragment and inline tail" "$F" e_tail_inline "both an inline tail pcluster and a tail fragment"
e_tail_plain() { zinode "$TAIL_F"; wr "$(tail_head)" 2 0; }
corrupt "tail fragment with an uncompressed head" "$F" e_tail_plain "the tail extent is a fragment, but its head is uncompressed"
e_dirent() { wr "${LINK_A%% *}" 8 "$PACKED_A"; }
corrupt "a directory entry naming the packed inode" "$A" e_dirent "/d/f01 \(nid $PACKED_A\): the directory entry names the packed inode"
e_packed_data() {
	local blk
	zinode "$PACKED"
	blk=$(rd $((IDX + 4)) 4)	# the packed inode's first pcluster (full index)
	dd if=/dev/urandom of="$IMG" bs=4096 seek="$blk" count=1 conv=notrunc status=none
}
corrupt "damaged packed pcluster" "$F" e_packed_data "\(packed inode\) \(nid $PACKED\): pcluster at block [0-9]+"

# random damage to the packed inode's metadata and data and to fragment
# headers: exit 0 or 1, never a crash or a hang
IMG=$F; zinode "$PACKED"
PIO=$IO
pblk=$(rd $((IDX + 4)) 4)
IMG=$F; zinode "$TAIL_F"; THDR=$HDR
crashes=0
for i in $(seq 1 60); do
	IMG=$WORK/rnd.img
	cp "$F" "$IMG"
	sb_nocsum
	for j in 1 2 3; do
		case $(((i + j) % 3)) in
		0) off=$((PIO + RANDOM % 160)) ;;
		1) off=$((pblk * 4096 + RANDOM % 8192)) ;;
		2) off=$((THDR + RANDOM % 40)) ;;
		esac
		wr "$off" 1 $((RANDOM % 256))
	done
	rc=0
	rm -rf "$WORK/rnd.out"
	timeout 60 "$FSCK" --extract="$WORK/rnd.out" "$IMG" >"$WORK/rnd.log" 2>&1 || rc=$?
	if [ "$rc" -gt 1 ]; then
		crashes=$((crashes + 1))
		cp "$IMG" "$WORK/crash-$i.img"
		fail "random damage $i: exit $rc: $(tail -2 "$WORK/rnd.log")"
	fi
done
rm -rf "$WORK/rnd.out"
[ "$crashes" -eq 0 ] && pass "random damage to the packed inode and fragment headers: 60 images, no crash or hang"

# packed_under LABEL TREE PERCENT CONFIG: the image of TREE built with
# CONFIG takes at most PERCENT% of its bytes, and checks and extracts
packed_under() {
	local label=$1 tree=$2 pct=$3 config=$4 bytes size
	bytes=$(du -sb --apparent-size "$tree" | cut -f1)
	# shellcheck disable=SC2086 # config is a list of options
	mkfs_or_fail "$label" "$WORK/$label.img" "$tree" $config || return
	size=$(stat -c %s "$WORK/$label.img")
	if [ $((size * 100)) -le $((bytes * pct)) ]; then
		pass "$label: $size bytes for $bytes"
	else
		fail "$label: $size bytes for $bytes, over $pct%"
	fi
	fsck_ok "$label" "$WORK/$label.img" "$tree"
}

# hex text (4 bits a byte): fast LZ4 finds no gain in it, the entropy
# stages of LZMA, DEFLATE and zstd halve it; its files once went plain
# with -E fragments because fast LZ4 estimated their fragments
HEX=$WORK/hex
mkdir -p "$HEX"
python3 - "$HEX" <<'EOF' || fail "cannot build the hex tree"
import os, random, sys
rnd = random.Random(77)
for i in range(60):
    n = rnd.choice([300, 1500, 3000, 9000, 40000, 150000])
    open(os.path.join(sys.argv[1], "h%02d" % i), "w").write(
        "".join(rnd.choice("0123456789abcdef") for _ in range(n)))
EOF
for config in "-z lzma -C 131072 -E fragments,ztailpacking" "-z deflate -C 65536 -E fragments" \
	      "-z zstd -C 131072 -E fragments,ztailpacking" "-z lzma -E all-fragments"; do
	packed_under "hex${config// /}" "$HEX" 62 "$config"
done

# random bytes repeated: order-0 sees no gain in them, fast LZ4 does, and
# with a zstd or LZMA packed inode the committer asks fast LZ4 only then
REP=$WORK/rep
mkdir -p "$REP"
python3 - "$REP" <<'EOF' || fail "cannot build the repeats tree"
import os, random, sys
rnd = random.Random(78)
for i in range(30):
    open(os.path.join(sys.argv[1], "r%02d" % i), "wb").write(rnd.randbytes(rnd.choice([600, 900, 2000])) * 4)
EOF
for config in "-z zstd -C 131072 -E fragments,ztailpacking" "-z lzma -E all-fragments"; do
	packed_under "rep${config// /}" "$REP" 50 "$config"
done
finish
