#!/bin/bash
# The codec libraries alone on a tree's bytes: the floor under issue 27's rows
# (bench/compare.sh CODECS=squashfs), measured apart from both tools.  For each
# row it prints two CPU times of bench/codec-floor.c, each the least of a few
# rounds in one thread (ROUNDS, default 3; 1 for zstd 15 and 19 and lzma):
#
#   blocks  what mksquashfs asks of its library: every byte compressed once in
#           independent 128 KiB blocks, through the library and call mksquashfs
#           uses (zstd, zlib for gzip, liblzma's .xz for xz, lz4hc)
#   fill    the fixed-output ideal of one compression per pcluster: frames of
#           128 KiB output one after another, through the library and settings
#           our mkfs.erofs uses (zstd, libdeflate, MicroLZMA, lz4hc).  zstd and
#           libdeflate have no destination-size mode: each frame's input is
#           searched first, untimed, and then compressed once
#
# The tree's regular files go one after another into $BENCH_DIR/NAME.cat (made
# once), in the order of their sorted paths.  Not a test: it asserts nothing.
#
#   bench/codec-floor.sh [TREE]    default: the rootfs sample of bench/compare.sh
#
# Environment: BENCH_DIR (default /var/tmp/erofs-bench), ROUNDS, ROWS (a subset
# of "zstd3 zstd15 zstd19 deflate6 lzma6 lz4hc"), CC (default cc).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bench_dir=${BENCH_DIR:-/var/tmp/erofs-bench}
tree=${1:-$bench_dir/rootfs-sample}
die() { echo "codec-floor.sh: $*" >&2; exit 1; }

[ -d "$tree" ] || die "$tree is not a directory (bench/compare.sh TREES=rootfs makes the sample)"
mkdir -p "$bench_dir"
tool=$bench_dir/codec-floor
libs=(-lzstd -ldeflate -llzma -llz4 -lz)
"${CC:-cc}" -O2 -o "$tool" "$top/bench/codec-floor.c" "${libs[@]}" ||
	die "cannot build bench/codec-floor.c (needs libzstd-dev libdeflate-dev liblzma-dev" \
		"liblz4-dev zlib1g-dev)"
cat_file=$bench_dir/$(basename "$tree").cat
if [ ! -f "$cat_file" ]; then
	(cd "$tree" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r cat) >"$cat_file.new"
	mv "$cat_file.new" "$cat_file"
fi

# row NAME SQUASHFS_CODEC OUR_CODEC LEVEL: one line of the table
row() {
	local name=$1 sq=$2 ours=$3 level=$4 rounds=${ROUNDS:-3} b f
	case $name in zstd15 | zstd19 | lzma6) rounds=${ROUNDS:-1} ;; esac
	read -r -a b <<<"$("$tool" "$cat_file" "$sq" "$level" blocks 131072 "$rounds")"
	read -r -a f <<<"$("$tool" "$cat_file" "$ours" "$level" fill 131072 "$rounds")"
	printf '| %s %s | %s | %s | %s | %s | %s |\n' "$ours" "$level" "${b[0]}" "${b[1]}" \
		"${f[0]}" "${f[1]}" "${f[2]}"
}

echo "$(basename "$tree"): $(stat -c %s "$cat_file") bytes of regular files;" \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| row | blocks: CPU s | blocks: output B | fill: CPU s | fill: output B | fill: frames |"
echo "|---|---|---|---|---|---|"
for r in ${ROWS:-zstd3 zstd15 zstd19 deflate6 lzma6 lz4hc}; do
	case $r in
	zstd3) row "$r" zstd zstd 3 ;;
	zstd15) row "$r" zstd zstd 15 ;;
	zstd19) row "$r" zstd zstd 19 ;;
	deflate6) row "$r" gzip deflate 6 ;;
	lzma6) row "$r" xz lzma 6 ;;
	lz4hc) row "$r" lz4hc lz4hc 9 ;;
	*) die "unknown row $r" ;;
	esac
done
