#!/bin/bash
# Runs the libFuzzer campaign against the tar source (fuzz-tar.c): builds
# the harnesses (build.sh), seeds a corpus with small tars of every writer
# and format (GNU tar gnu/pax/sparse, bsdtar, Python's tarfile, our crafted
# cases from tests/tar-craft.py) plain and compressed, and fuzzes.
#
#   tests/fuzz/run-tar.sh [-n RUNS] [-o OUTDIR]
#
#   -n RUNS     executions (default 1000000)
#   -o OUTDIR   work folder (default $FUZZ_OUT or /tmp/erofs-fuzz): bin/,
#               seeds-tar/, corpus-tar/ (kept between runs), artifacts-tar/,
#               tar.log
# Exit status: 0 clean, 1 the fuzzer found something, 2 setup failure.
set -euo pipefail
{
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
runs=1000000
out=${FUZZ_OUT:-/tmp/erofs-fuzz}
while getopts "n:o:" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,13p' "$0" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
"$here/build.sh" "$out" >/dev/null || { echo "run-tar.sh: build.sh failed" >&2; exit 2; }

# ---- seeds: byte 0 says how the rest is read (see fuzz-tar.c) ----
seeds=$out/seeds-tar tree=$out/tar-tree
rm -rf "$seeds" "$tree"
mkdir -p "$seeds" "$tree/d/sub" "$tree/e"
printf 'hello\n' >"$tree/small"
head -c 5000 /dev/zero | tr '\0' x >"$tree/d/f5000"
truncate -s 70000 "$tree/d/sparse" && printf end >>"$tree/d/sparse"
ln "$tree/small" "$tree/d/hardlink"
ln -s ../small "$tree/d/sub/link"
ln -s "$(printf 'l%.0s' $(seq 150))" "$tree/longlink"
: >"$tree/$(printf 'n%.0s' $(seq 120))"
mkfifo "$tree/fifo"
setfattr -n user.k -v v "$tree/small" 2>/dev/null || true
setfattr -n security.selinux -v "system_u:object_r:bin_t:s0" "$tree/d/f5000" 2>/dev/null || true
if [ "$(id -u)" -eq 0 ]; then
	mknod "$tree/e/chr" c 1 3
	mknod "$tree/e/.wh.gone" c 0 0 2>/dev/null || true
fi
: >"$tree/e/.wh.deleted"
: >"$tree/e/.wh..wh..opq"
seed() { # NAME FLAGS FILE
	{ printf "\\x$(printf %02x "$2")"; cat "$3"; } >"$seeds/$1"
}
tmp=$out/tar-tmp
mkdir -p "$tmp"
tar --format=gnu -cf "$tmp/gnu.tar" -C "$tree" .
tar --format=gnu --sparse -cf "$tmp/gnu-sparse.tar" -C "$tree" .
tar --format=pax --xattrs --xattrs-include='*' -cf "$tmp/pax.tar" -C "$tree" .
for v in 0.0 0.1 1.0; do
	tar --format=pax --sparse --sparse-version=$v -cf "$tmp/pax-sparse-$v.tar" -C "$tree" .
done
tar --format=ustar -cf "$tmp/ustar.tar" -C "$tree" d small 2>/dev/null || true
bsdtar --xattrs -cf "$tmp/bsdtar.tar" -C "$tree" .
python3 -c 'import sys, tarfile
t = tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT); t.add(sys.argv[1], arcname="."); t.close()' \
	"$tree" "$tmp/python.tar"
for c in $(python3 "$top/tests/tar-craft.py" --list); do
	python3 "$top/tests/tar-craft.py" "$c" "$tmp/craft-$c.tar"
done
python3 "$top/tests/tar-layer.py" "$tmp/layer"
cp "$tmp/layer/upper.tar" "$tmp/layer.tar"
for f in "$tmp"/*.tar; do
	n=$(basename "$f" .tar)
	[ "$(stat -c %s "$f")" -le 200000 ] || continue
	seed "$n" 0 "$f"
	seed "$n-pipe-aufs" $((1 | 8)) "$f"
done
for f in gnu pax bsdtar layer; do
	gzip -9c "$tmp/$f.tar" >"$tmp/$f.gz" && seed "$f-gz" 2 "$tmp/$f.gz"
	xz -c "$tmp/$f.tar" >"$tmp/$f.xz" && seed "$f-xz" 4 "$tmp/$f.xz"
	zstd -qc "$tmp/$f.tar" >"$tmp/$f.zst" && seed "$f-zst" 6 "$tmp/$f.zst"
done
seed layer-strip $((8 | 16 | 32)) "$tmp/layer.tar"
rm -rf "$tmp" "$tree"
echo "run-tar.sh: $(find "$seeds" -type f | wc -l) seeds in $seeds"

# ---- the campaign ----
mkdir -p "$out/corpus-tar" "$out/artifacts-tar"
echo "run-tar.sh: $runs runs of fuzz-tar (log: $out/tar.log)"
rc=0
# messages of refused tars go to stderr: closed, the fuzzer's own reports stay
"$out/bin/fuzz-tar" -runs="$runs" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
	-close_fd_mask=2 -artifact_prefix="$out/artifacts-tar/" -print_final_stats=1 \
	"$out/corpus-tar" "$seeds" >"$out/tar.log" 2>&1 || rc=$?
tail -n 12 "$out/tar.log"
if [ "$rc" -ne 0 ]; then
	echo "run-tar.sh: the fuzzer stopped with status $rc: see $out/tar.log and $out/artifacts-tar/"
	exit 1
fi
echo "run-tar.sh: $runs runs, no finding"
exit 0
}
