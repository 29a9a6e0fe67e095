#!/bin/bash
# Benchmark: our mkfs.erofs against erofs-utils' (1.9.4), in the same run, on
# the same tree, with the same options, alternating pair by pair (ours,
# theirs, ours, theirs, ...) so that a change in the machine's load hits both.
# Each run is measured by GNU time (wall, user + sys CPU, peak RSS); the size
# is that of the image file.  Per setting it prints every run, the medians and
# the four ratios ours/theirs (each the median of the per-pair ratios), and at
# the end a markdown table for README.  Not a test: it asserts nothing.
#
#   bench/compare.sh [TREE]
#
# Trees, by default both, in this order:
#   linux  linux-source-6.1, extracted once from /usr/src/linux-source-6.1.tar.xz
#          into $BENCH_DIR; every setting of SETTINGS
#   usr    this machine's /usr, a root-filesystem-like tree; SETTINGS too
#          (not in the default list; 9 GB here)
#   rootfs a root-filesystem-like sample of this machine, about 115 MB:
#          /etc, /usr/sbin, /usr/lib/python3.11, /usr/share/perl,
#          /usr/lib/git-core and /usr/share/zoneinfo (config text, binaries,
#          Python source and bytecode, Perl, data), copied once into
#          $BENCH_DIR/rootfs-sample; SETTINGS too (not in the default list)
#   small  1,000,000 files of 1..4 KiB in 1,000 directories, made once by
#          bench/gen-small-files.sh into $BENCH_DIR; SMALL_SETTINGS, by default
#          plain (no -z) and -zlz4hc
#   layer  a container layer: linux-source-6.1's tar (1.4 GB), decompressed
#          once into $BENCH_DIR and given to both as a file (--tar=f);
#          LAYER_SETTINGS, by default --tar=f -zlz4hc, then containerd's
#          command line (--tar=f --aufs -Enoinline_data --sort=none)
# The page cache is warm, not dropped: before a tree's first setting each tool
# builds it once unmeasured (plain), which reads the whole tree.
#
# Environment:
#   TREE=DIR         measure DIR (same as the argument) with SETTINGS, not the trees above
#   TREES=LIST       which default trees: "linux small layer" (default), or some of them
#   SETTINGS=LIST    settings separated by ';' or newlines, "plain" for no option;
#                    default: the eight settings of issue 12 (DEFAULT_SETTINGS below)
#   SMALL_SETTINGS   settings for the small-files tree (default "plain;-zlz4hc")
#   CODECS=1         add the four settings of the other algorithms (issue 14,
#                    CODEC_SETTINGS below) to SETTINGS; CODECS=only: just them
#   SQUASHFS=1       also time mksquashfs -comp xz and -comp zstd with 128 KiB
#                    blocks once per tree (what users of those algorithms compare with)
#   SQUASHFS_COLUMN=1  a third tool in every pair whose setting mksquashfs has a
#                    counterpart for (squashfs_args below): the same algorithm and
#                    level, -b equal to our -C, -processors as --workers; it runs
#                    after erofs-utils in each pair and gets its own ratios
#   CODECS=squashfs  the settings of issue 27 (SQUASHFS_SETTINGS below): zstd 3/15/19,
#                    deflate 6, lzma 6 and lz4hc, 128 KiB pclusters, fragments and
#                    ztailpacking; implies SQUASHFS_COLUMN=1
#   PAIRS=N          ours/theirs pairs per setting (default 3)
#   WORKERS=N        --workers=N for both (default: online CPUs); erofs-utils gets it
#                    only if its --help lists --workers (1.9.4 does; 1.5 does not)
#   MKFS=FILE        our mkfs.erofs (default $BUILD_DIR/mkfs/mkfs.erofs, BUILD_DIR
#                    default build/ of this checkout)
#   EROFS_UTILS=DIR  the erofs-utils to compare with, DIR/mkfs.erofs.  Default: the
#                    1.9.4 anchor ../shared/anchors/erofs-utils-1.9.4 beside this
#                    checkout (or /work/shared/anchors/...) when present, else
#                    Debian's /usr/bin/mkfs.erofs (1.5: no fragments, no dedupe,
#                    no --workers; those rows then have no ratio)
#   WARMUP=0         skip the warm-up runs
#   BENCH_DIR=DIR    trees, scratch images and the last table (default /var/tmp/erofs-bench)
#
# Both tools get -T 0 -U <fixed uuid> --quiet (reproducible images: each
# tool's size must be the same in every pair, a warning says otherwise).
# Images go to $BENCH_DIR/out and are deleted after each run, followed by a
# sync (not timed), so that one run's writeback does not fall into the next.
# mksquashfs is measured only when asked (SQUASHFS=1 or SQUASHFS_COLUMN=1):
# most settings here have no squashfs counterpart and a third tool per pair
# makes the run half again as long.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bench_dir=${BENCH_DIR:-/var/tmp/erofs-bench}
ours=${MKFS:-${BUILD_DIR:-$top/build}/mkfs/mkfs.erofs}
pairs=${PAIRS:-3}
workers=${WORKERS:-$(nproc)}
uuid=6a1f3c2e-5b4d-4e8f-9a7b-0c1d2e3f4a5b
gnu_time=/usr/bin/time
DEFAULT_SETTINGS='-zlz4hc;-zlz4;-zlz4hc,9 -C262144;-zlz4hc -C65536 -Eztailpacking
-zlz4hc -Efragments,ztailpacking;plain
-zlz4hc,12 -C65536 -Ededupe,fragments,ztailpacking;--chunksize=4096'
CODEC_SETTINGS='-zlzma -C65536;-zlzma,9 -C1048576 -Efragments,ztailpacking;-zzstd -C65536
-zdeflate -C65536'
SQUASHFS_SETTINGS='-zzstd,3 -C131072 -Efragments,ztailpacking
-zzstd,15 -C131072 -Efragments,ztailpacking;-zzstd,19 -C131072 -Efragments,ztailpacking
-zdeflate,6 -C131072 -Efragments,ztailpacking;-zlzma,6 -C131072 -Efragments,ztailpacking
-zlz4hc -C131072 -Efragments,ztailpacking'

die() { echo "compare.sh: $*" >&2; exit 1; }

[ -x "$ours" ] || die "build first: $ours not found (or set MKFS / BUILD_DIR)"
"$gnu_time" --version 2>&1 | grep -q 'GNU' ||
	die "$gnu_time is not GNU time: install package 'time' (scripts/install-deps.sh)"
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive number, not '$pairs'"
[[ $workers =~ ^[1-9][0-9]*$ ]] || die "WORKERS must be a positive number, not '$workers'"

if [ -n "${EROFS_UTILS:-}" ]; then
	theirs=$EROFS_UTILS/mkfs.erofs
elif [ -x "$top/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs" ]; then
	theirs=$(cd "$top/../shared/anchors/erofs-utils-1.9.4" && pwd)/mkfs.erofs
elif [ -x /work/shared/anchors/erofs-utils-1.9.4/mkfs.erofs ]; then
	theirs=/work/shared/anchors/erofs-utils-1.9.4/mkfs.erofs
else
	theirs=/usr/bin/mkfs.erofs
fi
[ -x "$theirs" ] || die "no erofs-utils mkfs.erofs at $theirs (set EROFS_UTILS=DIR)"
# "mkfs.erofs (erofs-utils) 1.9.4", or "mkfs.erofs 1.5" and a usage error
their_version=$("$theirs" -V 2>/dev/null | awk 'NR == 1 { print $NF }' || true)
their_version=${their_version:-unknown version}
their_help=$("$theirs" --help 2>&1 || true)
their_opts=(-T 0 -U "$uuid")
grep -q -- '--quiet' <<<"$their_help" && their_opts+=(--quiet)
their_workers="not supported"
if grep -q -- '--workers' <<<"$their_help"; then
	their_opts+=("--workers=$workers")
	their_workers=$workers
fi
our_opts=(-T 0 -U "$uuid" --quiet "--workers=$workers")
case $their_version in
*1.9.4*) ;;
*) echo "compare.sh: WARNING: comparing with erofs-utils $their_version, not 1.9.4;" \
	"(1.5 ignores -E options it does not know, such as fragments: those rows compare unlike images)" >&2 ;;
esac

out=$bench_dir/out
mkdir -p "$out"
rm -f "$out"/*.img

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"

# split_settings LIST: one setting per line, blank ones dropped
split_settings() {
	tr ';' '\n' <<<"$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sed '/^$/d'
}

# measure IMAGE CMD...: runs CMD under GNU time; prints "wall cpu rss_kb size",
# or "- - - -" when CMD fails (its last words go to stderr)
measure() {
	local img=$1 wall user sys rss size
	shift
	rm -f "$img"
	if ! "$gnu_time" -f '%e %U %S %M' -o "$out/time" "$@" >/dev/null 2>"$out/err"; then
		echo "    FAILED: ${*##*/}: $(tail -n 3 "$out/err" | tr '\n' ' ')" >&2
		rm -f "$img"
		sync
		echo "- - - -"
		return
	fi
	read -r wall user sys rss < <(tail -n 1 "$out/time")
	size=$(stat -c %s "$img")
	rm -f "$img"
	sync
	awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v z="$size" \
		'BEGIN { printf "%.2f %.2f %.0f %.0f\n", w, u + s, r, z }'
}

# squashfs_args SETTING: mksquashfs's options for the same algorithm, level and
# block size (our -C, else the 4 KiB block), or nothing when it has none (no
# -z, lz4 levels, lzma levels but 6: mksquashfs's xz has one preset).  Our -E
# options have no counterpart; mksquashfs packs tails into fragments anyway.
squashfs_args() {
	local word alg="" level="" block=4096
	for word in $1; do
		case $word in
		-z*) alg=${word#-z}; level=${alg#*,}; [ "$level" = "$alg" ] && level=; alg=${alg%%,*} ;;
		-C*) block=${word#-C} ;;
		esac
	done
	case $alg in
	zstd) echo "-comp zstd -Xcompression-level ${level:-3}" ;;
	deflate) echo "-comp gzip -Xcompression-level ${level:-1}" ;;
	lzma) [ "${level:-6}" = 6 ] && echo "-comp xz" ;;
	lz4hc) [ -z "$level" ] && echo "-comp lz4 -Xhc" ;;
	lz4) echo "-comp lz4" ;;
	esac | sed "s/\$/ -b $block/" | grep . || true
}

print_run() { # LABEL TOOL "wall cpu rss_kb size"
	local w c r s
	read -r w c r s <<<"$3"
	printf '  %-8s %-12s %9s %9s %9s %14s\n' "$1" "$2" "$(fmt %.2f "$w")" "$(fmt %.2f "$c")" \
		"$(fmt %.1f "$(ratio "$r" 1024)")" "$s"
}

# same_sizes TOOL SIZE...: -T and -U make images reproducible; say so when they are not
same_sizes() {
	local tool=$1
	shift
	[ "$(printf '%s\n' "$@" | awk '$1 != "-"' | sort -u | wc -l)" -le 1 ] ||
		echo "  WARNING: $tool made images of different sizes: $*"
}

table=()
squash_table=()	# the mksquashfs column's rows (SQUASHFS_COLUMN=1)
squash_column=${SQUASHFS_COLUMN:-0}
[ "${CODECS:-0}" = squashfs ] && squash_column=1
squash_opts=(-noappend -no-progress -quiet -processors "$workers" -mkfs-time 0 -all-time 0)
if [ "$squash_column" = 1 ] && ! command -v mksquashfs >/dev/null; then
	echo "compare.sh: no mksquashfs: the squashfs column stays empty" >&2
	squash_column=0
fi
tree_name=
warm_opts=()	# the warm-up's options (--tar=f for the layer)
# bench_setting SETTING: PAIRS alternating pairs on $tree, summary, one table row
bench_setting() {
	local setting=$1 words=() i o t
	local ow=() oc=() orss=() os=() tw=() tc=() trss=() ts=() rw=() rc=() rr=() rs=()
	[ "$setting" = plain ] || read -r -a words <<<"$setting"
	echo
	echo "== $tree_name: $setting (pairs: $pairs)"
	printf '  %-8s %-12s %9s %9s %9s %14s\n' pair tool "wall s" "CPU s" "RSS MB" "size B"
	local sq_words=() sq q oo sw=() sc=() srss=() ss=() qc=() qs=()
	if [ "$squash_column" = 1 ] && sq=$(squashfs_args "$setting") && [ -n "$sq" ]; then
		read -r -a sq_words <<<"$sq"
	fi
	for ((i = 1; i <= pairs; i++)); do
		o=$(measure "$out/ours.img" "$ours" "${our_opts[@]}" "${words[@]}" "$out/ours.img" "$tree")
		print_run "$i" ours "$o"
		t=$(measure "$out/theirs.img" "$theirs" "${their_opts[@]}" "${words[@]}" "$out/theirs.img" "$tree")
		print_run "$i" erofs-utils "$t"
		if [ ${#sq_words[@]} -gt 0 ]; then
			q=$(measure "$out/sq.img" mksquashfs "$tree" "$out/sq.img" "${sq_words[@]}" \
				"${squash_opts[@]}")
			print_run "$i" mksquashfs "$q"
			read -r -a q <<<"$q"
			read -r -a oo <<<"$o"
			sw+=("${q[0]}") sc+=("${q[1]}") srss+=("${q[2]}") ss+=("${q[3]}")
			qc+=("$(ratio "${oo[1]}" "${q[1]}")") qs+=("$(ratio "${oo[3]}" "${q[3]}")")
		fi
		read -r -a o <<<"$o"
		read -r -a t <<<"$t"
		ow+=("${o[0]}") oc+=("${o[1]}") orss+=("${o[2]}") os+=("${o[3]}")
		tw+=("${t[0]}") tc+=("${t[1]}") trss+=("${t[2]}") ts+=("${t[3]}")
		rw+=("$(ratio "${o[0]}" "${t[0]}")") rc+=("$(ratio "${o[1]}" "${t[1]}")")
		rr+=("$(ratio "${o[2]}" "${t[2]}")") rs+=("$(ratio "${o[3]}" "${t[3]}")")
	done
	same_sizes ours "${os[@]}"
	same_sizes erofs-utils "${ts[@]}"
	local mo mt
	mo="$(median "${ow[@]}") $(median "${oc[@]}") $(median "${orss[@]}") $(median "${os[@]}")"
	mt="$(median "${tw[@]}") $(median "${tc[@]}") $(median "${trss[@]}") $(median "${ts[@]}")"
	print_run median ours "$mo"
	print_run median erofs-utils "$mt"
	local r=("$(median "${rw[@]}")" "$(median "${rc[@]}")" "$(median "${rr[@]}")" "$(median "${rs[@]}")")
	printf '  ratio ours/erofs-utils (median of pairs): wall %s  CPU %s  RSS %s  size %s\n' \
		"$(fmt %.2f "${r[0]}")" "$(fmt %.2f "${r[1]}")" "$(fmt %.2f "${r[2]}")" "$(fmt %.4f "${r[3]}")"
	read -r -a mo <<<"$mo"
	read -r -a mt <<<"$mt"
	if [ ${#sq_words[@]} -gt 0 ]; then
		local ms="$(median "${sw[@]}") $(median "${sc[@]}") $(median "${srss[@]}") $(median "${ss[@]}")"
		print_run median mksquashfs "$ms"
		printf '  ratio ours/mksquashfs (%s; median of pairs): CPU %s  size %s\n' "${sq_words[*]}" \
			"$(fmt %.2f "$(median "${qc[@]}")")" "$(fmt %.4f "$(median "${qs[@]}")")"
		read -r -a ms <<<"$ms"
		squash_table+=("| $tree_name | \`$setting\` | \`${sq_words[*]}\` | $(fmt %.1f "${ms[0]}") | $(fmt %.1f "${ms[1]}") | $(fmt %.0f "$(ratio "${ms[2]}" 1024)") | $(fmt %.0f "${ms[3]}") | $(fmt %.2f "$(median "${qc[@]}")") | $(fmt %.4f "$(median "${qs[@]}")") |")
	fi
	table+=("| $tree_name | \`$setting\` | $(fmt %.1f "${mo[0]}") / $(fmt %.1f "${mt[0]}") | $(fmt %.1f "${mo[1]}") / $(fmt %.1f "${mt[1]}") | $(fmt %.0f "$(ratio "${mo[2]}" 1024)") / $(fmt %.0f "$(ratio "${mt[2]}" 1024)") | $(fmt %.0f "${mo[3]}") / $(fmt %.0f "${mt[3]}") | $(fmt %.2f "${r[0]}") | $(fmt %.2f "${r[1]}") | $(fmt %.2f "${r[2]}") | $(fmt %.4f "${r[3]}") |")
}

# bench_tree NAME DIR SETTINGS: warm-up, then every setting
bench_tree() {
	local setting
	tree_name=$1 tree=$2
	echo
	echo "### tree $tree_name: $tree ($(find "$tree" -printf '%y %s\n' | awk '
		$1 == "f" { files++; bytes += $2 } $1 == "d" { dirs++ }
		END { printf "%d files, %d directories, %.0f bytes", files, dirs, bytes }'))"
	if [ "${WARMUP:-1}" != 0 ]; then
		echo "  warm-up: each tool once, plain, not measured"
		measure "$out/ours.img" "$ours" "${our_opts[@]}" "${warm_opts[@]}" "$out/ours.img" "$tree" >/dev/null
		measure "$out/theirs.img" "$theirs" "${their_opts[@]}" "${warm_opts[@]}" "$out/theirs.img" "$tree" >/dev/null
	fi
	while IFS= read -r setting; do
		bench_setting "$setting"
	done < <(split_settings "$3")
	[ "${SQUASHFS:-0}" = 1 ] && bench_squashfs
	return 0
}

# bench_squashfs: mksquashfs xz and zstd, 128 KiB blocks, all CPUs, one run each
bench_squashfs() {
	local comp m
	command -v mksquashfs >/dev/null || { echo "  (no mksquashfs)"; return 0; }
	for comp in xz zstd; do
		m=$(measure "$out/sq.img" mksquashfs "$tree" "$out/sq.img" -comp "$comp" -b 131072 \
			-noappend -no-progress -quiet -processors "$workers" -mkfs-time 0 -all-time 0)
		echo
		echo "== $tree_name: mksquashfs -comp $comp -b 128K (one run)"
		print_run 1 mksquashfs "$m"
		read -r -a m <<<"$m"
		table+=("| $tree_name | mksquashfs \`-comp $comp -b 128K\` | $(fmt %.1f "${m[0]}") | $(fmt %.1f "${m[1]}") | $(fmt %.0f "$(ratio "${m[2]}" 1024)") | $(fmt %.0f "${m[3]}") | | | | |")
	done
}

start=$SECONDS
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "ours:        $ours ($("$ours" -V 2>/dev/null | awk 'NR == 1 { print $NF }'), $(git -C "$top" describe --always --dirty 2>/dev/null || echo 'no git'))"
echo "erofs-utils: $theirs ($their_version)"
echo "options:     both -T 0 -U $uuid; --workers=$workers for ours, erofs-utils: $their_workers"
echo "machine:     $(nproc) CPUs, load $load_start; pairs per setting: $pairs"

# make_rootfs_sample DIR: the rootfs tree (see the header), made once; the
# parts a machine lacks are left out
make_rootfs_sample() {
	local dir=$1 part
	[ -d "$dir" ] && return
	mkdir -p "$dir.new"
	for part in /etc /usr/sbin /usr/lib/python3.11 /usr/share/perl /usr/lib/git-core \
		/usr/share/zoneinfo; do
		[ -d "$part" ] || continue
		mkdir -p "$dir.new$(dirname "$part")"
		cp -a "$part" "$dir.new$part"
	done
	mv "$dir.new" "$dir"
}

tree=${1:-${TREE:-}}
settings=${SETTINGS:-$DEFAULT_SETTINGS}
case ${CODECS:-0} in
only) settings=$CODEC_SETTINGS ;;
squashfs) settings=$SQUASHFS_SETTINGS ;;
1) settings="$settings;$CODEC_SETTINGS" ;;
esac
if [ -n "$tree" ]; then
	[ -d "$tree" ] || die "$tree is not a directory"
	bench_tree "$(basename "$tree")" "$tree" "$settings"
else
	for name in ${TREES:-linux small layer}; do
		case $name in
		linux)
			if [ ! -d "$bench_dir/linux-source-6.1" ]; then
				echo "extracting /usr/src/linux-source-6.1.tar.xz into $bench_dir ..." >&2
				tar -C "$bench_dir" -xJf /usr/src/linux-source-6.1.tar.xz
			fi
			bench_tree linux-6.1 "$bench_dir/linux-source-6.1" "$settings"
			;;
		small)
			"$top/bench/gen-small-files.sh" "$bench_dir/small-1m"
			bench_tree "1M small files" "$bench_dir/small-1m" "${SMALL_SETTINGS:-plain;-zlz4hc}"
			;;
		usr)
			bench_tree "/usr" /usr "$settings"
			;;
		rootfs)
			make_rootfs_sample "$bench_dir/rootfs-sample"
			bench_tree "rootfs sample" "$bench_dir/rootfs-sample" "$settings"
			;;
		layer)
			if [ ! -f "$bench_dir/linux-6.1.tar" ]; then
				echo "decompressing /usr/src/linux-source-6.1.tar.xz into $bench_dir ..." >&2
				xz -dc /usr/src/linux-source-6.1.tar.xz >"$bench_dir/linux-6.1.tar.new"
				mv "$bench_dir/linux-6.1.tar.new" "$bench_dir/linux-6.1.tar"
			fi
			warm_opts=(--tar=f)
			bench_tree "linux-6.1 layer tar" "$bench_dir/linux-6.1.tar" \
				"${LAYER_SETTINGS:---tar=f -zlz4hc;--tar=f --aufs -Enoinline_data --sort=none}"
			warm_opts=()
			;;
		*) die "unknown tree '$name' in TREES (linux, small, layer, usr, rootfs)" ;;
		esac
	done
fi

{
	echo "Measured $(date -u +%Y-%m-%d) by bench/compare.sh: $(nproc) CPUs (load $load_start at the"
	echo "start, $(cut -d' ' -f1-3 /proc/loadavg) at the end), ours $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')"
	echo "against erofs-utils $their_version, --workers=$workers, medians of $pairs alternating pairs;"
	echo "ratios are ours / erofs-utils, the median of the per-pair ratios."
	echo
	echo "| tree | settings | wall s ours / theirs | CPU s ours / theirs | peak RSS MB ours / theirs | image B ours / theirs | wall | CPU | RSS | size |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${table[@]}"
	if [ ${#squash_table[@]} -gt 0 ]; then
		echo
		echo "mksquashfs $(mksquashfs -version 2>/dev/null | awk 'NR == 1 { print $3 }') in the same pairs, -processors $workers; ratios are ours / mksquashfs."
		echo
		echo "| tree | our settings | mksquashfs options | wall s | CPU s | peak RSS MB | image B | CPU ours/sq | size ours/sq |"
		echo "|---|---|---|---|---|---|---|---|---|"
		printf '%s\n' "${squash_table[@]}"
	fi
} >"$bench_dir/last-table.md"
echo
cat "$bench_dir/last-table.md"
echo
echo "total $((SECONDS - start)) s; table saved in $bench_dir/last-table.md"
