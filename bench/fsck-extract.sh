#!/bin/bash
# Benchmark: fsck.erofs --extract of the linux-6.1 tree's -zlz4hc image by
# our fsck.erofs with --workers=1, with --workers=N (default: the CPUs) and
# by erofs-utils 1.9.4's fsck.erofs, in the same run, alternating round by
# round (ours-1, ours-N, theirs, ours-1, ...) so that a change in the
# machine's load hits all three.  GNU time gives each run's wall time, user
# + sys CPU time and peak RSS.  Prints every run, the medians, the speed-up
# of N workers over one and the ratio ours-N / erofs-utils (medians of the
# per-round ratios), then a markdown row.  Not a test: it asserts nothing,
# except that the three trees extracted in the first round are the same.
#
#   bench/fsck-extract.sh [IMAGE]
#
# Environment:
#   ROUNDS=N         rounds (default 3)
#   WORKERS=N        our parallel run's --workers (default: online CPUs)
#   FSCK=FILE        our fsck.erofs (default $BUILD_DIR/fsck/fsck.erofs, BUILD_DIR
#                    default build/ of this checkout); MKFS likewise, to make the image
#   EROFS_UTILS=DIR  erofs-utils' DIR/fsck.erofs (default: the 1.9.4 anchor beside
#                    this checkout, or /work/shared/anchors/erofs-utils-1.9.4)
#   BENCH_DIR=DIR    the tree and the image (default /var/tmp/erofs-bench)
#   BENCH_TARGET=DIR the trees are extracted below DIR/erofs-bench-fsck, removed
#                    at the end (default DIR: /dev/shm, a tmpfs; round 1 keeps
#                    three trees, 4.5 GB, for the diff)
#   TREE=DIR         the tree to image (default $BENCH_DIR/linux-source-6.1)
# The image is made once (ours, -zlz4hc -T 0, fixed UUID) and kept as
# $BENCH_DIR/fsck-lz4hc.img.  The page cache is warm: one unmeasured
# extraction by each tool first.  Each target is removed, then synced,
# after every run (not timed), so that one run's writeback does not fall
# into the next.
#
# Why a tmpfs: on ext4 (/var/tmp), once a first 75k-file tree has been
# extracted and removed, every later run of any tool took ~24.8 s instead
# of ~2.3 s, nearly all of it kernel time finding a free inode (ext4 keeps
# away from just-deleted inodes: recently_deleted(), find_inode_bit() were
# a third of the profile), so the figures measured ext4's allocator, not
# the extractors.  A disk target is still there for whoever wants it:
# BENCH_TARGET=/var/tmp/erofs-bench (a freshly made file system
# per run would be needed for figures that mean anything there).
#
# The speed-up needs idle CPUs: with autogroup scheduling
# (/proc/sys/kernel/sched_autogroup_enabled), a session gets its share of
# the CPUs against the other busy sessions whatever its thread count, so
# on a loaded machine --workers=2 gets the CPU time --workers=1 gets.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bench_dir=${BENCH_DIR:-/var/tmp/erofs-bench}
build=${BUILD_DIR:-$top/build}
ours=${FSCK:-$build/fsck/fsck.erofs}
mkfs=${MKFS:-$build/mkfs/mkfs.erofs}
rounds=${ROUNDS:-3}
workers=${WORKERS:-$(nproc)}
tree=${TREE:-$bench_dir/linux-source-6.1}
img=${1:-$bench_dir/fsck-lz4hc.img}
gnu_time=/usr/bin/time
out=${BENCH_TARGET:-/dev/shm}/erofs-bench-fsck

die() { echo "fsck-extract.sh: $*" >&2; exit 1; }

theirs=
for d in ${EROFS_UTILS:-} "$top/../shared/anchors/erofs-utils-1.9.4" /work/shared/anchors/erofs-utils-1.9.4; do
	[ -x "$d/fsck.erofs" ] && { theirs=$d/fsck.erofs; break; }
done
[ -n "$theirs" ] || die "erofs-utils' fsck.erofs not found (set EROFS_UTILS=DIR)"
[ -x "$ours" ] || die "build first: $ours not found (or set FSCK / BUILD_DIR)"
"$gnu_time" --version 2>&1 | grep -q GNU || die "$gnu_time is not GNU time (package 'time')"
mkdir -p "$bench_dir"
if [ ! -f "$img" ]; then
	[ -d "$tree" ] || die "no tree at $tree (bench/compare.sh extracts linux-source-6.1 there)"
	[ -x "$mkfs" ] || die "no $mkfs to make the image"
	echo "making $img from $tree"
	"$mkfs" --quiet -zlz4hc -T 0 -U 6a1f3c2e-5b4d-4e8f-9a7b-0c1d2e3f4a5b "$img" "$tree"
fi

# median VALUE...
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run LABEL CMD...: extracts into $out/LABEL under GNU time; sets WALL CPU RSS
run() {
	local label=$1 t
	shift
	rm -rf "${out:?}/$label"
	"$gnu_time" -f '%e %U %S %M' -o "$out/time" "$@" --extract="$out/$label" "$img" \
		>/dev/null 2>"$out/err" || { tail -3 "$out/err" >&2; die "$label failed"; }
	t=$(tail -1 "$out/time")
	read -r WALL u s RSS <<<"$t"
	CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	RSS=$((RSS / 1024))
}

clean() { rm -rf "${out:?}/$1"; sync; }

mkdir -p "$out"
echo "image: $img ($(stat -c %s "$img") bytes); ours: $ours; erofs-utils: $theirs"
echo "target: $out ($(stat -f -c %T "$out")); load: $(uptime)"
[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] &&
	echo "autogroup scheduling is on: other busy sessions cap this one's share of the CPUs"
echo "warm-up (unmeasured)"
run warm "$ours" --workers=1; clean warm
run warm "$theirs"; clean warm

w1=() wn=() th=() c1=() cn=() ct=() r1=() rn=() rt=() speed=() vs=()
for ((i = 1; i <= rounds; i++)); do
	run one "$ours" --workers=1
	w1+=("$WALL"); c1+=("$CPU"); r1+=("$RSS")
	echo "round $i: ours --workers=1:   wall $WALL s  CPU $CPU s  RSS $RSS MB"
	[ "$i" -gt 1 ] && clean one
	run par "$ours" --workers="$workers"
	wn+=("$WALL"); cn+=("$CPU"); rn+=("$RSS")
	echo "round $i: ours --workers=$workers:   wall $WALL s  CPU $CPU s  RSS $RSS MB"
	[ "$i" -gt 1 ] && clean par
	run theirs "$theirs"
	th+=("$WALL"); ct+=("$CPU"); rt+=("$RSS")
	echo "round $i: erofs-utils 1.9.4: wall $WALL s  CPU $CPU s  RSS $RSS MB"
	if [ "$i" -eq 1 ]; then
		# the same tree from all three (erofs-utils restores no xattrs by
		# default: the linux tree has none)
		diff -r --no-dereference "$out/one" "$out/par" >/dev/null ||
			die "--workers=1 and --workers=$workers extracted different trees"
		diff -r --no-dereference "$out/one" "$out/theirs" >/dev/null ||
			die "ours and erofs-utils' extracted different trees"
		echo "round 1: the three extracted trees are identical (diff -r)"
		clean one; clean par
	fi
	clean theirs
	speed+=("$(awk -v a="${w1[-1]}" -v b="$WALL" -v n="${wn[-1]}" 'BEGIN { printf "%.4f", a / n }')")
	vs+=("$(awk -v a="${wn[-1]}" -v b="$WALL" 'BEGIN { printf "%.4f", a / b }')")
done
m1=$(median "${w1[@]}") mn=$(median "${wn[@]}") mt=$(median "${th[@]}")
echo
echo "medians of $rounds rounds: ours --workers=1 $m1 s ($(median "${c1[@]}") s CPU, $(median "${r1[@]}") MB)," \
	"ours --workers=$workers $mn s ($(median "${cn[@]}") s CPU, $(median "${rn[@]}") MB)," \
	"erofs-utils $mt s ($(median "${ct[@]}") s CPU, $(median "${rt[@]}") MB)"
echo "speed-up --workers=$workers over --workers=1 (median of rounds): $(median "${speed[@]}")x"
echo "ours --workers=$workers / erofs-utils wall (median of rounds): $(median "${vs[@]}")"
echo "load at the end: $(uptime)"
echo
echo "| image | ours w=1 wall / CPU s | ours w=$workers wall / CPU s | erofs-utils wall / CPU s | speed-up | ours w=$workers / erofs-utils |"
echo "|---|---|---|---|---|---|"
echo "| linux-6.1 \`-zlz4hc\` | $m1 / $(median "${c1[@]}") | $mn / $(median "${cn[@]}") | $mt / $(median "${ct[@]}") | $(median "${speed[@]}") | $(median "${vs[@]}") |"
rm -rf "${out:?}"
