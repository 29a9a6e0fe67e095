#!/bin/bash
# erofsfuse's operations (lib/fsops/fsops.c) on the host, without mounting:
# tools/erofs-fsops-manifest walks an image through lookup, getattr,
# readdir (in batches resumed from cookies), readlink, read (through the
# bounded cache of decoded extents), listxattr and getxattr, and prints
# erofs-manifest's canonical manifest, which must equal the source tree's
# for every layout our mkfs.erofs makes (and erofs-utils 1.9.4's, when it
# is in ../shared/anchors).  Then hostile images: a clear EIO naming the
# nid, never a crash or a hang.
. "$(dirname "$0")/fsck-common.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (devices, owners, trusted xattrs)"
FSOPS=$top_builddir/tools/erofs-fsops-manifest
[ -x "$FSOPS" ] || { echo "$test_name: $FSOPS not built" >&2; exit 99; }
ANCHOR_MKFS=${ANCHOR_MKFS:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs}

TREE=$WORK/tree
bash "$top_srcdir/tests/gen-tree.sh" "$TREE" >"$WORK/gen-tree.log" 2>&1 ||
	{ fail "tests/gen-tree.sh failed: $(tail -2 "$WORK/gen-tree.log")"; finish; }
# the 100 MB sparse file would only make every walk slower: 9 MB will do
rm "$TREE/sizes/sparse-100m"
truncate -s 9M "$TREE/sizes/sparse-9m"
printf 'middle' | dd of="$TREE/sizes/sparse-9m" bs=1 seek=5000000 conv=notrunc status=none
# a directory whose names sort before "." fills its first block, so "."
# and ".." sit in a later block
mkdir "$TREE/before-dots"
for i in $(seq 1 400); do
	printf -v n '%04d' "$i"	# not $(printf): a fork each costs seconds in all on slow hosts
	: >"$TREE/before-dots/-$n-sorts-before-the-dots"
done
"$MANIFEST" "$TREE" >"$WORK/expected" || { fail "manifest of the source tree"; finish; }

# walk LABEL IMAGE [erofs-fsops-manifest options]: manifest equals the tree's
walk() {
	local label=$1 img=$2 rc
	shift 2
	FSOPS_STATS=1 timeout 300 "$FSOPS" "$@" "$img" >"$WORK/$label.manifest" 2>"$WORK/$label.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$label: erofs-fsops-manifest exit $rc: $(grep -v 'cache' "$WORK/$label.err" | head -2)"
	elif ! diff -u "$WORK/expected" "$WORK/$label.manifest" >"$WORK/$label.diff"; then
		fail "$label: manifest differs ($(grep -c '^[-+][^-+]' "$WORK/$label.diff") lines): $(sed -n 4,5p "$WORK/$label.diff" | cut -c1-160)"
	else
		pass "$label: the tree read through the operations equals the source ($(sed -n 's/.*: cache //p' "$WORK/$label.err"))"
		return 0
	fi
	return 1
}

# every layout: LABEL | mkfs options | erofs-fsops-manifest options
while IFS='|' read -r label opts wopts; do
	[ -n "$label" ] || continue
	img=$WORK/$label.img
	# shellcheck disable=SC2086 # option lists are words
	mkfs_or_fail "$label" "$img" "$TREE" $opts || continue
	# shellcheck disable=SC2086
	walk "$label" "$img" $wopts && rm -f "$img"
done <<'EOF'
plain||
b512|-b 512|--batch=1
b1024|-b 1024|
noinline|-E noinline_data|
extended|-E force-inode-extended|--batch=1000
xattrs-shared|-x 0|
xattrs-inline|-x 1000|
lz4|-z lz4|
lz4hc|-z lz4hc|--cache=65536
lz4hc-legacy|-z lz4hc -E legacy-compress|
big-pcluster|-z lz4hc -C 1048576|--cache=1048576
big-pcluster-legacy|-z lz4 -C 262144 -E legacy-compress|
ztailpacking|-z lz4 -C 65536 -E ztailpacking|
ztail-legacy|-z lz4hc -E ztailpacking,legacy-compress|
fragments|-z lz4hc -E fragments|
fragments-ztail|-z lz4hc -C 16384 -E fragments=65536,ztailpacking|--cache=100000
fragments-legacy|-z lz4 -E fragments,legacy-compress|
all-fragments|-z lz4hc -E all-fragments|
dedupe|-z lz4hc -E dedupe|
dedupe-frag-ztail|-z lz4hc -C 65536 -E dedupe,fragments,ztailpacking|
chunks-4k|--chunksize=4096|
chunks-64k|--chunksize=65536|--batch=2
chunks-b1024|-b 1024 --chunksize=1024|
dedupe-plain|-E dedupe|
EOF

# the cache stays within its bound, and a file read again hits it
img=$WORK/bound.img
if mkfs_or_fail bound "$img" "$TREE" -z lz4hc -C 65536; then
	if walk bound "$img" --cache=200000; then
		kept=$(sed -n 's/.*misses, \([0-9]*\) bytes kept/\1/p' "$WORK/bound.err")
		if [ -n "$kept" ] && [ "$kept" -le 200000 ]; then
			pass "cache bound: $kept bytes kept of 200000 allowed"
		else
			fail "cache bound: ${kept:-?} bytes kept, 200000 allowed"
		fi
	fi
fi

# --offset: the image 12345 bytes into a bigger file, opened as erofsfuse opens it
img=$WORK/at-offset.img
if mkfs_or_fail at-offset "$img" "$TREE" -z lz4hc -E fragments,ztailpacking; then
	{ head -c 12345 /dev/urandom; cat "$img"; head -c 3000 /dev/urandom; } >"$WORK/at-offset.bin"
	walk at-offset-12345 "$WORK/at-offset.bin" --offset=12345 && rm -f "$img" "$WORK/at-offset.bin"
fi

# erofs-utils' images of the same tree
if [ -x "$ANCHOR_MKFS" ]; then
	while IFS='|' read -r label opts; do
		img=$WORK/$label.img
		# shellcheck disable=SC2086
		if "$ANCHOR_MKFS" --quiet $opts "$img" "$TREE" >"$WORK/$label.mkfs.log" 2>&1; then
			walk "$label" "$img" && rm -f "$img"
		else
			fail "$label: erofs-utils mkfs: $(tail -1 "$WORK/$label.mkfs.log")"
		fi
	done <<'EOF'
eu-plain|
eu-lz4hc|-zlz4hc
eu-ztail-c64k|-zlz4hc -C65536 -Eztailpacking
eu-fragments|-zlz4hc -Efragments,ztailpacking
eu-all-fragments|-zlz4 -Eall-fragments
eu-dedupe|-zlz4hc -C65536 -Ededupe
eu-chunks|--chunksize=4096
EOF
else
	echo "$test_name: no erofs-utils 1.9.4 at $ANCHOR_MKFS: its images are not walked"
fi

# ---- hostile images: EIO with the reason, never a crash ----
SMALL=$WORK/small
mkdir -p "$SMALL/d"
printf 'hello\n' >"$SMALL/hello"
head -c 300000 "$TREE/sizes/text-5m" >"$SMALL/d/text"
head -c 20000 "$TREE/sizes/random-3m" >"$SMALL/d/random"
ln -s hello "$SMALL/link"
setfattr -n user.x -v y "$SMALL/hello"

# the root inode with an unknown layout: every operation on it is EIO
IMG=$WORK/bad-root.img
if mkfs_or_fail bad-root "$IMG" "$SMALL" -z lz4hc; then
	sb_nocsum
	off=$(ino_off "$(sb_root)")
	wr "$off" 2 $(( $(rd "$off" 2) | 0xe ))	# data layout 7
	timeout 60 "$FSOPS" "$IMG" >/dev/null 2>"$WORK/bad-root.err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "nid $(sb_root): unknown data layout 7" "$WORK/bad-root.err" &&
	   grep -q 'Input/output error' "$WORK/bad-root.err"; then
		pass "a root of an unknown layout: EIO, naming nid $(sb_root) and the reason"
	else
		fail "bad root: rc $rc: $(head -2 "$WORK/bad-root.err")"
	fi
fi

# a compressed file's data destroyed: reading it is EIO, the rest reads
IMG=$WORK/bad-data.img
if mkfs_or_fail bad-data "$IMG" "$SMALL" -z lz4hc; then
	# the text compresses into its pclusters: overwrite its first one
	blk=$(python3 - "$IMG" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
# the first block after the metadata that looks like LZ4 output of the text
i = d.find(b'compressible line')
print(i // 4096 if i >= 0 else -1)
PY
)
	if [ "$blk" -gt 0 ]; then
		dd if=/dev/urandom of="$IMG" bs=4096 seek="$blk" count=1 conv=notrunc status=none
		timeout 60 "$FSOPS" "$IMG" >/dev/null 2>"$WORK/bad-data.err"
		rc=$?
		if [ "$rc" -eq 1 ] && grep -qE 'nid [0-9]+: pcluster at block|corrupt LZ4' "$WORK/bad-data.err" &&
		   grep -q 'read error on .*d/text: Input/output error' "$WORK/bad-data.err"; then
			pass "a destroyed pcluster: reading d/text is EIO, naming the nid and the pcluster"
		else
			fail "bad data: rc $rc: $(head -2 "$WORK/bad-data.err")"
		fi
	else
		fail "bad data: no LZ4 literal run of the text found in the image"
	fi
fi

# random damage: exit 0 or 1, never a signal or a hang (valgrind when present)
for layout in "-z lz4hc -E fragments,ztailpacking" "--chunksize=4096" "-z lz4 -C 16384"; do
	# shellcheck disable=SC2086
	mkfs_or_fail sweep "$WORK/sweep-base.img" "$SMALL" $layout || continue
	sweep_start 4242
	size=$(stat -c %s "$WORK/sweep-base.img")
	for i in $(seq 1 60); do
		IMG=$WORK/sweep.img
		cp "$WORK/sweep-base.img" "$IMG"
		for _ in 1 2 3 4; do
			printf "\\x$(printf %02x $((RANDOM % 256)))" |
				dd of="$IMG" bs=1 seek=$(( (RANDOM * 32768 + RANDOM) % size )) conv=notrunc status=none
		done
		sb_nocsum
		if [ $((i % 10)) -eq 0 ] && [ -n "$VG" ]; then
			$VG "$FSOPS" --cache=40000 "$IMG" >/dev/null 2>&1
			rc=$?
		else
			timeout 30 "$FSOPS" --cache=40000 "$IMG" >/dev/null 2>&1
			rc=$?
		fi
		case $rc in
		0) clean=$((clean + 1)) ;;
		1) bad=$((bad + 1)) ;;
		99) vgerrs=$((vgerrs + 1)); cp "$IMG" "$WORK/vg-$i.img" ;;
		124) hangs=$((hangs + 1)); cp "$IMG" "$WORK/hang-$i.img" ;;
		*) crashes=$((crashes + 1)); cp "$IMG" "$WORK/crash-$i.img" ;;
		esac
	done
	sweep_verdict
done

# ---- erofsfuse's command line, up to (never including) a mount ----
EROFSFUSE=$top_builddir/fuse/erofsfuse
if [ -x "$EROFSFUSE" ]; then
	mkdir -p "$WORK/mnt"
	mkfs_or_fail cli "$WORK/cli.img" "$SMALL" -z lz4hc
	"$EROFSFUSE" --help >"$WORK/help.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q -- '--offset=#' "$WORK/help.out" && grep -q -- '--dbglevel=#' "$WORK/help.out" &&
	   grep -q -- '--device=#' "$WORK/help.out" && grep -q -- '-o allow_other' "$WORK/help.out"; then
		pass "erofsfuse --help: erofs-utils' options and libfuse's, exit 0"
	else
		fail "erofsfuse --help: rc $rc: $(head -2 "$WORK/help.out")"
	fi
	"$EROFSFUSE" "$WORK/cli.img" >"$WORK/noarg.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] && grep -q 'need an IMAGE and a MOUNTPOINT' "$WORK/noarg.out" &&
		pass "erofsfuse without a mount point: exit 1 with a reason" ||
		fail "erofsfuse without a mount point: rc $rc: $(head -1 "$WORK/noarg.out")"
	# (multi-device images: tests/blobdev.sh and tests/tar-index.sh)
	"$EROFSFUSE" --device="$WORK/cli.img" "$WORK/cli.img" "$WORK/mnt" >"$WORK/dev.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] && grep -q 'cli.img: --device given, but the image has no extra devices' "$WORK/dev.out" &&
		pass "erofsfuse --device for a one-device image: refused, exit 1" ||
		fail "erofsfuse --device: rc $rc: $(head -1 "$WORK/dev.out")"
	"$EROFSFUSE" -f --offset=99999999 "$WORK/cli.img" "$WORK/mnt" >"$WORK/dev.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] && grep -q 'offset 99999999 is not inside the file' "$WORK/dev.out" &&
		pass "erofsfuse --offset past the end: refused, exit 1" ||
		fail "erofsfuse --offset past the end: rc $rc: $(head -1 "$WORK/dev.out")"
	# a damaged superblock is refused before anything is mounted
	IMG=$WORK/cli-bad.img
	cp "$WORK/cli.img" "$IMG"
	wr 1024 4 0
	"$EROFSFUSE" -f "$IMG" "$WORK/mnt" >"$WORK/bad.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] && grep -q "cli-bad.img: superblock: bad magic" "$WORK/bad.out" &&
		pass "erofsfuse on a bad image: refused by name before mounting, exit 1" ||
		fail "erofsfuse on a bad image: rc $rc: $(head -1 "$WORK/bad.out")"
	# --offset: the image 12345 bytes into a file is found there (the mount
	# point does not exist, so nothing is mounted), and not without it
	{ head -c 12345 /dev/urandom; cat "$WORK/cli.img"; } >"$WORK/offset.bin"
	"$EROFSFUSE" -f --offset=12345 "$WORK/offset.bin" "$WORK/no-such-dir" >"$WORK/off.out" 2>&1
	rc1=$?
	"$EROFSFUSE" -f "$WORK/offset.bin" "$WORK/no-such-dir" >"$WORK/nooff.out" 2>&1
	rc2=$?
	if [ "$rc1" -eq 1 ] && ! grep -q 'superblock' "$WORK/off.out" && grep -q 'mount' "$WORK/off.out" &&
	   [ "$rc2" -eq 1 ] && grep -q 'superblock: bad magic' "$WORK/nooff.out"; then
		pass "erofsfuse --offset=12345: the image is read from there"
	else
		fail "erofsfuse --offset: rc $rc1/$rc2: $(head -1 "$WORK/off.out") / $(head -1 "$WORK/nooff.out")"
	fi
	mountpoint -q "$WORK/mnt" && { fusermount3 -u "$WORK/mnt"; fail "something got mounted on the host"; }
else
	echo "$test_name: erofsfuse not built (no libfuse3): its command line is not tested"
fi

finish
