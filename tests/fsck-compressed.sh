#!/bin/bash
# fsck.erofs on compressed images: the shared test tree (tests/gen-tree.sh)
# and a tree of half-compressible files (raw and compressed extents mixed,
# extent starts anywhere in a block) are built with our mkfs.erofs in every
# compressed layout (LZ4 and LZ4HC; compact and full indexes; one-block and
# big pclusters; inline tails), checked, extracted and compared with the
# source; a second, independent reader (tests/second-reader.sh) reads the
# same images as a cross-check, and our fsck.erofs reads Debian's compressed
# images.
. "$(dirname "$0")/fsck-common.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (devices, owners, trusted xattrs)"
[ -x "$OUR_MKFS" ] || skip "our mkfs.erofs is not built"
[ -x "$MANIFEST" ] || skip "tools/erofs-manifest is not built"

TREE=$WORK/tree
bash "$top_srcdir/tests/gen-tree.sh" "$TREE" >"$WORK/gen-tree.log" 2>&1 ||
	{ fail "tests/gen-tree.sh failed: $(tail -2 "$WORK/gen-tree.log")"; finish; }

# half-compressible files: runs of random, text and zero bytes, so extents
# alternate between raw and compressed and start anywhere in a block; each
# file ends with compressible text (see the raw-tail case below)
MIXED=$WORK/mixed
mkdir -p "$MIXED/sub"
python3 - "$MIXED" <<'EOF' || fail "cannot build the mixed tree"
import os, random, sys
rnd = random.Random(20240611)
words = [b"alpha", b"beta", b"gamma", b"delta", b"erofs", b"forge", b"lz4", b"\n"]
def text(n):
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words) + b" "
    return bytes(out[:n])
for f in range(24):
    size = rnd.choice([4097, 6000, 8192, 12289, 20000, 65536, 100000, 300000, 1000000, 2500000])
    data = bytearray()
    while len(data) < size:
        n = rnd.randint(1, 40000)
        k = rnd.random()
        data += rnd.randbytes(n) if k < 0.4 else text(n) if k < 0.8 else bytes(n)
    data = data[:size] + text(8192 + rnd.randint(0, 4096))
    name = os.path.join(sys.argv[1], "sub" if f % 3 == 0 else "", "m%02d" % f)
    with open(name, "wb") as fh:
        fh.write(data)
EOF
ln "$MIXED/m01" "$MIXED/sub/hardlink"
setfattr -n user.mixed -v yes "$MIXED/m02"

fsck_ok() { # LABEL IMAGE SRC: check, -p shows compressed files, extraction matches
	fsck_and_extract 'compressed files: +[1-9]' "$@"
}

configs=("-z lz4" "-z lz4hc" "-z lz4hc -E legacy-compress" "-z lz4hc -C 65536"
	 "-z lz4 -C 1048576" "-z lz4hc -C 16384 -E legacy-compress"
	 "-z lz4hc -E ztailpacking" "-z lz4 -C 65536 -E ztailpacking"
	 "-z lz4hc -C 16384 -E ztailpacking,legacy-compress")
for config in "${configs[@]}"; do
	for t in gen mixed; do
		src=$TREE
		[ "$t" = mixed ] && src=$MIXED
		label=$t${config// /}
		img=$WORK/$label.img
		# shellcheck disable=SC2086 # config is a list of options
		mkfs_or_fail "$label" "$img" "$src" $config || continue
		fsck_ok "$label" "$img" "$src"
		# shellcheck disable=SC2086
		reader2_reads $config && reader2_extract "$label" "$img" "$src"
		rm -f "$img"
	done
done

# A file whose last extent is stored raw and would cross into the last
# lcluster: the kernel maps the last lcluster as part of that extent and
# refuses an uncompressed extent longer than one block (fs/erofs/zmap.c,
# -EFSCORRUPTED).  mkfs once wrote such images (fixed in 8d27c7d); fsck
# names the file if it comes back.
mkdir -p "$WORK/rawtail"
python3 -c 'import random,sys
sys.stdout.buffer.write(bytes(8000) + random.Random(1).randbytes(5000))' >"$WORK/rawtail/f"
for config in "-z lz4" "-z lz4 -E legacy-compress" "-z lz4hc -C 16384"; do
	# shellcheck disable=SC2086
	"$OUR_MKFS" --quiet $config "$WORK/rawtail.img" "$WORK/rawtail" >/dev/null 2>&1 || continue
	rm -rf "$WORK/rawtail.out"
	if "$FSCK" "$WORK/rawtail.img" >"$WORK/rawtail.log" 2>&1 &&
	   "$FSCK" --extract="$WORK/rawtail.out" "$WORK/rawtail.img" >/dev/null 2>&1 &&
	   cmp -s "$WORK/rawtail/f" "$WORK/rawtail.out/f"; then
		pass "raw tail ($config): a readable index"
	else
		fail "raw tail ($config): $(head -2 "$WORK/rawtail.log")"
	fi
done

# Regression: with -E ztailpacking and big pclusters, a file's compressed
# tail that does not fit inline (here: beside a 3900-byte xattr) kept its
# head in the last lcluster, where no block count can follow (Linux 6.1 read
# such a file with -EINVAL from compact indexes).
mkdir -p "$WORK/ztail"
python3 -c 'import random,sys
r = random.Random(5); w = [b"alpha", b"beta", b"gamma", b"delta", b"\n"]; o = bytearray()
while len(o) < 105547: o += r.choice(w) + b" "
sys.stdout.buffer.write(o[:105547])' >"$WORK/ztail/f"
setfattr -n user.big -v "$(head -c 3900 /dev/zero | tr '\0' x)" "$WORK/ztail/f"
if "$OUR_MKFS" --quiet -z lz4hc -C 16384 -E ztailpacking "$WORK/ztail.img" "$WORK/ztail" >/dev/null 2>&1; then
	"$FSCK" "$WORK/ztail.img" >"$WORK/ztail.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fsck_ok ztail-big-xattr "$WORK/ztail.img" "$WORK/ztail"
	else
		fail "ztail-big-xattr: rc $rc: $(head -2 "$WORK/ztail.log")"
	fi
fi

# Debian's compressed images (its own EOF markers, index rules and layouts)
if [ -n "$DEB_MKFS" ]; then
	for config in "-zlz4" "-zlz4hc" "-zlz4hc -C65536" "-zlz4 -Elegacy-compress" \
		"-zlz4hc -C1048576 -Elegacy-compress" "-zlz4hc -Eztailpacking" \
		"-zlz4hc -C65536 -Eztailpacking" "-zlz4 -C16384 -Eztailpacking -Elegacy-compress"; do
		label=deb-mixed${config// /}
		# shellcheck disable=SC2086
		if "$DEB_MKFS" --quiet $config "$WORK/$label.img" "$MIXED" >/dev/null 2>&1; then
			fsck_ok "$label" "$WORK/$label.img" "$MIXED"
		else
			fail "$label: Debian's mkfs.erofs failed"
		fi
		rm -f "$WORK/$label.img"
	done
else
	echo "Debian's mkfs.erofs not installed: its compressed images are not tested"
fi

# -d 3 shows the compression settings of the superblock
"$OUR_MKFS" --quiet -z lz4hc -C 65536 "$WORK/d3.img" "$MIXED" >/dev/null 2>&1
if "$FSCK" -d 3 "$WORK/d3.img" 2>&1 | grep -q 'compression algorithms 0x1, LZ4 pclusters up to 16 blocks'; then
	pass "-d 3 prints the compression configuration"
else
	fail "-d 3: $("$FSCK" -d 3 "$WORK/d3.img" 2>&1 | head -3)"
fi
finish
