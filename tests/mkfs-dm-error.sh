#!/bin/bash
# A source tree on a disk that fails: an ext4 image on a loop device, mapped
# through device-mapper with an "error" target over one block of a file's
# data.  mkfs.erofs must say "<src>/<path>: cannot read: Input/output error",
# exit non-zero and leave no image, for plain, compressed and chunked files.
# Skipped where the kernel has no device-mapper (tests/mkfs-bad-device.sh
# does the same through a damaged squashfs image, with loop devices only).
. "$(dirname "$0")/lib.sh"
require_root

for tool in losetup dmsetup mkfs.ext4 debugfs blockdev; do
	if ! command -v "$tool" >/dev/null; then
		echo "$test_name: $tool is missing (scripts/install-deps.sh installs it); skipped"
		exit 77
	fi
done
# without udev, libdevmapper makes the /dev/mapper nodes itself
export DM_DISABLE_UDEV=1
if ! dmsetup targets 2>/dev/null | grep -q '^error'; then
	echo "$test_name: no device-mapper (or no error target) in this kernel; skipped"
	exit 77
fi
if ! [ -e /dev/loop-control ]; then
	echo "$test_name: no loop device support here; skipped"
	exit 77
fi

dm_name=erofs-forge-dm-error-$$
loop='' mnt=$WORK/mnt
cleanup_devices() {
	mountpoint -q "$mnt" 2>/dev/null && { umount "$mnt" || umount -l "$mnt"; }
	dmsetup remove "$dm_name" 2>/dev/null || true
	[ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
}
trap 'rc=$?; cleanup_devices; (exit $rc); on_exit' EXIT

# the tree: one file of many blocks, which the error target cuts in two
tree=$WORK/tree
mkdir -p "$tree/dir"
head -c 1000000 /dev/urandom >"$tree/dir/big"
echo fine >"$tree/small"
mkfs.ext4 -q -F -b 4096 -O ^has_journal -d "$tree" "$WORK/ext4.img" 8M >/dev/null

# the file's physical blocks, in file order; the error covers the middle one
read -r -a blocks <<<"$(debugfs -R "blocks /dir/big" "$WORK/ext4.img" 2>/dev/null)"
if [ "${#blocks[@]}" -lt 10 ]; then
	fail "debugfs did not list the blocks of /dir/big: ${blocks[*]}"
	finish
fi
bad=${blocks[${#blocks[@]} / 2]}

loop=$(losetup -f --show "$WORK/ext4.img")
sectors=$(blockdev --getsz "$loop")
first=$((bad * 8))	# 512-byte sectors of a 4096-byte block
table="0 $first linear $loop 0
$first 8 error
$((first + 8)) $((sectors - first - 8)) linear $loop $((first + 8))"
if ! dmsetup create "$dm_name" <<<"$table"; then
	fail "dmsetup create failed with the table: $table"
	finish
fi
dmsetup mknodes "$dm_name" 2>/dev/null || true
mkdir "$mnt"
if ! mount -t ext4 -o ro "/dev/mapper/$dm_name" "$mnt"; then
	fail "cannot mount the ext4 image through device-mapper"
	finish
fi
if cat "$mnt/dir/big" >/dev/null 2>&1; then
	fail "the file over the error target reads without error: the test is broken"
	finish
fi

out=$WORK/out
mkdir "$out"
nothing_left() { # LABEL
	if [ -n "$(ls -A "$out")" ]; then
		fail "$1: left files behind: $(ls -A "$out" | tr '\n' ' ')"
		rm -rf "${out:?}"/* "$out"/.[!.]* 2>/dev/null || true
	else
		pass "$1: nothing left behind"
	fi
}
eio="$mnt/dir/big: cannot read: Input/output error"
expect_failure "dm error/lz4hc" "$eio" "$MKFS" --quiet -zlz4hc "$out/x.img" "$mnt"
nothing_left "dm error/lz4hc"
expect_failure "dm error/chunks" "$eio" "$MKFS" --quiet --chunksize=4096 "$out/x.img" "$mnt"
nothing_left "dm error/chunks"
expect_failure "dm error/plain" "$eio" \
	"$MKFS" --quiet "$out/x.img" "$mnt"
nothing_left "dm error/plain"
finish
