#!/bin/bash
# qemu-tests/run.sh: prove EROFS images against real Debian kernels.
#
# Builds every image of qemu-tests/matrix with $MKFS, boots the stock Debian
# 6.1 kernel under QEMU once per module mode (ours = kmod/ build, stock =
# Debian's erofs.ko), and each newer Debian kernel of KERNELS (fetched by
# fetch-kernel.sh) with its own packaged erofs.ko; mounts each image
# read-only in the guest, runs erofs-manifest on it, and compares the result
# with the host manifest of the source tree.  See qemu-tests/README.md.
#
# Output: "PASS: <target>/<name>", "FAIL: <target>/<name> (reason; log:
# path)", "SKIP: ...", then "N passed, N failed[, N skipped]"; exit 1 on any
# failure.  A target is "ours" or "stock" on the 6.1 kernel, "X.Y/stock" on
# a fetched one ("SKIP: 6.12 (reason)" when it cannot be fetched), and
# "X.Y/ours" with our module for it (findings.sh).
#
# Knobs (environment):
#   MKFS        mkfs binary (default: $top_builddir/mkfs/mkfs.erofs)
#   KVER        Debian kernel version (default: newest installed *-amd64)
#   QEMU_ACCEL  tcg (default) or kvm
#   MODES       "ours stock" (default), or one of them
#   MATRIX      matrix file (default: qemu-tests/matrix)
#   ONLY        extended regex: run only matrix lines whose NAME matches
#   KEEP_OUT    1: keep qemu-tests/out/<run>/ even when everything passed
#   IMAGE_LIMIT seconds per image in the guest (default 60)
#   KERNEL_IMAGE_LIMIT  the same on the fetched kernels (default 180: 7.x
#               reads some all-fragments images 10-30x slower than 6.1)
#   BOOT_LIMIT  seconds per QEMU boot (default 120 + 8 per image, + 60 per fuse line; on the
#               fetched kernels twice KERNEL_IMAGE_LIMIT - IMAGE_LIMIT more)
#   QEMU_PARALLEL 1 (default): boot the modes side by side; 0: one after another
#   IMAGE_JOBS  images made at a time (default: online CPUs)
#   MANIFEST    host erofs-manifest (default: $top_builddir/tools/erofs-manifest,
#               else compiled from tools/manifest.c)
#   KERNELS     newer kernels to boot in stock mode, as fetch-kernel.sh
#               series (default "6.12 7"; empty: only KVER)
#   KERNEL_DIR  where they are unpacked (default $top_builddir/qemu-tests/kernels)
#   OURS_KERNELS, OURS_LINES, FINDINGS_LIST  the newer kernels' ours
#               targets and fuzz findings (findings.sh)
#   EROFSFUSE   erofsfuse for the matrix lines with EXPECT "fuse" (default:
#               $top_builddir/fuse/erofsfuse; those lines SKIP without it)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
top_builddir=${top_builddir:-$PWD}

MKFS=${MKFS:-$top_builddir/mkfs/mkfs.erofs}
QEMU_ACCEL=${QEMU_ACCEL:-tcg}
MODES=${MODES:-ours stock}
MATRIX=${MATRIX:-$here/matrix}
ONLY=${ONLY:-}
KEEP_OUT=${KEEP_OUT:-0}
IMAGE_LIMIT=${IMAGE_LIMIT:-60}
KERNEL_IMAGE_LIMIT=${KERNEL_IMAGE_LIMIT:-180}
BOOT_LIMIT=${BOOT_LIMIT:-}	# default set once the image count is known
QEMU_PARALLEL=${QEMU_PARALLEL:-1}
QEMU=${QEMU:-qemu-system-x86_64}
KERNELS=${KERNELS-6.12 7}
KERNEL_DIR=${KERNEL_DIR:-$top_builddir/qemu-tests/kernels}
QEMU_JOBS=2	# QEMU boots side by side (one per core of the CI host)
IMAGE_JOBS=${IMAGE_JOBS:-$(nproc)}

CANARY_MARKER=EROFS-FORGE-CANARY-BLOCK-1000
# the kernel message that proves a crafted image was refused for the intended reason
declare -A REFUSE_RE=(
	[badmagic]='cannot find valid erofs superblock'
	[badcsum]='invalid checksum'
	[incompat]='unidentified incompatible feature'
	# not crafted: a layout older kernels misread, refused without a message
	[unread]='Structure needs cleaning'
)
ALIGN=$((1024 * 1024))	# image alignment on the data disk

# EXPECT item ours61: an algorithm only our 6.1 module reads (kmod/README,
# "Algorithms"): ours must mount the line, Debian's 6.1 module must refuse
# it at mount with its usual message for an algorithm it lacks (a newer
# stock kernel must mount it like any line)
declare -A OURS61=()
STOCK61_REFUSE_RE="algorithm [0-9]+ isn't enabled on this kernel|unidentified algorithms [0-9a-f]+, please upgrade kernel"

# kernel log lines that fail a valid image whatever their level
IOERR_RE='beyond end of device|I/O error|Buffer I/O'
# kernel log lines that are expected noise (module taint, experimental notices,
# a TCG timer-routing complaint that a loaded host can provoke at boot)
NOISE_RE='EXPERIMENTAL|taints kernel|tainting kernel|erofs-forge-test:|MP-BIOS bug: 8254 timer not connected'

msg() { echo "run.sh: $*" >&2; }
die() { msg "error: $*"; exit 2; }

# the pieces fuzz.sh shares: kernel and module setup, initramfs, QEMU
. "$here/lib.sh"

# hostile-image regression cases (qemu-tests/hostile.list, HOSTILE_LIST=)
. "$here/hostile.sh"

# the newer kernels' fuzz findings and our modules for those kernels
# (fuzz-findings.list, FINDINGS_LIST=, OURS_KERNELS=, OURS_LINES=)
. "$here/findings.sh"

# the rest of the runner, one concern a file: the source trees, the kernels
# and targets, the images, the boots, the verdicts
. "$here/trees.sh"
. "$here/kernels.sh"
. "$here/images.sh"
. "$here/boots.sh"
. "$here/verdicts.sh"

# ---------------------------------------------------------------- setup ---

setup_dirs() {
	RUN_ID=$(date +%Y%m%d-%H%M%S)-$$
	local root=$here/out
	[ -w "$here" ] || root=$top_builddir/qemu-tests/out	# read-only source tree
	OUT=$root/$RUN_ID
	mkdir -p "$OUT"
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/erofs-forge-qemu.XXXXXX")
	trap cleanup EXIT
}

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local rc=$?
	local pid
	for pid in ${BOOT_PIDS:-}; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$SCRATCH"
	if [ "$rc" -eq 0 ] && [ "$KEEP_OUT" != 1 ]; then
		rm -rf "$OUT"
	else
		msg "logs and manifests kept in $OUT"
	fi
}

build_tools() {
	local cflags=(-O2 -Wall "-I$top_srcdir/include")
	mkdir -p "$SCRATCH/bin"
	if [ -z "${MANIFEST:-}" ]; then
		MANIFEST=$top_builddir/tools/erofs-manifest
		if [ ! -x "$MANIFEST" ] || [ "$MANIFEST" -ot "$top_srcdir/tools/manifest.c" ]; then
			MANIFEST=$SCRATCH/bin/erofs-manifest-host
			gcc "${cflags[@]}" -o "$MANIFEST" "$top_srcdir/tools/manifest.c"
		fi
	fi
	FSCK=${FSCK:-$top_builddir/fsck/fsck.erofs}
	EROFSFUSE=${EROFSFUSE:-$top_builddir/fuse/erofsfuse}
	[ -x "$FSCK" ] || die "no fsck.erofs at $FSCK (set FSCK=)"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/erofs-manifest" "$top_srcdir/tools/manifest.c"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/guest-loop" "$here/guest-loop.c"
	gcc "${cflags[@]}" -o "$SCRATCH/bin/craft" "$here/craft.c"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/hostile-walk" "$here/hostile-walk.c"
}

main() {
	local t0=$SECONDS mode
	command -v "$QEMU" > /dev/null || die "$QEMU not found (apt-get install qemu-system-x86)"
	[ -x "$MKFS" ] || die "mkfs not found: $MKFS (build it, or set MKFS=)"
	KVER=${KVER:-$(detect_kver)}
	[ -e "/boot/vmlinuz-$KVER" ] || die "/boot/vmlinuz-$KVER missing"
	[ -x /bin/busybox ] || die "busybox missing (apt-get install busybox-static)"
	declare -gA KIND IMG INDEX ENDED ENDLOG REFUSE HOSTILE_CASE GUEST_KIND NO_SYMLINK_MODE
	declare -gA KMIN KMAX T_KVER T_KROOT T_MODE INITRAMFS_OF IMAGES_OF KROOT_OF ALGS LIMIT_OF
	declare -gA BLOB	# @blob@ lines: the extra device's file
	declare -gA FEXPECT OURKO_OF OURVER_OF	# findings.sh
	HOST_KVER=$KVER
	setup_dirs
	msg "run $RUN_ID: kernel $KVER, accel $QEMU_ACCEL, mkfs $MKFS"
	build_kmod
	build_tools
	setup_targets
	build_images
	if [ ${#NAMES[@]} -gt 0 ]; then
		build_data_disk
		for mode in "${TARGETS[@]}"; do
			[ -n "${INITRAMFS_OF[${T_KVER[$mode]}]:-}" ] ||
				build_initramfs "${T_KVER[$mode]}" "${T_KROOT[$mode]}"
		done
		BOOT_LIMIT=${BOOT_LIMIT:-$((120 + 8 * ${#NAMES[@]} + $(fuse_boot_seconds)))}
		msg "data disk $(( $(stat -c %s "$DATA_DISK") / 1048576 )) MiB"
		run_qemu_stage
	fi
	echo "$PASSED passed, $FAILED failed$([ "$SKIPPED" -gt 0 ] && echo ", $SKIPPED skipped")"
	msg "total $((SECONDS - t0)) s"
	if [ "$FAILED" -gt 0 ]; then
		keep_failed_images
		exit 1
	fi
	exit 0
}

keep_failed_images() {
	local name
	for name in "${NAMES[@]}"; do
		if grep -qE "^FAIL: ([0-9.]+/)?[a-z]+/$name " "$OUT/verdicts" 2>/dev/null; then
			cp --sparse=always "${IMG[$name]}" "$OUT/" 2>/dev/null || true
		fi
	done
}

main "$@"
