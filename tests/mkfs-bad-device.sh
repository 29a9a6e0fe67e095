#!/bin/bash
# Failing devices on either side of mkfs.erofs, through loop devices:
# - a source whose file data cannot be read (a squashfs image on a loop
#   device with a damaged data block, which the kernel reads as EIO):
#   "<src>/<path>: cannot read: Input/output error", a non-zero exit and no
#   image left, for plain, compressed and chunked files;
# - an image device too small for the image: a message naming the device,
#   a non-zero exit, and nothing left in the temporary folder.
# tests/mkfs-dm-error.sh does the first through device-mapper's error target.
. "$(dirname "$0")/lib.sh"
require_root

loops=() mounts=()
cleanup_devices() {
	local m d
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
	for d in "${loops[@]}"; do losetup -d "$d" 2>/dev/null || true; done
}
trap 'rc=$?; cleanup_devices; (exit $rc); on_exit' EXIT

# attach FILE: $attached is the loop device now backed by FILE
attach() {
	attached=$(losetup -f --show "$1") || return 1
	loops+=("$attached")
}

if ! command -v losetup >/dev/null || ! [ -e /dev/loop-control ]; then
	echo "$test_name: no loop device support here (losetup, /dev/loop-control); skipped"
	exit 77
fi
probe=$WORK/probe
truncate -s 1M "$probe"
if ! attach "$probe"; then
	echo "$test_name: cannot attach a loop device here; skipped"
	exit 77
fi

out=$WORK/out
mkdir "$out"
nothing_left() { # LABEL DIR
	if [ -n "$(ls -A "$2")" ]; then
		fail "$1: left files behind in $2: $(ls -A "$2" | tr '\n' ' ')"
		rm -rf "${2:?}"/* "$2"/.[!.]* 2>/dev/null || true
	else
		pass "$1: nothing left behind"
	fi
}

# --- a source that fails to read ---
if command -v mksquashfs >/dev/null && grep -qw squashfs /proc/filesystems; then
	tree=$WORK/tree
	mkdir -p "$tree/dir"
	# compressible, not repetitive: every squashfs block is compressed and
	# a damaged one fails to decompress
	python3 -c 'import base64, random, sys
sys.stdout.buffer.write(base64.b64encode(random.Random(7).randbytes(3 << 20)))' >"$tree/dir/big"
	echo fine >"$tree/small"
	mksquashfs "$tree" "$WORK/source.sqfs" -noappend -quiet -no-progress -comp gzip \
		-b 131072 >/dev/null
	# the data blocks come first, right after the 96-byte superblock; the
	# inode and directory tables sit at the end
	python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
	f.seek(1 << 20)
	f.write(b"\xde\xad\xbe\xef" * 4096)' "$WORK/source.sqfs"
	mnt=$WORK/mnt
	mkdir "$mnt"
	if attach "$WORK/source.sqfs" && mount -t squashfs -o ro "$attached" "$mnt"; then
		mounts+=("$mnt")
		if cat "$mnt/dir/big" >/dev/null 2>&1; then
			fail "the damaged squashfs reads without error: the test is broken"
		fi
		eio="$mnt/dir/big: cannot read: Input/output error"
		expect_failure "EIO/lz4hc" "$eio" "$MKFS" --quiet -zlz4hc "$out/x.img" "$mnt"
		nothing_left "EIO/lz4hc" "$out"
		expect_failure "EIO/chunks" "$eio" "$MKFS" --quiet --chunksize=4096 "$out/x.img" "$mnt"
		nothing_left "EIO/chunks" "$out"
		expect_failure "EIO/plain" "$eio" \
			"$MKFS" --quiet "$out/x.img" "$mnt"
		nothing_left "EIO/plain" "$out"
	else
		fail "cannot mount a squashfs image through a loop device"
	fi
else
	echo "note: no mksquashfs or squashfs support; the failing-source case not run"
fi

# --- an image device too small for the image ---
src=$WORK/src
mkdir -p "$src/dir"
head -c 2000000 /dev/urandom >"$src/dir/random"
head -c 300000 < <(yes 'compressible text') >"$src/dir/text"
tmp=$WORK/tmp
mkdir "$tmp"
# the device's bytes before, so that what mkfs.erofs changed shows
python3 -c 'import sys; sys.stdout.buffer.write(b"\xa5" * (512 << 10))' >"$WORK/small.dev"
cp "$WORK/small.dev" "$WORK/small.before"
if attach "$WORK/small.dev"; then
	small=$attached
	for mode in "plain|" "lz4hc|-zlz4hc"; do
		IFS='|' read -r label options <<<"$mode"
		# shellcheck disable=SC2086 # options is a list
		expect_failure "small device/$label" \
			"$small: .*(No space left on device|holds [0-9]+ bytes, the image needs)" \
			env TMPDIR="$tmp" "$MKFS" --quiet $options "$small" "$src"
		nothing_left "small device/$label (temporary folder)" "$tmp"
		if cmp -s "$small" "$WORK/small.before"; then
			pass "small device/$label: left as it was"
		else
			fail "small device/$label: written although the image cannot fit"
		fi
		cp "$WORK/small.before" "$small"
	done
fi

# ...and one large enough takes the image in place, which reads back
truncate -s 16M "$WORK/large.dev"
if attach "$WORK/large.dev"; then
	large=$attached
	for mode in "plain|" "lz4hc|-zlz4hc"; do
		IFS='|' read -r label options <<<"$mode"
		rm -rf "$WORK/extracted"
		# shellcheck disable=SC2086 # options is a list
		if ! env TMPDIR="$tmp" "$MKFS" --quiet $options "$large" "$src" 2>"$WORK/err.txt"; then
			fail "large device/$label: mkfs.erofs failed: $(cat "$WORK/err.txt")"
		elif ! "$FSCK" --extract="$WORK/extracted" "$large" >/dev/null 2>"$WORK/err.txt"; then
			fail "large device/$label: fsck.erofs failed: $(head -3 "$WORK/err.txt")"
		else
			same_manifest "large-device-$label" "$src" "$WORK/extracted"
		fi
		nothing_left "large device/$label (temporary folder)" "$tmp"
	done
fi
finish
