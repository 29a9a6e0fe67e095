#!/bin/bash
# Benchmark: our mkfs.erofs against Debian's mkfs.erofs (erofs-utils) and
# mksquashfs, measured in the same run on the same tree, at comparable
# settings.  Prints wall time, CPU time, peak RSS and image size per tool,
# and our/their ratios.  Not a test: it asserts nothing.
#
#   bench/compare.sh [TREE]     default: the linux-source-6.1 tree, extracted
#                               once into $BENCH_DIR (default /var/tmp/erofs-bench)
#   SETTINGS=$'-zlz4\n-zlz4hc' bench/compare.sh    only these settings
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ours=${MKFS:-$top/build/mkfs/mkfs.erofs}
theirs=/usr/bin/mkfs.erofs
bench_dir=${BENCH_DIR:-/var/tmp/erofs-bench}
mkdir -p "$bench_dir"

tree=${1:-}
if [ -z "$tree" ]; then
	tree=$bench_dir/linux-source-6.1
	if [ ! -d "$tree" ]; then
		echo "extracting /usr/src/linux-source-6.1.tar.xz into $bench_dir ..." >&2
		tar -C "$bench_dir" -xJf /usr/src/linux-source-6.1.tar.xz
	fi
fi
[ -x "$ours" ] || { echo "build first: $ours not found" >&2; exit 1; }
files=$(find "$tree" -type f | wc -l)
bytes=$(find "$tree" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
echo "tree: $tree ($files files, $bytes bytes)"
uuid=00000000-0000-0000-0000-000000000000
out=$bench_dir/out
mkdir -p "$out"

# measure NAME IMAGE CMD...: prints "wall cpu rss size"
measure() {
	local name=$1 img=$2 wall user sys rss
	shift 2
	rm -f "$img"
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	# warm the page cache the same way for every tool
	tar -cf - -C "$tree" . >/dev/null
	/usr/bin/time -f '%e %U %S %M' -o "$out/$name.time" "$@" >/dev/null 2>"$out/$name.err" || {
		echo "$name failed: $(tail -2 "$out/$name.err")" >&2
		echo "- - - -"
		return
	}
	read -r wall user sys rss <"$out/$name.time"
	echo "$wall $(echo "$user + $sys" | bc) $((rss / 1024)) $(stat -c %s "$img")"
}

row() { # LABEL "wall cpu rss size" [reference]
	local label=$1 m=$2 ref=${3:-} w c r s rw rc rr rs
	read -r w c r s <<<"$m"
	printf '%-34s %8s s %8s s %6s MB %13s B' "$label" "$w" "$c" "$r" "$s"
	if [ -n "$ref" ] && [ "$w" != - ]; then
		read -r rw rc rr rs <<<"$ref"
		[ "$rw" != - ] && printf '   wall %.2fx  size %.4fx  rss %.2fx' \
			"$(echo "$w / $rw" | bc -l)" "$(echo "$s / $rs" | bc -l)" "$(echo "$r / $rr" | bc -l)"
	fi
	echo
}

# the settings of the compression and dedup issues' targets; Debian's 1.5
# predates fragments and dedupe, so those rows have no ratio.  SETTINGS
# (one setting per line) replaces the list.
settings=("-zlz4hc" "-zlz4hc -C65536 -Eztailpacking" "-zlz4" ""
	"-zlz4hc,12 -C65536 -Eztailpacking" "--chunksize=4096"
	"-zlz4hc -C65536 -Efragments,ztailpacking" "-zlz4hc -Ededupe"
	"-zlz4hc,12 -C65536 -Ededupe,fragments,ztailpacking")
if [ -n "${SETTINGS:-}" ]; then
	mapfile -t settings <<<"$SETTINGS"
fi
for s in "${settings[@]}"; do
	label=${s:-uncompressed}
	echo "== $label"
	# shellcheck disable=SC2086
	o=$(measure ours "$out/ours.img" "$ours" --quiet -U "$uuid" $s "$out/ours.img" "$tree")
	# shellcheck disable=SC2086
	t=$(measure theirs "$out/theirs.img" "$theirs" -U "$uuid" $s "$out/theirs.img" "$tree")
	row "erofs-forge mkfs.erofs" "$o" "$t"
	row "erofs-utils $($theirs --help 2>&1 | sed -n 's/^mkfs.erofs //p' | head -1)" "$t"
	if command -v mksquashfs >/dev/null; then
		case $s in
		--chunksize*) continue ;;	# no squashfs counterpart
		-zlz4hc*) sq=(-comp lz4 -Xhc) ;;
		-zlz4) sq=(-comp lz4) ;;
		*) sq=(-noI -noD -noF -noX) ;;
		esac
		[[ $s == *C65536* ]] && sq+=(-b 65536) || sq+=(-b 4096)
		q=$(measure squashfs "$out/sq.img" mksquashfs "$tree" "$out/sq.img" -noappend -quiet -no-progress "${sq[@]}")
		row "mksquashfs ${sq[*]}" "$q"
		row "  erofs-forge vs mksquashfs" "$o" "$q"
	fi
done
rm -f "$out"/*.img
