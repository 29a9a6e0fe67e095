#!/bin/bash
# qemu-tests/fuzz.sh: the kernel fuzz campaign (issue 7, item 3).  Not part
# of the default test command; see ROBUSTNESS.md, "Kernel fuzz campaign".
#
#   bash qemu-tests/fuzz.sh [--images N] [--seed S] [--mode ours|stock]
#                           [--kernel 6.12|7 [--module KO]] [--batch B] [--out DIR]
#                           [--walk-seconds S] [--seeds REGEX]
#   bash qemu-tests/fuzz.sh --replay [--mode ours|stock|--kernel K] IMG...
#   bash qemu-tests/fuzz.sh --kernel K --findings [--remake] [LIST]
#   bash qemu-tests/fuzz.sh [--kernel K|--mode M] --reduce CRASH.img SEED.img
#
# --reduce shrinks a kept finding to the fewest byte changes against its
# seed (seeds/ of the run; the first word of its edit log) that still end
# the guest the same way: each run of changed bytes (and a truncation) is
# put back in turn, the image resealed and replayed alone, and kept back
# when the guest still crashes (or hangs).  Prints the changes left with
# the fields they touch; OUT/reduced.img is the result.
#
# --findings replays the reduced findings of fuzz-findings.list for kernel
# K (the images kept in findings/; --remake rebuilds them from the list's
# recipes, leaving them in OUT), each in a fresh guest, after checking that
# our fsck.erofs and dump.erofs refuse them; a line expecting the stock
# kernel to crash or hang FAILs loudly when it no longer does (fixed:
# update the line).  run.sh runs the same lines in the QEMU suite.
# --module KO (with --kernel) loads KO, a module built for that kernel
# (kmod/build-7x.sh, build-612.sh), instead of its own: with --findings every line must
# then survive.
#
# --kernel 6.12|7 fuzzes a newer Debian kernel (fetch-kernel.sh, as run.sh's
# KERNELS) with its own packaged erofs.ko instead of the host's 6.1: the
# seeds add every layout that kernel reads (48-bit, metabox, encoded
# extents, lzma/deflate/zstd, long xattr prefixes, sub-page compressed
# blocks, dot-omitted, device tables of --blobdev and --tar=i, fragments,
# dedupe; each only when mkfs --max-kernel says that kernel reads it), and
# fuzz-mutate -F adds its format-aware edits (fuzz-mutate.c's header).
#
# Builds small seed images of every layout with our mkfs.erofs (plus a few
# made hostile by craft.c), then N mutants of them with fuzz-mutate.c
# (structure-aware; mutant i depends only on S and i), B per batch.  Each
# batch goes to QEMU on a virtio disk; the guest (guest-init.sh ->
# fuzz-guest.c) mounts each image read-only through a size-limited loop
# device with our module (or Debian's: --mode stock), walks it with
# hostile-walk -f, and reports each image on the serial console.  The guest
# runs with oops=panic, panic_on_warn, softlockup_panic and hung_task_panic:
# any oops, BUG, WARNING or lockup ends the boot.  The host watches the
# console: a boot that dies, a walk that no SIGKILL ends, no progress for
# --hang-seconds or a batch over its time limit is a crash or hang of the
# running image, which is kept (OUT/crashes/), replayed alone once, and the
# campaign goes on in a fresh guest with the next image.
#
# Output: OUT (default qemu-tests/fuzz-out/<run>/): report.txt (also
# printed), results (one line per image), mutations/ (the edit log of every
# batch), crashes/ (images, edit logs, serial excerpts), serial logs of the
# boots that failed.  Exit 0 when nothing failed, 1 on any finding, 2 on a
# setup error.
#
# --seeds REGEX keeps only the seeds whose names match (e.g.
# '^(lzma|deflate|zstd)' for the algorithms of kmod patches 0010-0012).
#
# Environment: MKFS, KVER, QEMU_ACCEL (as run.sh); ALG_MKFS (default MKFS):
# the mkfs that makes the lzma, deflate and zstd seeds (e.g. erofs-utils'
# while ours lacks them; seeds whose options it lacks are skipped); FUZZ_NICE (default 10:
# the campaign renices itself so it does not starve the machine);
# FUZZ_KEEP_LOGS=1 keeps the serial log of every boot, not only failed ones.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
top_builddir=${top_builddir:-$PWD}

MKFS=${MKFS:-$top_builddir/mkfs/mkfs.erofs}
QEMU_ACCEL=${QEMU_ACCEL:-tcg}
QEMU=${QEMU:-qemu-system-x86_64}
FUZZ_NICE=${FUZZ_NICE:-10}
FUZZ_KEEP_LOGS=${FUZZ_KEEP_LOGS:-0}

IMAGES=10000 SEED=1 MODE=ours BATCH=1000 OUTDIR='' WALK_S=8 KILL_S=20 HANG_S=90 SEED_RE=''
KSERIES='' FUZZ_F=() MODE_SET=0 FINDINGS='' REDUCE=0 MODULE_KO='' REMAKE=0
KERNEL_DIR=${KERNEL_DIR:-$top_builddir/qemu-tests/kernels}
CAP=$((4 * 1024 * 1024)) RESEAL=95 REPLAY_CRASHES=1 REPLAY=0
CACHE_LIMIT_KB=$((64 * 1024))	# page-cache growth allowed for one walk
AVAIL_MIN_KB=$((128 * 1024))	# MemAvailable the guest must keep

msg() { echo "fuzz.sh: $*" >&2; }
# the first N lines of stdin; unlike head it reads all of it, so the writer
# never dies of SIGPIPE (which pipefail and set -e would turn into an exit)
first() { awk -v n="$1" 'NR <= n'; }
die() { msg "error: $*"; exit 2; }

usage() {
	sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--images) IMAGES=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--mode) MODE=$2; MODE_SET=1; shift ;;
	--kernel) KSERIES=$2; shift ;;
	--module) MODULE_KO=$2; shift ;;
	--batch) BATCH=$2; shift ;;
	--out) OUTDIR=$2; shift ;;
	--walk-seconds) WALK_S=$2; KILL_S=$((WALK_S + 12)); shift ;;
	--hang-seconds) HANG_S=$2; shift ;;
	--reseal) RESEAL=$2; shift ;;
	--seeds) SEED_RE=$2; shift ;;
	--no-replay) REPLAY_CRASHES=0 ;;
	--replay) REPLAY=1 ;;
	--reduce) REDUCE=1 ;;
	--remake) REMAKE=1 ;;
	--findings) FINDINGS=$here/fuzz-findings.list
		case ${2:-} in ''|--*) ;; *) FINDINGS=$2; shift ;; esac ;;
	-h|--help) usage ;;
	--*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
case $MODE in ours|stock) ;; *) die "--mode: ours or stock" ;; esac
case $KSERIES in
'') ;;
6.12|7)	# the kernel's own module, or (--module) one built for it, e.g. by
	# kmod/build-7x.sh: kmod/ itself is 6.1's
	[ "$MODE_SET" = 0 ] || [ "$MODE" = stock ] || die "--kernel $KSERIES: only --mode stock, or --module KO"
	MODE=stock FUZZ_F=(-F)
	if [ -n "$MODULE_KO" ]; then
		[ -f "$MODULE_KO" ] || die "--module $MODULE_KO: no such file"
		MODULE_KO=$(cd "$(dirname "$MODULE_KO")" && pwd)/$(basename "$MODULE_KO")
		MODE=ours
	fi ;;
*) die "--kernel: 6.12 or 7" ;;
esac
[ "$REPLAY" = 0 ] || [ $# -gt 0 ] || die "--replay needs images"
[[ $IMAGES =~ ^[0-9]+$ && $BATCH =~ ^[1-9][0-9]*$ && $SEED =~ ^[0-9]+$ ]] ||
	die "--images, --batch and --seed take numbers"

. "$here/lib.sh"

renice -n "$FUZZ_NICE" $$ > /dev/null 2>&1 || true

# ---------------------------------------------------------------- setup ---

setup() {
	RUN_ID=$(date +%Y%m%d-%H%M%S)-$$
	local root=$here/fuzz-out
	[ -w "$here" ] || root=$top_builddir/qemu-tests/fuzz-out
	OUT=${OUTDIR:-$root/$RUN_ID}
	mkdir -p "$OUT"/{crashes,mutations,boots}
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/erofs-forge-fuzz.XXXXXX")
	trap cleanup EXIT
	trap 'exit 130' INT TERM
}

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	[ -z "${QEMU_PID:-}" ] || kill "$QEMU_PID" 2>/dev/null || true
	rm -rf "$SCRATCH"
}

build_tools() {
	local cflags=(-O2 -Wall "-I$top_srcdir/include")
	mkdir -p "$SCRATCH/bin"
	gcc "${cflags[@]}" -o "$SCRATCH/bin/fuzz-mutate" "$here/fuzz-mutate.c" "$here/fuzz-mutate-util.c" \
		"$here/fuzz-mutate-parse.c" "$here/fuzz-mutate-edit.c" "$here/fuzz-mutate-format.c"
	gcc "${cflags[@]}" -o "$SCRATCH/bin/craft" "$here/craft.c"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/fuzz-guest" "$here/fuzz-guest.c"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/hostile-walk" "$here/hostile-walk.c"
}

# ---------------------------------------------------------------- seeds ---

# A small tree with every kind of inode: devices, a fifo, short and long
# symlinks, hard links, inline and shared xattrs and an ACL, a directory of
# several blocks, compressible and incompressible files, holes.
make_seed_tree() {
	local t=$1 i
	mkdir -p "$t/d/sub" "$t/many" "$t/empty"
	printf 'hello\n' > "$t/hello"
	head -c 5000 /dev/zero | tr '\0' 'z' > "$t/d/five-k"
	for i in $(seq 0 1999); do printf 'EROFS-FORGE-FUZZ-LINE-%04d: text\n' "$i"; done > "$t/text"
	awk 'BEGIN { srand(7); for (i = 0; i < 3000; i++) printf "%c", 33 + int(rand() * 90) }' > "$t/d/noise"
	{ head -c 3000 "$t/text"; head -c 12288 /dev/zero; printf end; } > "$t/d/holes"
	for i in $(seq 1 70); do : > "$t/many/a-fairly-long-file-name-number-$i"; done
	ln "$t/hello" "$t/d/hello-link"
	ln -s ../hello "$t/d/sub/rel-link"
	ln -s "$(printf 'long/%.0s' $(seq 1 50))target" "$t/long-link"
	mkfifo "$t/fifo"
	mknod "$t/null" c 1 3
	mknod "$t/disk" b 8 1
	chmod 4755 "$t/hello"
	setfattr -n user.colour -v blue "$t/hello"
	for i in hello text d/five-k; do setfattr -n user.shared -v same "$t/$i"; done
	setfattr -n trusted.forge -v 0x00ff "$t/d"
	setfattr -n security.forge -v label "$t/text"
	setfacl -m u:1000:rw "$t/d/noise" 2>/dev/null || true
	find "$t" -exec touch -h -d '2020-01-01 00:00:00' {} +
}

# seed NAME MKFS-ARGS...: one seed image, if this mkfs offers the options
# (and, with --kernel, if that kernel reads the layout: mkfs --max-kernel,
# and its config has the algorithm).  In ARGS, @blob@ is the seed's extra
# device (IMG.blob, which fuzz-mutate carries along), and @tar@ makes the
# source a tar of the tree kept as IMG.blob (--tar=i).
seed() {
	local name=$1 img=$SCRATCH/seeds/$1.img lacking a args=() src=$SCRATCH/tree
	shift
	if lacking=$(mkfs_lacks_option "$@"); then
		msg "seed $name skipped: mkfs does not offer $lacking"
		return
	fi
	for a in "$@"; do
		case $a in
		*@blob@*) a=${a//@blob@/$img.blob} ;;
		@tar@) tar --xattrs --format=pax -cf "$img.blob" -C "$SCRATCH/tree" . ; src=$img.blob; continue ;;
		esac
		args+=("$a")
	done
	if [ -n "$KSERIES" ]; then
		for a in lzma deflate zstd; do
			[[ " $* " =~ -z\ ?[a-z0-9:,]*$a ]] || continue
			grep -q "^CONFIG_EROFS_FS_ZIP_${a^^}=y" "$KROOT/boot/config-$KVER" || {
				msg "seed $name skipped: $KVER is built without CONFIG_EROFS_FS_ZIP_${a^^}"
				rm -f "$img.blob"
				return
			}
		done
		args=(--max-kernel="$KSHORT" "${args[@]}")
	fi
	if ! "$MKFS" --quiet -T 1577836800 -U clear "${args[@]}" "$img" "$src" > "$SCRATCH/mkfs.log" 2>&1; then
		rm -f "$img" "$img.blob"
		if [ -n "$KSERIES" ] && grep -qi 'max-kernel\|needs Linux\|newer' "$SCRATCH/mkfs.log"; then
			msg "seed $name skipped on $KSHORT: $(tail -n 1 "$SCRATCH/mkfs.log")"
			return
		fi
		die "seed $name: mkfs.erofs $* failed: $(tail -n 1 "$SCRATCH/mkfs.log")"
	fi
	SEEDS+=("$img")
}

# -E OPT only when mkfs --help lists OPT (fragments, all-fragments, ...)
# (the help is read whole first: grep -q ends at its match, and the SIGPIPE
# mkfs would then get fails the pipeline under pipefail, at random)
mkfs_has_extended() {
	local help
	help=$("$MKFS" --help 2>&1 || true)
	grep -qE -- "(^|[ ,(])$1([][ ,.)=]|\$)" <<< "$help"
}

# crafted NAME CASE BASE-SEED PATH...: a seed made hostile by craft.c
crafted() {
	local name=$1 case=$2 base=$3 img=$SCRATCH/seeds/crafted-$1.img
	shift 3
	[ -f "$SCRATCH/seeds/$base.img" ] || return 0
	cp "$SCRATCH/seeds/$base.img" "$img"
	"$SCRATCH/bin/craft" "$case" "$img" "$@" > "$SCRATCH/craft.log" 2>&1 ||
		die "crafted seed $name: $(tail -n 1 "$SCRATCH/craft.log")"
	SEEDS+=("$img")
}

make_seeds() {
	SEEDS=()
	mkdir -p "$SCRATCH/seeds"
	make_seed_tree "$SCRATCH/tree"
	seed plain
	seed b1024 -b 1024
	seed b512 -b 512
	seed b2048-noinline -b 2048 -E noinline_data
	seed extended -E force-inode-extended
	seed xattr-shared -x 0
	seed xattr-inline -x 100
	seed chunk4k --chunksize 4096
	seed chunk-b1024 -b 1024 --chunksize 1024
	seed lz4 -z lz4
	seed lz4hc -z lz4hc
	seed lz4-legacy -z lz4 -E legacy-compress
	seed lz4hc-legacy -z lz4hc -E legacy-compress,force-inode-extended
	seed big-pcluster -z lz4hc -C 65536
	seed big-pcluster-legacy -z lz4 -C 16384 -E legacy-compress
	seed ztail -z lz4hc -E ztailpacking
	seed ztail-legacy -z lz4 -E ztailpacking,legacy-compress
	seed ztail-c64k -z lz4hc -C 65536 -E ztailpacking -x 0
	if mkfs_has_extended fragments; then
		seed fragments -z lz4hc -E fragments
		seed fragments-ztail -z lz4 -C 16384 -E fragments,ztailpacking
	else
		msg "seeds without -E fragments: mkfs --help does not list it"
	fi
	if mkfs_has_extended all-fragments; then
		seed all-fragments -z lz4hc -E all-fragments
	fi
	if mkfs_has_extended dedupe; then
		seed dedupe -z lz4hc -E dedupe
		seed dedupe-fragments -z lz4 -C 16384 -E dedupe,fragments
	fi
	# the algorithms only our module reads on 6.1 (kmod/patches 0010-0012),
	# in the layouts that reach each decompressor differently
	local alg
	for alg in lzma deflate zstd; do
		MKFS=${ALG_MKFS:-$MKFS} seed "$alg" -z "$alg"
		MKFS=${ALG_MKFS:-$MKFS} seed "$alg-legacy" -z "$alg" -E legacy-compress
		MKFS=${ALG_MKFS:-$MKFS} seed "$alg-ztail-c64k" -z "$alg" -C 65536 -E ztailpacking -x 0
		MKFS=${ALG_MKFS:-$MKFS} seed "$alg-frag" -z "$alg" -C 16384 -E fragments,ztailpacking
		MKFS=${ALG_MKFS:-$MKFS} seed "$alg-dedupe" -z "$alg" -E dedupe
	done
	# the newer kernels: every layout they read that 6.1 does not
	[ -z "$KSERIES" ] || newer_seeds
	# hostile seeds from the regression cases (kmod/patches), small ones
	crafted g1p g1p big-pcluster-legacy text
	crafted g2 g2 plain text
	crafted g3 g3 plain text d/five-k 1048576
	crafted g3-valid g3 plain text d/five-k 4000
	crafted g5 g5 plain hello
	local s kept=()
	if [ -n "$SEED_RE" ]; then
		for s in "${SEEDS[@]}"; do
			[[ $(basename "$s" .img) =~ $SEED_RE ]] && kept+=("$s")
		done
		[ ${#kept[@]} -gt 0 ] || die "--seeds '$SEED_RE' matches no seed"
		SEEDS=("${kept[@]}")
	fi
	for s in "${SEEDS[@]}"; do
		[ "$(stat -c %s "$s")" -le $((512 * 1024)) ] ||
			die "seed $s is over 512 KiB; keep seeds small"
		[ ! -f "$s.blob" ] || [ "$(stat -c %s "$s.blob")" -le $((1024 * 1024)) ] ||
			die "seed $s.blob is over 1 MiB; keep seeds small"
	done
	msg "${#SEEDS[@]} seeds ($(du -ch "${SEEDS[@]}" | tail -n 1 | cut -f1)): $(printf '%s\n' "${SEEDS[@]}" | sed 's|.*/||; s|\.img$||' | tr '\n' ' ')"
}

# the layouts of Linux 6.4-7.x (each skipped where --max-kernel refuses it)
newer_seeds() {
	seed xpfx --xattr-prefix=user.sha --xattr-prefix=user.col -x 0
	seed xpfx-plain --xattr-prefix=user.col -E plain-xattr-prefixes
	seed xpfx-z --xattr-prefix=user.sha -z lz4hc -E fragments
	seed sub1k-lz4 -b 1024 -z lz4hc
	seed sub1k-ztail -b 1024 -z lz4 -C 4096 -E ztailpacking,fragments
	seed sub512-zstd -b 512 -z zstd -C 2048
	seed sub2k-deflate -b 2048 -z deflate -E dedupe
	seed lzma-c64k -z lzma -C 65536 -E ztailpacking
	seed zstd-big -z zstd,level=3 -C 131072 -E fragments
	seed deflate-allfrag -z deflate -E all-fragments
	printf '4096 1 ^text\n8192 0 ^d/\n' > "$SCRATCH/hints"
	seed mixed-hints -z lz4hc:zstd --compress-hints="$SCRATCH/hints"
	seed blobdev --chunksize 4096 --blobdev=@blob@
	seed blobdev-b1k -b 1024 --chunksize 2048 --blobdev=@blob@ -x 0
	seed tar-index --tar=i @tar@
	seed 48bit -E48bit
	seed 48bit-ext -E48bit -x 0 -E force-inode-extended
	seed 48bit-lz4 -E48bit -z lz4hc
	seed 48bit-zstd -E48bit -z zstd -C 16384 -E fragments
	seed 48bit-deflate -E48bit -z deflate -C 8192 -E dedupe
	seed 48bit-lzma-legacy -E48bit -z lzma -E legacy-compress
	seed 48bit-sub1k -E48bit -b 1024 -z lz4
	seed 48bit-chunk -E48bit --chunksize 8192
	seed 48bit-blobdev -E48bit --chunksize 4096 --blobdev=@blob@
	seed dot-omitted -E dot-omitted
	seed dot-omitted-z -E dot-omitted -z lz4 -E ztailpacking
	seed metabox-flat -m 4096
	seed metabox-lz4 -m 4096:lz4 -z lz4
	seed metabox-zstd -m 4096:zstd -z zstd -C 16384 -E fragments
	seed metabox-xpfx -m 4096 --xattr-prefix=user.sha -x 0
}

build_fuzz_initramfs() {
	local root=$SCRATCH/initramfs
	initramfs_base "$root"
	cp "$SCRATCH/bin/fuzz-guest" "$SCRATCH/bin/hostile-walk" "$root/bin/"
	cat > "$root/forge/conf" <<-EOF
		FUZZ_WALK=$WALK_S
		FUZZ_KILL=$KILL_S
		FUZZ_CAP=$CAP
	EOF
	INITRAMFS=$SCRATCH/initramfs.cpio.gz
	pack_initramfs "$root" "$INITRAMFS"
}

# ------------------------------------------------------------------ boot ---

# fuzz_boot DISK START LOG LIMIT: one guest over the batch on DISK from line
# START; sets BOOT_END (done|crash|hang|stuck|timeout|fatal) and BOOT_SECONDS
fuzz_boot() {
	local disk=$1 start=$2 log=$3 limit=$4 t0=$SECONDS
	qemu_start "$log" \
		"console=ttyS0 loglevel=4 panic=-1 oops=panic panic_on_warn=1 softlockup_panic=1 hung_task_panic=1 hung_task_timeout_secs=30 forge.mode=$MODE forge.fuzz=1 forge.start=$start" \
		-drive "file=$disk,format=raw,if=none,id=data,readonly=on" \
		-device virtio-blk-pci,drive=data,serial=forgedata
	watch_guest "$log" "$t0" "$limit" "$HANG_S" stuck
	if grep -aq '^forge: BATCHDONE' "$log"; then
		BOOT_END='done'
	elif grep -aq '^forge: FATAL' "$log"; then
		BOOT_END=fatal
	elif [ -z "$BOOT_END" ]; then
		BOOT_END=crash
	fi
}

# the line index (in the batch) that was running when the boot ended, or -1
running_line() {
	local last_run last_end
	last_run=$(sed -n 's/^forge: RUN \([0-9]*\) .*/\1/p' "$1" | tail -n 1)
	last_end=$(sed -n 's/^forge: END \([0-9]*\) .*/\1/p' "$1" | tail -n 1)
	if [ -n "$last_run" ] && [ "$last_run" != "$last_end" ]; then
		echo "$last_run"
	else
		echo -1
	fi
}

# the image on line LINE of batch DISK -> FILE, its extra device (if any)
# -> FILE.blob (prints its number)
extract_image() { # DISK LINE FILE
	local number off size boff bsize
	read -r number off size boff bsize < <(sed -n "$(($2 + 2))p" "$1" | tr -d '\0')
	dd if="$1" of="$3" bs=4096 skip=$((off / 4096)) count=$(( (size + 4095) / 4096 )) status=none
	truncate -s "$size" "$3"
	rm -f "$3.blob"
	if [ -n "$bsize" ]; then
		: > "$3.blob"
		[ "$bsize" = 0 ] || dd if="$1" of="$3.blob" bs=4096 skip=$((boff / 4096)) \
			count=$(( (bsize + 4095) / 4096 )) status=none
		truncate -s "$bsize" "$3.blob"
	fi
	echo "$number"
}

# the kernel's account of a crash: the oops/panic lines of a serial log
crash_lines() {
	{ grep -aE "$OOPS_RE|Kernel panic|RIP:|watchdog:" "$1" || true; } | tr -d '\r' | first 12
}

# keep_failure KIND NUMBER IMAGE SERIAL-LOG: crashes/KIND-NUMBER.{img,txt}
keep_failure() {
	local kind=$1 number=$2 img=$3 log=$4 base
	base=$OUT/crashes/$kind-$number
	cp "$img" "$base.img"
	[ ! -f "$img.blob" ] || cp "$img.blob" "$base.img.blob"
	{
		echo "image $number ($kind), mode $MODE, kernel $KVER, campaign seed $SEED"
		echo "rebuild: fuzz-mutate ${FUZZ_F[*]} -s $SEED -x $number -o IMG SEEDS (the images in seeds/, in the order of seeds.list)"
		echo "edits: $(grep -m1 "^$number " "$OUT"/mutations/* 2>/dev/null | cut -d' ' -f2- || true)"
		echo "--- kernel (serial console from the image's RUN marker) ---"
		if [ -f "$log" ]; then
			tr -d '\r' < "$log" | sed -n "/^forge: RUN [0-9]* $number\$/,\$p" | first 200
		fi
	} > "$base.txt"
	FAILURES+=("$kind $number")
	msg "FAILURE: $kind on image $number (kept: $base.img)"
}

# replay IMG: the image alone in a fresh guest; sets REPLAY_END
replay_one() {
	local img=$1 tag=$2 disk=$SCRATCH/replay.disk log
	log=$OUT/boots/replay-$tag.log
	"$SCRATCH/bin/fuzz-mutate" -P -o "$disk" "$img"
	fuzz_boot "$disk" 0 "$log" $((60 + KILL_S + HANG_S))
	REPLAY_END=$BOOT_END
	if [ "$BOOT_END" = 'done' ]; then
		REPLAY_END="done: $({ grep -a '^forge: END' "$log" || true; } | tr -d '\r' | cut -d' ' -f5- | cut -c1-200)"
	fi
}

# soft_findings LOG DISK: images a boot finished but that broke an oracle
# short of a crash: a walk that had to be killed or gave no summary, an
# oops-like kernel line without a panic, page-cache growth over
# CACHE_LIMIT_KB, MemAvailable under AVAIL_MIN_KB.  Each is kept.
soft_findings() {
	local log=$1 disk=$2 line number kind
	tr -d '\r' < "$log" | awk -v c="$CACHE_LIMIT_KB" -v a="$AVAIL_MIN_KB" '
		/^forge: END / {
			delete f
			for (i = 5; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			kind = ""
			if (f["outcome"] == "killed" || f["outcome"] == "nowalk") kind = f["outcome"]
			else if (f["kern"] == 1) kind = "kernel-line"
			else if (f["cache_kb"] + 0 > c || f["avail_kb"] + 0 < a) kind = "memory"
			if (kind != "") print $3, kind
		}' |
	while read -r line kind; do
		number=$(extract_image "$disk" "$line" "$SCRATCH/finding.img")
		keep_failure "$kind" "$number" "$SCRATCH/finding.img" "$log"
		echo "$kind $number" >> "$SCRATCH/soft"
	done
}

# ---------------------------------------------------------------- batches ---

# run_batch B FIRST COUNT: mutants FIRST.. FIRST+COUNT-1, rebooting after
# each crash or hang
run_batch() {
	local b=$1 first=$2 count=$3 disk=$SCRATCH/batch.disk start=0 n=1 log line number kind
	"$SCRATCH/bin/fuzz-mutate" "${FUZZ_F[@]}" -s "$SEED" -f "$first" -n "$count" -r "$RESEAL" -o "$disk" \
		-l "$OUT/mutations/batch-$b.log" "${SEEDS[@]}"
	while [ "$start" -lt "$count" ]; do
		log=$OUT/boots/batch-$b-boot-$n.log
		fuzz_boot "$disk" "$start" "$log" $((120 + 4 * (count - start)))
		tr -d '\r' < "$log" | sed -n 's/^forge: END [0-9]* //p' >> "$OUT/results"
		BOOTS=$((BOOTS + 1))
		: > "$SCRATCH/soft"
		soft_findings "$log" "$disk"
		while read -r kind number; do FAILURES+=("$kind $number"); done < "$SCRATCH/soft"
		if [ "$BOOT_END" = 'done' ]; then
			if ! grep -aq '^forge: MODCYCLE rmmod=0 insmod=0' "$log"; then
				FAILURES+=("modcycle batch-$b")
				msg "FAILURE: module reload after batch $b: $(grep -a '^forge: MODCYCLE' "$log" | tr -d '\r' || echo 'no MODCYCLE line')"
			elif [ "$FUZZ_KEEP_LOGS" != 1 ] && [ ! -s "$SCRATCH/soft" ]; then
				rm -f "$log"
			fi
			return
		fi
		line=$(running_line "$log")
		if [ "$line" -lt 0 ]; then
			FAILURES+=("boot-$BOOT_END batch-$b")
			msg "FAILURE: guest $BOOT_END outside any image (log: $log): $(grep -a '^forge: FATAL' "$log" | tr -d '\r' | first 1 || true)"
			[ "$BOOT_END" = fatal ] || crash_lines "$log" >&2
			return
		fi
		case $BOOT_END in
		crash) kind=crash ;;
		stuck|hang|timeout) kind=hang ;;
		*) kind=$BOOT_END ;;
		esac
		number=$(extract_image "$disk" "$line" "$SCRATCH/culprit.img")
		echo "$number outcome=$kind" >> "$OUT/results"
		msg "image $number: guest $BOOT_END after $BOOT_SECONDS s"
		crash_lines "$log" | sed 's/^/    /' >&2
		keep_failure "$kind" "$number" "$SCRATCH/culprit.img" "$log"
		if [ "$REPLAY_CRASHES" = 1 ]; then
			replay_one "$SCRATCH/culprit.img" "$number"
			echo "replayed alone in a fresh guest: $REPLAY_END" >> "$OUT/crashes/$kind-$number.txt"
			msg "image $number replayed alone: $REPLAY_END"
		fi
		start=$((line + 1))
		n=$((n + 1))
	done
}

# --------------------------------------------------------------- findings ---

# the tree of the reduced findings: a file with an xattr, a 5000-byte file
# in a directory, a symlink
make_tiny_tree() {
	mkdir -p "$1/d"
	printf 'hello\n' > "$1/hello"
	head -c 5000 /dev/zero | tr '\0' 'z' > "$1/d/five-k"
	ln -s ../hello "$1/d/link"
	setfattr -n user.colour -v blue "$1/hello"
	find "$1" -exec touch -h -d '2020-01-01 00:00:00' {} +
}

# findings LIST: each line "NAME EXPECT-6.12 EXPECT-7 MKFS-ARGS... --
# EDITS..." whose column for this kernel series is not "-": the image kept
# in findings/NAME.img.gz (with --remake, or when it is missing: mkfs of the
# tiny tree, then fuzz-mutate -E EDITS), our readers must refuse it, then
# the image alone in a fresh guest, whose end must match EXPECT (crash,
# hang, flood: the walk ends but grows the page cache past CACHE_LIMIT_KB,
# or survive: the walk ends, any errors; or a comma list of them)
findings() {
	local list=$1 name e612 e7 expect rest margs edits img end pass=0 fail=0 r
	[ -f "$list" ] || die "no findings list $list"
	make_tiny_tree "$SCRATCH/tiny"
	while read -r name e612 e7 rest; do
		[ -n "$name" ] && [ "${name:0:1}" != '#' ] || continue
		expect=$e612
		[ "$KSERIES" = 6.12 ] || expect=$e7
		[ "$expect" != - ] || continue
		margs=${rest%% -- *} edits=${rest#* -- }
		img=$OUT/$name.img
		if [ "$REMAKE" = 0 ] && [ -f "$here/findings/$name.img.gz" ]; then
			gzip -dc "$here/findings/$name.img.gz" > "$img"
		else
			# shellcheck disable=SC2086 # word lists from the list file
			"$MKFS" --quiet -T 1577836800 -U clear $margs "$img.seed" "$SCRATCH/tiny" > "$SCRATCH/mkfs.log" 2>&1 ||
				{ echo "FAIL: $KSHORT/$name (mkfs $margs: $(tail -n 1 "$SCRATCH/mkfs.log"))"; fail=$((fail + 1)); continue; }
			local eargs=() e
			for e in $edits; do eargs+=(-E "$e"); done
			"$SCRATCH/bin/fuzz-mutate" "${eargs[@]}" -o "$img" "$img.seed" 2> "$SCRATCH/edit.log" ||
				{ echo "FAIL: $KSHORT/$name (edit: $(tail -n 1 "$SCRATCH/edit.log"))"; fail=$((fail + 1)); continue; }
		fi
		r=
		for tool in "$top_builddir/fsck/fsck.erofs" "$top_builddir/dump/dump.erofs -S"; do
			# shellcheck disable=SC2086
			if $tool "$img" > "$SCRATCH/reader.out" 2>&1; then
				r="${r}${tool##*/} accepts it; "
			elif ! grep -q 'error:' "$SCRATCH/reader.out"; then
				r="${r}${tool##*/} fails without an error message; "
			fi
		done
		[ -z "$r" ] || { echo "FAIL: $KSHORT/$name (${r%; })"; fail=$((fail + 1)); continue; }
		replay_one "$img" "$name"
		if grep -aq '^forge: INSMODFAILED' "$OUT/boots/replay-$name.log"; then
			echo "FAIL: $KSHORT/$name (the module did not load: $(grep -a -m1 'module: ' "$OUT/boots/replay-$name.log" | tr -d '\r' | cut -c1-120))"
			fail=$((fail + 1))
			continue
		fi
		end=${REPLAY_END%%:*}
		# flood: the walk ends, but grows the page cache past CACHE_LIMIT_KB
		if [ "$end" = 'done' ] && [ "$expect" = flood ]; then
			r=$(sed -n 's/.* cache_kb=\([0-9]*\) .*/\1/p' <<< "$REPLAY_END")
			if [ "${r:-0}" -gt "$CACHE_LIMIT_KB" ]; then end=flood; fi
		fi
		# a module of ours (--module) must survive every finding, floods too
		[ "$MODE" = stock ] || expect=survive
		case $end in stuck|timeout) end=hang ;; esac	# the walker outlived SIGKILL
		# EXPECT may list alternatives: hang,crash (a soft lockup panics)
		[[ ,$expect, == *,$end,* ]] && expect=$end
		case $expect:$end in
		crash:crash|hang:hang|survive:done|flood:flood)
			echo "PASS: $KSHORT/$name ($expect as expected: $(crash_lines "$OUT/boots/replay-$name.log" | grep -m1 -aE 'BUG:|RIP:|watchdog|blocked' || echo "${REPLAY_END:0:120}"); our readers: $(grep -m1 'error:' "$SCRATCH/reader.out" | cut -c1-100))"
			pass=$((pass + 1)) ;;
		*:done)
			echo "FAIL: $KSHORT/$name ($KVER no longer shows the $expect: fixed? then make the line expect survive) (log: $OUT/boots/replay-$name.log)"
			fail=$((fail + 1)) ;;
		*)	echo "FAIL: $KSHORT/$name (expected $expect, got $REPLAY_END) (log: $OUT/boots/replay-$name.log)"
			fail=$((fail + 1)) ;;
		esac
	done < "$list"
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
}

# ----------------------------------------------------------------- reduce ---

# the runs of bytes IMG changes against SEED ("OFFSET LENGTH", runs closer
# than 8 bytes merged, the superblock checksum left out), then "trunc" if
# IMG is shorter
diff_runs() { # IMG SEED
	python3 - "$1" "$2" <<-'PY'
		import sys
		a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
		runs = []
		for i in range(min(len(a), len(b))):
		    if a[i] != b[i] and not 1028 <= i < 1032:
		        if runs and i - runs[-1][1] <= 8:
		            runs[-1][1] = i + 1
		        else:
		            runs.append([i, i + 1])
		for s, e in runs:
		    print(s, e - s)
		if len(a) < len(b):
		    print("trunc")
	PY
}

# put_back IMG SEED RUN: RUN's bytes of SEED back into IMG ("trunc": its tail)
put_back() {
	if [ "$3" = trunc ]; then
		dd if="$2" of="$1" bs=4096 skip=$(( $(stat -c %s "$1") / 4096 )) \
			seek=$(( $(stat -c %s "$1") / 4096 )) conv=notrunc status=none
	else
		dd if="$2" of="$1" bs=1 skip="${3% *}" seek="${3% *}" count="${3#* }" conv=notrunc status=none
	fi
	"$SCRATCH/bin/fuzz-mutate" -R "$1"
}

reduce() { # CRASH SEED
	local img=$1 seed=$2 cur=$OUT/reduced.img try=$SCRATCH/try.img want run n=0 kept=()
	cp "$img" "$cur"
	replay_one "$cur" base
	want=${REPLAY_END%%:*}
	case $want in crash|hang) ;; *) die "$img does not crash or hang alone ($REPLAY_END)" ;; esac
	msg "$img: $want alone; $(diff_runs "$cur" "$seed" | wc -l) run(s) of changes against $seed"
	while read -r run; do
		n=$((n + 1))
		cp "$cur" "$try"
		put_back "$try" "$seed" "$run"
		replay_one "$try" "try-$n"
		if [ "${REPLAY_END%%:*}" = "$want" ]; then
			cp "$try" "$cur"
			msg "run $run: not needed (still $want)"
		else
			kept+=("$run")
			msg "run $run: needed (without it: ${REPLAY_END:0:60})"
		fi
	done < <(diff_runs "$img" "$seed")
	"$SCRATCH/bin/fuzz-mutate" -F -p "$seed" > "$SCRATCH/fields"
	echo "reduced: $cur ($want), ${#kept[@]} change(s) left against $(basename "$seed"):"
	for run in "${kept[@]}"; do
		if [ "$run" = trunc ]; then
			echo "  truncated to $(stat -c %s "$cur") bytes"
			continue
		fi
		echo "  bytes ${run% *}+${run#* }: $(od -An -tx1 -j "${run% *}" -N "${run#* }" "$seed" | tr -s ' ') -> $(od -An -tx1 -j "${run% *}" -N "${run#* }" "$cur" | tr -s ' ')"
		awk -v s="${run% *}" -v l="${run#* }" '$2 ~ /^@/ {
			split(substr($2, 2), p, "[./]"); o = p[1] + 0; w = int((p[2] + p[3] + 7) / 8)
			if (o < s + l && o + w > s) print "    field " $1 " (" $2 ", nid " $6 ")" }' "$SCRATCH/fields" | first 6
	done
}

# ----------------------------------------------------------------- report ---

report() {
	local elapsed=$1 qemu_s=$2 total refused ok errors killed nowalk crash hang kern mem
	local r=$OUT/results
	count_outcome() { grep -c " outcome=$1 " "$r" || true; }
	total=$(wc -l < "$r")
	refused=$(count_outcome refused)
	ok=$(count_outcome ok)
	errors=$(count_outcome errors)
	killed=$(count_outcome killed)
	nowalk=$(count_outcome nowalk)
	crash=$(grep -c ' outcome=crash$' "$r" || true)
	hang=$(grep -c ' outcome=hang$' "$r" || true)
	kern=$(grep -c ' kern=1 ' "$r" || true)
	mem=$(awk -v c="$CACHE_LIMIT_KB" -v a="$AVAIL_MIN_KB" '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
		f["cache_kb"] > c || (f["avail_kb"] != "" && f["avail_kb"] < a) { n++ }
		END { print n + 0 }' "$r")
	{
		echo "kernel fuzz campaign $RUN_ID: mode $MODE ($MODULE_VERSION), seed $SEED, kernel $KVER, accel $QEMU_ACCEL"
		echo "seeds: ${#SEEDS[@]} ($(printf '%s\n' "${SEEDS[@]}" | sed 's|.*/||; s|\.img$||' | tr '\n' ' '))"
		echo "images tried: $total in $((elapsed / 60)) min $((elapsed % 60)) s ($BOOTS boot(s); QEMU ${qemu_s} s)"
		awk -v n="$total" -v e="$elapsed" -v q="$qemu_s" 'BEGIN {
			if (e > 0) printf "images/minute: %.0f overall, %.0f in the guest stage\n", n * 60 / e, (q > 0 ? n * 60 / q : 0) }'
		echo "outcomes:"
		printf '  %-34s %6s\n' "mount refused" "$refused" "mounted, walked clean" "$ok" \
			"mounted, walk saw errors" "$errors" "walk killed (syscall > $((KILL_S - WALK_S)) s)" "$killed" \
			"walker gave no summary" "$nowalk" "crash (oops/BUG/WARN/panic)" "$crash" \
			"hang (stuck, lockup, watchdog)" "$hang" "kernel oops-like line, no panic" "$kern" \
			"memory (cache > $((CACHE_LIMIT_KB / 1024)) MiB or avail < $((AVAIL_MIN_KB / 1024)) MiB)" "$mem"
		echo "mount refusals by errno: $(sed -n 's/.* outcome=refused mount=\([0-9]*\) .*/\1/p' "$r" | sort -n | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }')"
		echo "walk errors (all images): $(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] ~ /^(euclean|eopnotsupp|eio|other)$/) t[kv[1]] += kv[2] } }
			END { printf "EUCLEAN %d, EOPNOTSUPP %d, EIO %d, other %d", t["euclean"], t["eopnotsupp"], t["eio"], t["other"] }' "$r")"
		echo "other errnos of the walks: $(sed -n 's/.* errnos=\([^ ]*\) .*/\1/p' "$r" | tr ',' '\n' | grep -v '^-$' |
			awk -F: '{ t[$1] += $2 } END { for (k in t) printf "%s %d\n", k, t[k] }' | sort | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
		echo "largest page-cache growth of one walk: $(sed -n 's/.* cache_kb=\(-\{0,1\}[0-9]*\) .*/\1/p' "$r" | sort -n | tail -n 1) kB; lowest MemAvailable: $(sed -n 's/.* avail_kb=\([0-9]*\) .*/\1/p' "$r" | sort -n | first 1) kB"
		echo "slowest image: $(sed -n 's/^\([0-9]*\) .* ms=\([0-9]*\) .*/\2 ms (image \1)/p' "$r" | sort -n | tail -n 1)"
		sed -n 's/.* msg=//p' "$r" | sed -E 's/\(device [^)]*\): //; s/0x[0-9a-f]+/N/g; s/-?[0-9]+/N/g' > "$SCRATCH/msgs"
		echo "distinct kernel erofs messages (per image its first error, else its first message; numbers masked): $(sort -u "$SCRATCH/msgs" | grep -c . || true)"
		sort "$SCRATCH/msgs" | uniq -c | sort -rn | first 15 | sed 's/^/    /'
		if [ ${#FAILURES[@]} -eq 0 ]; then
			echo "findings: none"
		else
			echo "findings: ${#FAILURES[@]}"
			printf '  %s\n' "${FAILURES[@]}"
			echo "kept in $OUT/crashes/"
		fi
	} | tee "$OUT/report.txt"
}

# ------------------------------------------------------------------- main ---

main() {
	local t0=$SECONDS qemu_s=0 b first count t1 img
	command -v "$QEMU" > /dev/null || die "$QEMU not found (apt-get install qemu-system-x86)"
	[ -x /bin/busybox ] || die "busybox missing (apt-get install busybox-static)"
	setup
	if [ -n "$KSERIES" ]; then
		local line
		line=$(top_builddir=$top_builddir bash "$here/fetch-kernel.sh" "$KSERIES" "$KERNEL_DIR" \
			2> "$OUT/fetch-$KSERIES.log") ||
			die "no $KSERIES kernel: $(tail -n 1 "$OUT/fetch-$KSERIES.log")"
		read -r KVER KROOT <<< "$line"
		KSHORT=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<< "$KVER")
		MODULE_VERSION="$KVER's own erofs.ko"
		if [ -n "$MODULE_KO" ]; then
			# shellcheck disable=SC2034 # lib.sh's initramfs_base copies it in
			OUR_KO=$MODULE_KO
			MODULE_VERSION="$MODULE_KO on $KVER"
		fi
		msg "run $RUN_ID: kernel $KVER ($KROOT), module: $MODULE_VERSION, accel $QEMU_ACCEL, out $OUT"
	else
		KVER=${KVER:-$(detect_kver)}
		msg "run $RUN_ID: mode $MODE, kernel $KVER, accel $QEMU_ACCEL, out $OUT"
		build_kmod
		MODULE_VERSION=$OUR_VERSION
		[ "$MODE" = ours ] || MODULE_VERSION="Debian's erofs.ko"
	fi
	build_tools
	build_fuzz_initramfs
	FAILURES=() BOOTS=0
	: > "$OUT/results"
	if [ "$REDUCE" = 1 ]; then
		[ $# -eq 2 ] || die "--reduce CRASH.img SEED.img"
		reduce "$1" "$2"
		exit
	fi
	if [ -n "$FINDINGS" ]; then
		[ -n "$KSERIES" ] || die "--findings needs --kernel"
		findings "$FINDINGS"
		exit
	fi
	if [ "$REPLAY" = 1 ]; then
		for img in "$@"; do
			replay_one "$img" "$(basename "$img" .img)"
			echo "$img: $REPLAY_END (serial: $OUT/boots/replay-$(basename "$img" .img).log)"
		done
		exit 0
	fi
	[ -x "$MKFS" ] || die "mkfs not found: $MKFS (build it, or set MKFS=)"
	make_seeds
	printf '%s\n' "${SEEDS[@]}" | sed 's|.*/||' > "$OUT/seeds.list"
	mkdir -p "$OUT/seeds"
	cp "${SEEDS[@]}" "$OUT/seeds/"
	for img in "${SEEDS[@]}"; do [ ! -f "$img.blob" ] || cp "$img.blob" "$OUT/seeds/"; done
	for ((b = 0, first = 0; first < IMAGES; b++, first += BATCH)); do
		count=$((IMAGES - first < BATCH ? IMAGES - first : BATCH))
		t1=$SECONDS
		run_batch "$b" "$first" "$count"
		qemu_s=$((qemu_s + SECONDS - t1))
		msg "batch $b: images $first..$((first + count - 1)) done; $(wc -l < "$OUT/results") images, ${#FAILURES[@]} finding(s) so far, $((SECONDS - t0)) s"
	done
	report $((SECONDS - t0)) "$qemu_s"
	[ ${#FAILURES[@]} -eq 0 ] || exit 1
}

main "$@"
