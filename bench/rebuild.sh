#!/bin/bash
# Benchmark: rebuild mode and --incremental, our mkfs.erofs against
# erofs-utils' (1.9.4) in the same run, alternating pair by pair.  Each run
# is measured by GNU time (wall, user + sys CPU, peak RSS); the size is that
# of the image made.  Prints every run, the medians and the ratios
# ours/theirs (medians of the per-pair ratios), then a markdown table.  Not a
# test: it asserts nothing.
#
#   bench/rebuild.sh
#
# Rows:
#   merge8        linux-source-6.1 split into 8 layers (its top-level entries
#                 dealt round-robin), each an image of -Enoinline_data (which
#                 both can point into); the metadata-only merge of the 8
#   merge8-data   the same with --clean=data (one self-contained image)
#   merge50       50 small layers (each adds 200 files of 1..8 KiB and whites
#                 out 20 of the layer below), metadata-only merge
#   incr10        a 10-layer --incremental chain: the first of linux-source-6.1
#                 split into 10 directories built as an image, then the other
#                 9 added one by one (the wall and CPU of the whole chain, the
#                 size of the last image)
#   incr9         the same 9 increments alone: the first image is made and
#                 synced before the clock starts, and the clock stops after
#                 a final sync, so that both tools' data is on disk (ours
#                 fsyncs before its superblock; erofs-utils leaves it to
#                 writeback)
# The layer images are made once, by our mkfs, and given to both tools.
#
# Environment: PAIRS (default 3), MKFS, BUILD_DIR, EROFS_UTILS=DIR,
# BENCH_DIR (default /var/tmp/erofs-bench: the linux tree, the layers),
# ROWS (default "merge8 merge8-data merge50 incr10 incr9").
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bench_dir=${BENCH_DIR:-/var/tmp/erofs-bench}
ours=${MKFS:-${BUILD_DIR:-$top/build}/mkfs/mkfs.erofs}
pairs=${PAIRS:-3}
rows=${ROWS:-merge8 merge8-data merge50 incr10 incr9}
gnu_time=/usr/bin/time
uuid=6a1f3c2e-5b4d-4e8f-9a7b-0c1d2e3f4a5b

die() { echo "rebuild.sh: $*" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"

[ -x "$ours" ] || die "build first: $ours not found (or set MKFS / BUILD_DIR)"
"$gnu_time" --version 2>&1 | grep -q GNU || die "$gnu_time is not GNU time (package 'time')"
theirs=${EROFS_UTILS:-$top/../shared/anchors/erofs-utils-1.9.4}/mkfs.erofs
[ -x "$theirs" ] || theirs=/work/shared/anchors/erofs-utils-1.9.4/mkfs.erofs
[ -x "$theirs" ] || die "no erofs-utils 1.9.4 mkfs.erofs (set EROFS_UTILS=DIR): rebuild mode needs 1.9"

linux=$bench_dir/linux-source-6.1
work=$bench_dir/rebuild
out=$work/out
mkdir -p "$out"
if [ ! -d "$linux" ]; then
	[ -f /usr/src/linux-source-6.1.tar.xz ] || die "install linux-source-6.1"
	tar -C "$bench_dir" -xf /usr/src/linux-source-6.1.tar.xz
fi

# split_tree N DEST: DEST/1..N, the linux tree's top-level entries dealt
# round-robin, hard-linked (no copy)
split_tree() {
	local n=$1 dest=$2 i=0 e
	[ -d "$dest/$n" ] && return
	rm -rf "$dest"
	for e in $(cd "$linux" && ls -A | sort); do
		mkdir -p "$dest/$((i % n + 1))"
		cp -al "$linux/$e" "$dest/$((i % n + 1))/"
		i=$((i + 1))
	done
}

# small_layers DEST: 50 layers of 200 small files, each whiting out 20 of the one below
small_layers() {
	local dest=$1 i f
	[ -d "$dest/50" ] && return
	rm -rf "$dest"
	for i in $(seq 1 50); do
		mkdir -p "$dest/$i/d$i"
		for f in $(seq 1 200); do
			head -c $(( (f * 37 + i * 11) % 8192 + 1024 )) /dev/urandom > "$dest/$i/d$i/f$f"
		done
		if [ "$i" -gt 1 ]; then
			mkdir -p "$dest/$i/d$((i - 1))"
			for f in $(seq 1 20); do mknod "$dest/$i/d$((i - 1))/f$f" c 0 0; done
		fi
	done
}

# layer_images DIR N: DIR/N.img for each DIR/1..N, -Enoinline_data, made once
layer_images() {
	local dir=$1 n=$2 i
	for i in $(seq 1 "$n"); do
		[ -f "$dir/$i.img" ] || "$ours" --quiet -T 0 -U "$uuid" -Enoinline_data \
			"$dir/$i.img" "$dir/$i" || die "mkfs of layer $dir/$i failed"
	done
}

# measure IMAGE CMD...: "wall cpu rss_kb size" of CMD under GNU time, "- - - -" on failure
measure() {
	local img=$1 wall user sys rss size
	shift
	if ! "$gnu_time" -f '%e %U %S %M' -o "$out/time" "$@" >/dev/null 2>"$out/err"; then
		echo "    FAILED: $(tail -n 3 "$out/err" | tr '\n' ' ')" >&2
		echo "- - - -"
		return
	fi
	read -r wall user sys rss < <(tail -n 1 "$out/time")
	size=$(stat -c %s "$img")
	awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v z="$size" \
		'BEGIN { printf "%.2f %.2f %.0f %.0f\n", w, u + s, r, z }'
}

# chain TOOL IMG DIR N: DIR/1 as an image, then DIR/2..N added with --incremental
chain() {
	local tool=$1 img=$2 dir=$3 n=$4 i
	rm -f "$img"
	"$tool" --quiet -T 0 -U "$uuid" "$img" "$dir/1" || return 1
	for i in $(seq 2 "$n"); do
		"$tool" --quiet --incremental=data "$img" "$dir/$i" || return 1
	done
}
# steps TOOL IMG DIR N: DIR/2..N added to IMG, then sync
steps() {
	local tool=$1 img=$2 dir=$3 n=$4 i
	for i in $(seq 2 "$n"); do
		"$tool" --quiet --incremental=data "$img" "$dir/$i" || return 1
	done
	sync
}
export -f chain steps
export uuid

# run_row ROW TOOL IMG: one measured run
run_row() {
	local row=$1 tool=$2 img=$3
	rm -f "$img"
	sync
	case $row in
	merge8) measure "$img" "$tool" --quiet "$img" $(seq -f "$work/split8/%g.img" 1 8) ;;
	merge8-data) measure "$img" "$tool" --quiet --clean=data "$img" $(seq -f "$work/split8/%g.img" 1 8) ;;
	merge50) measure "$img" "$tool" --quiet "$img" $(seq -f "$work/small50/%g.img" 1 50) ;;
	incr10) measure "$img" bash -c 'chain "$@"' chain "$tool" "$img" "$work/split10" 10 ;;
	incr9)
		"$tool" --quiet -T 0 -U "$uuid" "$img" "$work/split10/1" >/dev/null || return 1
		sync
		measure "$img" bash -c 'steps "$@"' steps "$tool" "$img" "$work/split10" 10 ;;
	esac
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
table=()
for row in $rows; do
	case $row in
	merge8|merge8-data) split_tree 8 "$work/split8"; layer_images "$work/split8" 8 ;;
	merge50) small_layers "$work/small50"; layer_images "$work/small50" 50 ;;
	incr10|incr9) split_tree 10 "$work/split10" ;;
	*) die "unknown row '$row'" ;;
	esac
	declare -a ow=() oc=() orss=() osz=() tw=() tc=() trss=() tsz=() rw=() rc=() rr=() rs=()
	for p in $(seq 1 "$pairs"); do
		read -r w c r z < <(run_row "$row" "$ours" "$out/ours.img")
		read -r W C R Z < <(run_row "$row" "$theirs" "$out/theirs.img")
		printf '%-12s pair %d  ours: %6ss %6ss CPU %8s KiB %12s B   erofs-utils: %6ss %6ss CPU %8s KiB %12s B\n' \
			"$row" "$p" "$w" "$c" "$r" "$z" "$W" "$C" "$R" "$Z"
		ow+=("$w"); oc+=("$c"); orss+=("$r"); osz+=("$z")
		tw+=("$W"); tc+=("$C"); trss+=("$R"); tsz+=("$Z")
		rw+=("$(ratio "$w" "$W")"); rc+=("$(ratio "$c" "$C")")
		rr+=("$(ratio "$r" "$R")"); rs+=("$(ratio "$z" "$Z")")
	done
	line="| $row | $(median "${ow[@]}") / $(median "${tw[@]}") | $(median "${oc[@]}") / $(median "${tc[@]}") | $(median "${orss[@]}") / $(median "${trss[@]}") | $(median "${osz[@]}") / $(median "${tsz[@]}") | $(fmt %.2f "$(median "${rw[@]}")") | $(fmt %.2f "$(median "${rc[@]}")") | $(fmt %.2f "$(median "${rr[@]}")") | $(fmt %.3f "$(median "${rs[@]}")") |"
	echo "$line"
	table+=("$line")
	rm -f "$out"/*.img
done

echo
echo "load average at the start: $load0; $(nproc) CPUs; PAIRS=$pairs"
echo "| row | wall s ours / theirs | CPU s | RSS KiB | size B | wall | CPU | RSS | size |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${table[@]}"
