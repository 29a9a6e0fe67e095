#!/bin/bash
# Runs a libFuzzer campaign against the image reader (and the extractor):
# builds the harnesses (build.sh) and mkfs.erofs (out of tree), seeds a
# corpus with small images of every layout our mkfs.erofs makes, runs the
# fuzzer and reports.  See tests/fuzz/README.md.
#
#   tests/fuzz/run.sh [-n RUNS] [-t TARGET] [-o OUTDIR] [-m MAX_LEN] [-s]
#
#   -n RUNS     executions (default 1000000)
#   -t TARGET   reader (default), extract, fsck (fsck/main.c itself), dump
#               (dump/main.c itself), fsops (erofsfuse's operations, lib/fsops/fsops.c)
#               or api (liberofs-forge's public calls, lib/read/erofs-forge.c)
#   -o OUTDIR   work folder (default $FUZZ_OUT or /tmp/erofs-fuzz): bin/,
#               seeds/, corpus-TARGET/ (kept between runs; the fsck and
#               extract runs also read corpus-reader/), artifacts/, TARGET.log
#   -m MAX_LEN  largest input (default: the largest seed, rounded up)
#   -s          only make the seeds, do not fuzz
#   -g WORD     only the seeds whose name has WORD (e.g. r48: the 48-bit and
#               metabox ones), with a corpus of their own (corpus-TARGET-WORD/)
#
# MKFS may name a built mkfs.erofs; otherwise one is built with
# configure + make in $FUZZ_OUT/build-mkfs (never inside the source tree).
# Exit status: 0 clean, 1 the fuzzer found something (see artifacts/),
# 2 setup failure.
set -euo pipefail
# (the whole script is one block, read before it runs: editing it during a
# long campaign cannot derail the run)
{
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
runs=1000000
target=reader
out=${FUZZ_OUT:-/tmp/erofs-fuzz}
max_len=
seeds_only=0
only=
while getopts "n:t:o:m:sg:" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	t) target=$OPTARG ;;
	o) out=$OPTARG ;;
	m) max_len=$OPTARG ;;
	s) seeds_only=1 ;;
	g) only=$OPTARG ;;
	*) sed -n '2,25p' "$0" >&2; exit 2 ;;
	esac
done
case $target in reader|extract|fsck|dump|fsops|api) ;; *) echo "run.sh: unknown target '$target'" >&2; exit 2 ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$out/bin/fuzz-$target

say() { echo "run.sh: $*"; }

# ---- harness and mkfs ----
"$here/build.sh" "$out" >/dev/null || { echo "run.sh: build.sh failed" >&2; exit 2; }
if [ -z "${MKFS:-}" ]; then
	MKFS=$out/build-mkfs/mkfs/mkfs.erofs
	if [ ! -x "$MKFS" ] || [ -n "$(find "$top/lib" "$top/mkfs" "$top/include" -newer "$MKFS" -name '*.[ch]' 2>/dev/null | head -1)" ]; then
		say "building mkfs.erofs in $out/build-mkfs"
		mkdir -p "$out/build-mkfs"
		(cd "$out/build-mkfs" && { [ -f Makefile ] || "$top/configure" -q; } && make -j2 >/dev/null) ||
			{ echo "run.sh: cannot build mkfs.erofs" >&2; exit 2; }
	fi
fi
FSCK=${FSCK:-$(dirname "$(dirname "$MKFS")")/fsck/fsck.erofs}

# ---- seed trees: small, every kind of inode ----
fixed() { # SEED COUNT: fixed pseudo-random bytes
	python3 -c 'import random,sys
sys.stdout.buffer.write(random.Random(sys.argv[1]).randbytes(int(sys.argv[2])))' "$1" "$2"
}
words() { # SEED COUNT: compressible text, but not trivially so
	python3 -c 'import random,sys
r=random.Random(sys.argv[1]); w="erofs block inode extent chunk pcluster lz4 image fuzz tail head index".split()
s=" ".join(r.choice(w) for _ in range(int(sys.argv[2])//4)); sys.stdout.write(s[:int(sys.argv[2])])' "$1" "$2"
}
trees=$out/trees
rm -rf "$trees"
mkdir -p "$trees/base"
make_tree() { # DIR
	local t=$1 i
	mkdir -p "$t/d/sub/deeper" "$t/many" "$t/hl"
	: >"$t/empty"
	printf 'hello\n' >"$t/small"
	fixed a 5000 >"$t/d/f5000"
	fixed b 4096 >"$t/d/sub/block"
	printf 'x' >"$t/d/sub/deeper/one"
	head -c 20000 < <(yes 'compressible text for the erofs-forge fuzz seeds') >"$t/text20k"
	{ fixed c 3000; head -c 9000 /dev/zero; printf 'end'; } >"$t/zeros"	# holes with chunks
	# enough names for a directory of several blocks (4 KiB too)
	for i in $(seq 1 90); do : >"$t/many/entry-with-a-rather-long-name-number-$i"; done
	printf 'linked' >"$t/hl/a"
	ln "$t/hl/a" "$t/hl/b"
	ln "$t/hl/a" "$t/d/c"
	ln -s small "$t/lnk"
	ln -s "$(printf 'long/%.0s' $(seq 1 60))target" "$t/longlnk"
	ln -s ../canary "$t/esc"	# fuzz-extract's canary sits next to its target
	mkfifo "$t/fifo"
	if [ "$(id -u)" -eq 0 ]; then
		mknod "$t/chr" c 1 3
		mknod "$t/blk" b 7 0
	fi
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$t/sock" 2>/dev/null || true
	if setfattr -n user.probe -v 1 "$t/small" 2>/dev/null; then
		setfattr -x user.probe "$t/small"
		for f in small d/f5000 text20k hl/a; do setfattr -n user.shared -v same-value "$t/$f"; done
		setfattr -n user.inline -v "$(printf 'v%.0s' $(seq 1 30))" "$t/small"
		setfattr -n user.empty "$t/d/f5000"
		setfattr -n trusted.t -v 1 "$t/d" 2>/dev/null || true
		setfattr -n security.s -v label "$t/text20k" 2>/dev/null || true
		setfattr -h -n trusted.l -v 1 "$t/lnk" 2>/dev/null || true
		printf 'u::rw-\ng::r--\no::r--\nu:1000:rw-\nm::rw-\n' >"$out/acl.txt"
		setfacl -M "$out/acl.txt" "$t/d/sub/block" 2>/dev/null || true
	else
		say "no xattr support on $trees: seeds without xattrs"
	fi
}
make_tree "$trees/base"
# compressed layouts get a longer file too, for extents over several
# lclusters and big pclusters
cp -a "$trees/base" "$trees/big"
words w 96000 >"$trees/big/words"
fixed e 300 >>"$trees/big/words"
# no inline data: every file takes a block, so fewer of them
mkdir -p "$trees/noinline"
cp -a "$trees/base/d" "$trees/base/hl" "$trees/base/small" "$trees/base/lnk" "$trees/noinline/"

# ---- seed images ----
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds"
nseeds=0
seed() { # NAME TREE MKFS-OPTIONS...
	local name=$1 tree=$2 img=$seeds/$1.img size
	shift 2
	if ! "$MKFS" --quiet -T 1000 -U clear "$@" "$img" "$trees/$tree" >"$out/mkfs.log" 2>&1; then
		say "seed $name: mkfs.erofs $* failed: $(tail -1 "$out/mkfs.log")"
		rm -f "$img"
		return
	fi
	size=$(stat -c %s "$img")
	if [ "$size" -gt $((200 * 1024)) ]; then
		say "seed $name is $size bytes (over 200 KiB): dropped"
		rm -f "$img"
		return
	fi
	if [ -x "$FSCK" ] && ! "$FSCK" "$img" >/dev/null 2>&1; then
		say "seed $name: fsck.erofs does not pass it: dropped"
		rm -f "$img"
		return
	fi
	nseeds=$((nseeds + 1))
}
seed plain base
seed b512 base -b 512
seed b1024 base -b 1024
seed b2048 base -b 2048
seed extended base -E force-inode-extended
seed noinline noinline -E noinline_data
seed xattr-shared base -x 0
seed xattr-inline base -x 100
seed chunk4k base --chunksize 4096
seed chunk64k base --chunksize 65536
seed chunk512 base -b 512 --chunksize 512
seed lz4 base -z lz4
seed lz4hc base -z lz4hc
seed lz4-big big -z lz4
seed lz4hc-big big -z lz4hc,12
seed c16k big -z lz4 -C 16384
seed c64k big -z lz4hc -C 65536
seed c1m big -z lz4hc -C 1048576
seed legacy big -z lz4 -E legacy-compress
seed legacy-c16k big -z lz4hc -C 16384 -E legacy-compress
seed ztail big -z lz4 -E ztailpacking
seed ztail-c64k big -z lz4hc -C 65536 -E ztailpacking
seed ztail-legacy base -z lz4hc -E ztailpacking,legacy-compress
seed frag big -z lz4hc -E fragments
seed frag-legacy base -z lz4 -E fragments,legacy-compress
seed frag-ztail-c64k big -z lz4hc -C 65536 -E fragments,ztailpacking
seed allfrag big -z lz4hc -E all-fragments
# 48-bit images and the metabox (Linux 6.15/6.17): made by erofs-utils 1.9.4
# when ../shared/anchors has it, and the two small images the tests keep
REF_MKFS=${REF_MKFS:-$top/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs}
if [ -x "$REF_MKFS" ]; then
	seed_ref() { # NAME TREE OPTIONS...: seed() with erofs-utils' mkfs.erofs
		local saved=$MKFS
		MKFS=$REF_MKFS
		seed "$@"
		MKFS=$saved
	}
	seed_ref r48-plain base -E48bit
	seed_ref r48-chunks base -E48bit --chunksize=4096
	seed_ref r48-lz4hc big -E48bit -z lz4hc
	seed_ref r48-c64k big -E48bit -z lz4hc -C 65536 -E fragments,ztailpacking
	seed_ref r48-zstd big -E48bit,dot-omitted -z zstd -C 16384
	seed_ref r48-lzma big -E48bit -z lzma -C 65536 -E dedupe
	seed_ref r48-mbox base -m 4096
	seed_ref r48-mbox-lz4hc big -z lz4hc -m 4096 -E fragments
	seed_ref r48-mbox-lzma big -z lz4 -C 16384 -m 8192:lzma -x 0
else
	say "no erofs-utils mkfs.erofs at $REF_MKFS: only the kept 48-bit seeds"
fi
for kept in "$top"/tests/images/r48-*.img.gz; do
	gzip -dc "$kept" >"$seeds/$(basename "$kept" .gz)" && nseeds=$((nseeds + 1))
done
if [ -n "$only" ]; then
	for img in "$seeds"/*.img; do
		case $(basename "$img") in *"$only"*) ;; *) rm -f "$img"; nseeds=$((nseeds - 1)) ;; esac
	done
fi
say "$nseeds seed images in $seeds ($(du -sh "$seeds" | cut -f1))"
[ "$seeds_only" -eq 1 ] && exit 0

# ---- fuzz ----
if [ -z "$max_len" ]; then
	biggest=$(stat -c %s "$seeds"/*.img | sort -n | tail -1)
	max_len=$(((biggest + 4095) / 4096 * 4096))
fi
corpus=$out/corpus-$target${only:+-$only}
mkdir -p "$corpus" "$out/artifacts" "$out/work-$target"
printf 'kw1="\\xe2\\xe1\\xf5\\xe0"\nkw2="\\xff\\xff\\xff\\xff"\nkw3="\\x00\\x08"\nkw4="\\x00\\x80"\n' >"$out/erofs.dict"
# fuzz-extract's private folder: in memory when /dev/shm is there
if [ -w /dev/shm ]; then
	FUZZ_EXTRACT_DIR=$(mktemp -d /dev/shm/erofs-fuzz-extract.XXXXXX)
else
	FUZZ_EXTRACT_DIR=$(mktemp -d "$out/extract-dir.XXXXXX")
fi
export FUZZ_EXTRACT_DIR
trap 'rm -rf "$FUZZ_EXTRACT_DIR"' EXIT
before=$(ls "$out/artifacts" | wc -l)
log=$out/$target.log
say "fuzz-$target: $runs runs, max_len $max_len, corpus $corpus (+ seeds), log $log"
start=$(date +%s)
rc=0
extra=()
[ "$target" = fsck ] && extra+=(-close_fd_mask=1)	# fsck prints to stdout
inputs=("$corpus" "$seeds")
# the reader's corpus is a good start for the others (read, not written)
[ "$target" != reader ] && [ -z "$only" ] && [ -d "$out/corpus-reader" ] && inputs+=("$out/corpus-reader")
# -jobs=1 -workers=1: one fuzzing process on this 2-core machine; libFuzzer
# runs it as a child writing fuzz-0.log in the current folder
(cd "$out/work-$target" && rm -f fuzz-0.log &&
	"$bin" -runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
		-jobs=1 -workers=1 -print_final_stats=1 -dict="$out/erofs.dict" \
		-artifact_prefix="$out/artifacts/$target-" ${extra[@]+"${extra[@]}"} "${inputs[@]}" >"$log.driver" 2>&1) || rc=$?
cp "$out/work-$target/fuzz-0.log" "$log" 2>/dev/null || cp "$log.driver" "$log"
rm -rf "$FUZZ_EXTRACT_DIR"
secs=$(($(date +%s) - start))

# ---- report ----
stat_of() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
execs=$(stat_of number_of_executed_units)
eps=$(stat_of average_exec_per_sec)
rss=$(stat_of peak_rss_mb)
new=$(stat_of new_units_added)
cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
after=$(ls "$out/artifacts" | wc -l)
found=$((after - before))
echo "== fuzz-$target report =="
echo "  executions:   ${execs:-?} in ${secs}s (${eps:-?} exec/s, libFuzzer's average)"
echo "  coverage:     ${cov:-?}; new corpus units: ${new:-?}; corpus: $(ls "$corpus" | wc -l) files"
echo "  peak RSS:     ${rss:-?} MB"
echo "  seeds:        $nseeds images (max_len $max_len)"
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: |contract broken|ALARM: working on the last Unit' "$log" || [ "$found" -gt 0 ] || [ "$rc" -ne 0 ]; then
	echo "  FINDINGS:     exit $rc, $found new artifact(s) in $out/artifacts:"
	ls -t "$out/artifacts" | head -"$((found > 0 ? found : 1))" | sed 's/^/    /'
	grep -E 'ERROR:|SUMMARY:|runtime error:|contract broken|ALARM' "$log" | head -10 | sed 's/^/    /'
	echo "  reproduce:    $bin ARTIFACT   (FUZZ_VERBOSE=1 prints the reader's messages)"
	exit 1
fi
echo "  findings:     none (no crash, hang, leak or sanitizer report)"
exit 0
}
