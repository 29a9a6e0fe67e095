#!/bin/bash
# Kernel targeting: mkfs.erofs's summary and fsck.erofs -p name the oldest
# Linux that mounts the image and why; --max-kernel=X.Y refuses, before
# anything is written, every option that needs a newer release, naming the
# option and the release.
. "$(dirname "$0")/lib.sh"

src=$WORK/src
mkdir -p "$src/d"
head -c 300000 < <(yes 'kernel targeting test text') >"$src/d/text"
head -c 5000 /dev/urandom >"$src/d/random"
printf 'small\n' >"$src/small"

# expect_needs LABEL WANT [mkfs options...]: the summary's last line and
# fsck -p's kernel line both say WANT (FSCK_WANT, when set, for fsck)
expect_needs() {
	local label=$1 want=$2 img=$WORK/$1.img got fsck_got
	local fsck_want=${FSCK_WANT:-$2}
	shift 2
	if ! "$MKFS" "$@" "$img" "${SRC:-$src}" >"$WORK/$label.out" 2>&1; then
		fail "$label: mkfs failed: $(tail -n 1 "$WORK/$label.out")"
		return
	fi
	got=$(sed -n "s|^$img: \(.*Linux.*\)|\1|p" "$WORK/$label.out")
	fsck_got=$("$FSCK" -p "$img" | sed -n 's/^  kernel: *//p')
	if [ "$got" != "$want" ]; then
		fail "$label: mkfs says '$got', expected '$want'"
	elif [ "$fsck_got" != "$fsck_want" ]; then
		fail "$label: fsck.erofs -p says '$fsck_got', expected '$fsck_want'"
	else
		pass "$label: $want"
	fi
}

expect_needs plain 'needs Linux 5.4 (uncompressed, 4 KiB blocks)'
expect_needs lz4 'needs Linux 5.4 (lz4)' -z lz4
expect_needs bigpcluster 'needs Linux 5.13 (big pclusters)' -z lz4hc -C 65536
expect_needs chunks 'needs Linux 5.15 (chunk-based files)' --chunksize=4096
expect_needs ztail 'needs Linux 5.17 (ztailpacking)' -z lz4hc -E ztailpacking
expect_needs fragments 'needs Linux 6.1 (fragments)' -z lz4hc -E ztailpacking,fragments
# -E dedupe: pclusters used again at other offsets (no superblock bit says
# so, and fsck.erofs reads the superblock only: it sees LZ4); text as in
# qemu-tests/run.sh's dup tree, once as is and once shifted
if [ -d /usr/share/common-licenses ]; then
	mkdir -p "$WORK/dup"
	find /usr/share/common-licenses -type f | sort | xargs cat >"$WORK/dup/text"
	{ head -c 777 /dev/urandom; cat "$WORK/dup/text" "$WORK/dup/text"; } >"$WORK/dup/shifted"
	SRC=$WORK/dup FSCK_WANT='needs Linux 5.4 (lz4)' \
		expect_needs dedupe 'needs Linux 6.0 (shared pclusters)' -z lz4hc -E dedupe
	SRC=$WORK/dup expect_needs dedupe-frag 'needs Linux 6.1 (fragments)' -z lz4hc -E dedupe,fragments
else
	echo "note: no /usr/share/common-licenses: the -E dedupe summary is not checked"
fi
expect_needs b1024 'needs Linux 6.4 (sub-page blocks (1024-byte blocks); 6.1.113 and later 6.1 too)' -b 1024

# --max-kernel refuses before any write: an existing file at the image path
# keeps its bytes
printf 'precious\n' >"$WORK/keep.img"
refused() { # LABEL EXPECTED-MESSAGE-REGEX... -- mkfs options
	local label=$1 re
	local res=()
	shift
	while [ "$1" != -- ]; do res+=("$1"); shift; done
	shift
	if "$MKFS" "$@" "$WORK/keep.img" "$src" >"$WORK/$label.out" 2>&1; then
		fail "$label: mkfs accepted $*"
		return
	fi
	if [ "$(cat "$WORK/keep.img")" != precious ]; then
		fail "$label: the image path was written"
		printf 'precious\n' >"$WORK/keep.img"
		return
	fi
	for re in "${res[@]}"; do
		if ! grep -qE -- "$re" "$WORK/$label.out"; then
			fail "$label: no '$re' in: $(tr '\n' '|' <"$WORK/$label.out")"
			return
		fi
	done
	pass "$label: refused, nothing written"
}
refused max-5.16 'error: -E ztailpacking: ztailpacking needs Linux 5\.17, newer than --max-kernel=5\.16' \
	'1 option needs a newer kernel' -- -z lz4hc -E ztailpacking --max-kernel=5.16
refused max-5.10 '-C: big pclusters needs Linux 5\.13' '-E ztailpacking: ztailpacking needs Linux 5\.17' \
	'-E all-fragments: fragments needs Linux 6\.1' '-E dedupe: shared pclusters needs Linux 6\.0' \
	'4 options need a newer kernel than --max-kernel=5\.10' \
	-- -z lz4hc -C 65536 -E ztailpacking,all-fragments,dedupe --max-kernel=5.10
refused max-chunks '--chunksize: chunk-based files needs Linux 5\.15' -- --chunksize=4096 --max-kernel=5.14
refused max-dedupe-plain '-E dedupe: chunk-based files needs Linux 5\.15' -- -E dedupe --max-kernel=5.10
refused max-b512 '-b 512: sub-page blocks \(512-byte blocks\) needs Linux 6\.4' -- -b 512 --max-kernel=5.15
refused max-bad '--max-kernel=six: expected a Linux release X\.Y' -- --max-kernel=six
refused max-bad2 '--max-kernel=6: expected a Linux release X\.Y' -- --max-kernel=6

# at or above what the options need, --max-kernel changes nothing
for max in 6.1 6.1.113 7.3; do
	if "$MKFS" --quiet -z lz4hc -C 65536 -E ztailpacking,fragments,dedupe --max-kernel=$max \
		"$WORK/ok.img" "$src" >"$WORK/ok.out" 2>&1 && "$FSCK" "$WORK/ok.img" >/dev/null; then
		pass "--max-kernel=$max: 6.1 features accepted"
	else
		fail "--max-kernel=$max: $(tail -n 1 "$WORK/ok.out")"
	fi
done
# 6.1 LTS mounts sub-page blocks from 6.1.113 on: a warning, and the image
if "$MKFS" --quiet -b 1024 --max-kernel=6.1 "$WORK/b.img" "$src" >"$WORK/b.out" 2>&1 &&
   grep -q 'warning: -b 1024: sub-page blocks (1024-byte blocks) needs Linux 6.4, or 6.1.113 and later of the 6.1 series' "$WORK/b.out" &&
   [ -s "$WORK/b.img" ]; then
	pass "--max-kernel=6.1 -b 1024: built, with the 6.1.113 warning"
else
	fail "--max-kernel=6.1 -b 1024: $(tr '\n' '|' <"$WORK/b.out")"
fi
if "$MKFS" -b 1024 --max-kernel=6.2 "$WORK/b2.img" "$src" >"$WORK/b2.out" 2>&1; then
	fail "--max-kernel=6.2 -b 1024: accepted (6.2 never had sub-page blocks)"
else
	pass "--max-kernel=6.2 -b 1024: refused"
fi

finish
