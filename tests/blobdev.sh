#!/bin/bash
# --blobdev=FILE: with --chunksize every file's data goes, as chunks, to an
# extra device; the image keeps the metadata, the device table and 8-byte
# chunk indexes naming device 1.  Checked: the on-disk fields, round trips
# through our fsck.erofs --device, dump.erofs and erofsfuse's operations
# (--device, --offset: tests/rdtools-common.sh), erofs-utils 1.9.4 both ways (skipped
# without ../shared/anchors), reproducibility, and clear failures for a
# missing, short or extra device, a damaged table, and bad options (which
# leave neither an image nor a blob behind).
. "$(dirname "$0")/lib.sh"
require_root
. "$top_srcdir/tests/rdtools-common.sh"

REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}
src=$WORK/src
bash "$GEN_TREE" "$src" >/dev/null
# the same 1 MiB four times: stored once in the blob
head -c 1048576 /dev/urandom >"$src/dup-0"
for i in 1 2 3; do cp "$src/dup-0" "$src/dup-$i"; done

img=$WORK/img.erofs
blob=$WORK/img.blob
"$MKFS" --quiet -U 6f3c1a2e-7d4b-4c8e-9a1f-2b3c4d5e6f70 --chunksize=4096 \
	--blobdev="$blob" "$img" "$src"

# ---- what the image says ----
incompat=$(le "$img" $((1024 + 0x50)) 4)
devs=$(le "$img" $((1024 + 0x56)) 2)
slotoff=$(le "$img" $((1024 + 0x58)) 2)
blksz=$((1 << $(le "$img" $((1024 + 12)) 1)))
blob_size=$(stat -c %s "$blob")
if [ $((incompat & 0x8)) -ne 0 ] && [ $((incompat & 0x4)) -ne 0 ] && [ "$devs" = 1 ] &&
	[ "$slotoff" = 9 ]; then
	pass "superblock: device_table and chunked_file, 1 extra device, its slot at 1152"
else
	fail "superblock: incompat 0x$(printf %x "$incompat"), $devs devices, slot offset $slotoff"
fi
slot=$((slotoff * 128))
tag=$(od -v -An -tx1 -j "$slot" -N 64 "$img" | tr -d ' \n' | tr -d 0)
dev_blocks=$(le "$img" $((slot + 64)) 4)
mapped=$(le "$img" $((slot + 68)) 4)
sb_blocks=$(le "$img" $((1024 + 0x24)) 4)
if [ -z "$tag" ] && [ "$((dev_blocks * blksz))" = "$blob_size" ] &&
	[ "$mapped" = "$sb_blocks" ] && [ "$((sb_blocks * blksz))" = "$(stat -c %s "$img")" ]; then
	pass "device slot: no tag, $dev_blocks blocks (the blob's size), mapped after the image's $sb_blocks blocks"
else
	fail "device slot: tag '$tag', $dev_blocks blocks for a $blob_size-byte blob, mapped at $mapped, image $sb_blocks blocks"
fi
data=$(du -sb --apparent-size "$src" | cut -f1)
if [ "$(stat -c %s "$img")" -lt $((data / 20)) ] && [ "$blob_size" -lt $((data - 3 * 1048576)) ]; then
	pass "the data is in the blob ($blob_size bytes), the image is metadata ($(stat -c %s "$img") bytes); duplicates stored once"
else
	fail "image $(stat -c %s "$img") bytes, blob $blob_size bytes, for $data bytes of input"
fi

# ---- round trip through our fsck ----
ours_extract "ours --device" "$img" "$src" --device="$blob"

# ---- dump.erofs and erofsfuse's operations: --device, --offset ----
rdtools_devices blobdev "$img" "$src" dup-0 "$blob"

# ---- reproducible: image and blob ----
"$MKFS" --quiet -U 6f3c1a2e-7d4b-4c8e-9a1f-2b3c4d5e6f70 --chunksize=4096 --workers=1 \
	--blobdev="$WORK/again.blob" "$WORK/again.erofs" "$src"
if cmp -s "$img" "$WORK/again.erofs" && cmp -s "$blob" "$WORK/again.blob"; then
	pass "reproducible: the same image and blob bytes with --workers=1"
else
	fail "a second build differs"
fi

# ---- larger chunks, a block size of 512 ----
for config in "--chunksize=65536" "-b 512 --chunksize=1024"; do
	label=${config// /}
	# shellcheck disable=SC2086
	"$MKFS" --quiet $config --blobdev="$WORK/$label.blob" "$WORK/$label.erofs" "$src"
	ours_extract "$label" "$WORK/$label.erofs" "$src" --device="$WORK/$label.blob"
done

# ---- devices missing, short, extra ----
expect_failure "no --device" "has 1 extra device: give it with --device=PATH" "$FSCK" "$img"
head -c $((blob_size - blksz)) "$blob" >"$WORK/short.blob"
expect_failure "a short blob" "device 1 is too short" "$FSCK" --device="$WORK/short.blob" "$img"
expect_failure "two devices for one" "has 1 extra device.*2 given" \
	"$FSCK" --device="$blob" --device="$blob" "$img"
"$MKFS" --quiet --chunksize=4096 "$WORK/plain.erofs" "$src"
expect_failure "a device for a one-device image" "no extra devices" \
	"$FSCK" --device="$blob" "$WORK/plain.erofs"

# ---- damaged tables and indexes ----
cp "$img" "$WORK/bad.erofs"
nocsum "$WORK/bad.erofs"
wr16 "$WORK/bad.erofs" $((1024 + 0x58)) 60000
expect_failure "device table beyond the image" "device table .* beyond the end of the image" \
	"$FSCK" --device="$blob" "$WORK/bad.erofs"
cp "$img" "$WORK/bad.erofs"
nocsum "$WORK/bad.erofs"
wr16 "$WORK/bad.erofs" $((1024 + 0x56)) 3
expect_failure "three devices in the table, one given" "has 3 extra devices" \
	"$FSCK" --device="$blob" "$WORK/bad.erofs"
# the blob said to be 8 times larger: chunks still inside, a short device now
cp "$img" "$WORK/bad.erofs"
nocsum "$WORK/bad.erofs"
wr16 "$WORK/bad.erofs" $((slot + 64)) $((dev_blocks * 8 & 65535))
expect_failure "table says more blocks than the blob holds" "device 1 is too short" \
	"$FSCK" --device="$blob" "$WORK/bad.erofs"
# the first chunk index naming the blob (advise 0, device 1, a block inside
# it; 8-byte aligned, after the superblock's block) sent far past its end
idx=$(dev1_chunk_index "$img" "$blksz" "$dev_blocks")
if [ -n "$idx" ]; then
	cp "$img" "$WORK/bad.erofs"
	nocsum "$WORK/bad.erofs"
	wr16 "$WORK/bad.erofs" $((idx + 6)) 4096	# blkaddr's high half: block 2^28
	expect_failure "a chunk past the end of the blob" "beyond the end of device 1" \
		"$FSCK" --device="$blob" --extract="$WORK/x" "$WORK/bad.erofs"
	rm -rf "$WORK/x"
else
	fail "no chunk index naming device 1 found in the image"
fi

# ---- bad options leave nothing behind ----
out=$WORK/out
mkdir -p "$out"
expect_failure "--blobdev without --chunksize" "needs --chunksize" \
	"$MKFS" --quiet --blobdev="$out/b" "$out/i" "$src"
expect_failure "--blobdev with --block-list-file" "cannot be used with --block-list-file" \
	"$MKFS" --quiet --chunksize=4096 --blobdev="$out/b" --block-list-file="$out/l" \
	"$out/i" "$src"
expect_failure "the blob is the image" "cannot be the image itself" \
	"$MKFS" --quiet --chunksize=4096 --blobdev="$out/i" "$out/i" "$src"
expect_failure "the blob inside the source" "the blob would be inside the source" \
	"$MKFS" --quiet --chunksize=4096 --blobdev="$src/b" "$out/i" "$src"
expect_failure "the blob in a missing directory" "cannot create the blob" \
	"$MKFS" --quiet --chunksize=4096 --blobdev="$out/none/b" "$out/i" "$src"
mkdir "$WORK/unreadable"
cp "$src/dup-0" "$WORK/unreadable/f"
chmod 000 "$WORK/unreadable/f"
expect_failure "an unreadable source file" "f" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$MKFS" --quiet --chunksize=4096 --blobdev=/tmp/"$test_name".$$.b \
	/tmp/"$test_name".$$.i "$WORK/unreadable"
if [ -z "$(ls -A "$out")" ] && [ ! -e "$src/b" ] &&
	[ ! -e /tmp/"$test_name".$$.b ] && [ ! -e /tmp/"$test_name".$$.i ]; then
	pass "no image and no blob left behind"
else
	fail "left behind: $(ls -A "$out") $(ls /tmp/"$test_name".$$.* 2>/dev/null)"
fi
rm -f /tmp/"$test_name".$$.*

# ---- erofs-utils 1.9.4 ----
if [ ! -x "$REF/fsck.erofs" ] || [ ! -x "$REF/mkfs.erofs" ]; then
	echo "note: no erofs-utils 1.9.4 at $REF: not cross-checked"
	finish
fi
# From any blob image, its own included, its fsck extracts a file whose last
# chunk is a hole cut short at its last data (a file of holes empty): such
# files are left out of the comparison, and the xattrs second-reader.sh
# says it drops.
cp -a "$src" "$WORK/src-eu"
python3 - "$WORK/src-eu" <<'EOF'
import os, sys
for top, dirs, files in os.walk(sys.argv[1]):
	for name in files:
		path = os.path.join(top, name)
		if os.path.islink(path) or not os.path.isfile(path) or not os.path.getsize(path):
			continue
		with open(path, 'rb') as f:
			f.seek((os.path.getsize(path) - 1) // 4096 * 4096)
			if not f.read().strip(b'\0'):
				os.unlink(path)
EOF
"$MKFS" --quiet --chunksize=4096 --blobdev="$WORK/eu-in.blob" "$WORK/eu-in.erofs" \
	"$WORK/src-eu"
reader2_extract "erofs-utils reads ours" "$WORK/eu-in.erofs" "$WORK/src-eu" \
	--device="$WORK/eu-in.blob"
"$REF/mkfs.erofs" --quiet --chunksize=4096 --blobdev="$WORK/ref.blob" "$WORK/ref.erofs" \
	"$src" >/dev/null 2>&1
ours_extract "ours reads erofs-utils'" "$WORK/ref.erofs" "$src" --device="$WORK/ref.blob"
# dump.erofs --device prints erofs-utils' dump.erofs lines (our added
# 'extra devices' line of -s aside), for its image and ours
if [ -x "$REF/dump.erofs" ]; then
	for pair in "$img $blob" "$WORK/ref.erofs $WORK/ref.blob"; do
		# shellcheck disable=SC2086 # the image and its blob
		set -- $pair
		for args in "-s" "-e --path=/dup-0" "--path=/dup-1 -e"; do
			# shellcheck disable=SC2086 # option lists are words
			"$REF/dump.erofs" --device="$2" $args "$1" >"$WORK/ref.out" 2>&1 || true
			# shellcheck disable=SC2086
			"$DUMP" --device="$2" $args "$1" 2>&1 | grep -v '^Filesystem extra devices:' \
				>"$WORK/ours.out" || true
			if diff -u "$WORK/ref.out" "$WORK/ours.out" >"$WORK/dump.diff"; then
				pass "dump.erofs --device $args $(basename "$1"): erofs-utils' lines"
			else
				fail "dump.erofs --device $args $(basename "$1"): $(sed -n 4,7p "$WORK/dump.diff")"
			fi
		done
	done
fi
echo "figures: ours: image $(stat -c %s "$img"), blob $blob_size bytes;" \
	"erofs-utils 1.9.4: image $(stat -c %s "$WORK/ref.erofs"), blob $(stat -c %s "$WORK/ref.blob") bytes"
finish
