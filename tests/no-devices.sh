#!/bin/bash
# Metadata-only images without their extra devices (issue 26 item 3):
# fsck.erofs without --device names each missing slot and the options that
# help; fsck.erofs --no-devices checks everything but the data on the
# devices (superblock, inodes, directories, xattrs, every chunk's device
# and bounds against the device table) and counts the files whose data it
# did not read; with --extract=DIR it makes every entry but those files,
# each refused by name, and exits 1; dump.erofs lists everything and
# refuses --cat of data on a missing device (exit 2, nothing written).
# Images: --blobdev, --tar=i (ours; erofs-utils 1.9.4's when present) and
# containerd's tar appended to its index.
. "$(dirname "$0")/lib.sh"
require_root
. "$top_srcdir/tests/rdtools-common.sh"	# DUMP, le, wr16, nocsum, dev1_chunk_index
REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}

# expect_out LABEL RC PATTERN CMD...: CMD exits RC and its output (both
# streams: fsck's counts are on stdout) matches the extended regex PATTERN
expect_out() {
	local label=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$@" >"$WORK/out.txt" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$pattern" "$WORK/out.txt"; then
		pass "$label: exit $rc, $(grep -E -- "$pattern" "$WORK/out.txt" | head -1)"
	else
		fail "$label: exit $rc (wanted $want, /$pattern/): $(head -3 "$WORK/out.txt")"
	fi
}

# ---- a tree whose data is known: 3 files with data (75001 bytes), one
# of them with a second name, an empty file, a symlink, a fifo, xattrs ----
src=$WORK/src
mkdir -p "$src/d/e" "$src/empty-dir"
head -c 5000 /dev/urandom >"$src/a"
printf 'Z' >"$src/d/one"	# not random: a zero byte is a hole, on no device (1 run in 256 failed)
head -c 70000 /dev/urandom >"$src/d/e/big"
ln "$src/a" "$src/d/a-link"
: >"$src/d/empty"
ln -s ../a "$src/d/sym"
mkfifo "$src/fifo"
setfattr -n user.colour -v blue "$src/d/empty"
setfattr -n user.size -v large "$src/d/e/big"
touch -d '2001-02-03 04:05:06.5' "$src/d" "$src/d/e"
nfiles=3 nbytes=75001

# without_data TREE COPY: the tree --no-devices --extract makes of TREE's
# image, everything but the files with data (directory times kept)
without_data() {
	rm -rf "$2"
	cp -a "$1" "$2"
	rm "$2/a" "$2/d/a-link" "$2/d/one" "$2/d/e/big"
	(cd "$1" && find . -type d) | while read -r dir; do touch -h -r "$1/$dir" "$2/$dir"; done
}
expected=$WORK/expected
without_data "$src" "$expected"

img=$WORK/blob.erofs
blob=$WORK/blob.dev
"$MKFS" --quiet --chunksize=4096 --blobdev="$blob" "$img" "$src"
devblocks=$(( $(stat -c %s "$blob") / 4096 ))

# ---- without --device: the slot, the options ----
expect_out "fsck without --device" 2 \
	"blob.erofs: the image has 1 extra device: give it with --device=PATH \(0 given\); missing: device 1 \(no tag, $devblocks blocks\); or check all but their data with --no-devices$" \
	"$FSCK" "$img"

# ---- --no-devices: checked, the data counted, exit 0 ----
for w in 1 3; do
	expect_out "fsck --no-devices --workers=$w" 0 \
		"blob\.erofs: the data of $nfiles files \($nbytes bytes\) is on extra devices not given: not verified \(--no-devices\)$" \
		"$FSCK" --no-devices --workers=$w "$img"
	cp "$WORK/out.txt" "$WORK/w$w.txt"
	if grep -qx "$img: no errors found" "$WORK/out.txt"; then
		pass "--workers=$w: no errors found"
	else
		fail "--workers=$w: $(cat "$WORK/out.txt")"
	fi
done
if cmp -s "$WORK/w1.txt" "$WORK/w3.txt"; then
	pass "the same output for 1 and 3 workers"
else
	fail "1 and 3 workers differ: $(diff "$WORK/w1.txt" "$WORK/w3.txt")"
fi
expect_out "fsck --no-devices -p" 0 \
	"^  not verified: +$nfiles files, $nbytes bytes of data on 1 extra device not given \(--no-devices\)$" \
	"$FSCK" --no-devices -p "$img"
expect_out "fsck --no-devices --extract (no DIR)" 0 "not verified \(--no-devices\)" \
	"$FSCK" --no-devices --extract "$img"
expect_out "fsck --no-devices --path=/d/e" 0 \
	"the data of 1 file \(70000 bytes\) is on extra devices not given" \
	"$FSCK" --no-devices --path=/d/e "$img"
expect_out "fsck --no-devices on the file itself" 0 \
	"the data of 1 file \(1 bytes\)" "$FSCK" --no-devices --path=/d/one "$img"
expect_out "--device and --no-devices" 2 "--device and --no-devices exclude each other" \
	"$FSCK" --no-devices --device="$blob" "$img"
# with the device, nothing is left unverified (and the option is not needed)
expect_out "fsck --device" 0 "no errors found" "$FSCK" --device="$blob" "$img"
if grep -q "not verified" "$WORK/out.txt"; then
	fail "fsck --device still reports unverified data"
fi
# an image without devices: nothing to skip, nothing said
"$MKFS" --quiet "$WORK/plain.erofs" "$src"
expect_out "fsck --no-devices, an image without devices" 0 "no errors found" \
	"$FSCK" --no-devices "$WORK/plain.erofs"
if grep -q "not verified" "$WORK/out.txt"; then
	fail "an image without devices reports unverified data"
fi

# ---- --no-devices --extract=DIR: every other entry, each file refused ----
rm -rf "$WORK/x"
expect_out "fsck --no-devices --extract=DIR" 1 \
	"blob.erofs: no errors found, but 4 entries not extracted: their data is on extra devices not given \(--no-devices\)" \
	"$FSCK" --no-devices --extract="$WORK/x" "$img"
for p in /a /d/one /d/e/big; do
	if grep -qE "^fsck.erofs: error: $p \(nid [0-9]+\): not extracted: its data is on extra device 1 \(no tag, $devblocks blocks\), not given \(--no-devices\)$" \
		"$WORK/out.txt"; then
		pass "$p refused by name, with its device"
	else
		fail "$p not refused: $(cat "$WORK/out.txt")"
	fi
done
if grep -qE "^fsck.erofs: error: /d/a-link \(nid [0-9]+\): not extracted: its data is on an extra device" "$WORK/out.txt"; then
	pass "the hard link to a refused file is refused too"
else
	fail "the hard link: $(cat "$WORK/out.txt")"
fi
same_manifest "no-devices-extract" "$expected" "$WORK/x"
rm -rf "$WORK/x"
expect_out "--extract=DIR of one such file" 1 "1 entry not extracted: its data" \
	"$FSCK" --no-devices --path=/d/e/big --extract="$WORK/x" "$img"
if [ ! -e "$WORK/x" ]; then
	pass "the file alone: nothing created"
else
	fail "the file alone: $(ls -la "$WORK/x")"
fi
rm -rf "$WORK/x"

# ---- damage is still found without the device ----
# a chunk index naming device 1: sent past the end of the device (a device
# id beyond the table cannot be made here: as in Linux, ids are masked to
# the next power of two above the device count, so 2 of 1 is the image)
idx=$(dev1_chunk_index "$img" $((1024 + 128)) "$devblocks")
if [ -n "$idx" ]; then
	cp "$img" "$WORK/bad.erofs"
	nocsum "$WORK/bad.erofs"
	wr16 "$WORK/bad.erofs" $((idx + 4)) "$devblocks"
	expect_out "--no-devices: a chunk past the device's declared blocks" 1 \
		"beyond the end of device 1 \($devblocks blocks\)" \
		"$FSCK" --no-devices "$WORK/bad.erofs"
	expect_out "--no-devices --extract=DIR: the damaged file is an error, not a refusal" 1 \
		"1 error found" "$FSCK" --no-devices --extract="$WORK/x" "$WORK/bad.erofs"
	rm -rf "$WORK/x"
else
	fail "no chunk index naming device 1 found in the image"
fi
# the device table says the device is smaller than the chunks need
slot=$(( $(le "$img" $((1024 + 0x58)) 2) * 128 ))
cp "$img" "$WORK/bad.erofs"
nocsum "$WORK/bad.erofs"
wr16 "$WORK/bad.erofs" $((slot + 64)) 1
expect_out "--no-devices: a device table slot of 1 block" 1 "beyond the end of device 1 \(1 blocks\)" \
	"$FSCK" --no-devices "$WORK/bad.erofs"
# a directory entry's file type that does not match its inode
python3 - "$img" "$WORK/bad.erofs" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
# the root's six entries, sorted, then their names: . .. a d empty-dir fifo
names = d.find(b'...adempty-dirfifo')
base = names - 6 * 12	# each dirent: nid 8, nameoff 2, file type 1, reserved 1
assert names > 0 and int.from_bytes(d[base + 8:base + 10], 'little') == 72
for i in range(6):
	e = base + 12 * i
	off = int.from_bytes(d[e + 8:e + 10], 'little')
	if d[base + off:base + off + 4] == b'fifo':
		d[e + 10] = 1	# a regular file
open(sys.argv[2], 'wb').write(d)
EOF
nocsum "$WORK/bad.erofs"
expect_out "--no-devices: a wrong file type in a directory" 1 \
	"/fifo \(nid [0-9]+\): file type 1 in the directory entry does not match the inode" \
	"$FSCK" --no-devices "$WORK/bad.erofs"

# ---- a tag names the device ----
cp "$img" "$WORK/tag.erofs"
printf 'sha256:0123abcd' | dd of="$WORK/tag.erofs" bs=1 seek="$slot" conv=notrunc status=none
nocsum "$WORK/tag.erofs"
expect_out "fsck without --device names the tag" 2 \
	"missing: device 1 \(tag \"sha256:0123abcd\", $devblocks blocks\)" "$FSCK" "$WORK/tag.erofs"
expect_out "dump --cat names the tag" 2 \
	"its data is on extra device 1 \(tag \"sha256:0123abcd\", $devblocks blocks\), which was not given" \
	"$DUMP" --cat --path=/a "$WORK/tag.erofs"

# ---- dump.erofs: everything listed, --cat refused ----
rc=0
"$DUMP" --cat --path=/d/e/big "$img" >"$WORK/cat.out" 2>"$WORK/cat.err" || rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$WORK/cat.out" ] &&
	grep -qE "blob.erofs: --cat \(nid [0-9]+\): its data is on extra device 1 \(no tag, $devblocks blocks\), which was not given \(--device=PATH\)" "$WORK/cat.err"; then
	pass "dump --cat of a file on the device: exit 2, nothing written, $(cat "$WORK/cat.err")"
else
	fail "dump --cat: exit $rc, $(wc -c <"$WORK/cat.out") bytes out, $(cat "$WORK/cat.err")"
fi
expect_out "dump --no-devices --cat" 2 "which was not given" \
	"$DUMP" --no-devices --cat --path=/a "$img"
expect_out "dump --no-devices --cat of a symlink" 0 "^\.\./a$" \
	"$DUMP" --no-devices --cat --path=/d/sym "$img"
if "$DUMP" --no-devices --cat --path=/d/empty "$img" >"$WORK/cat.out" 2>&1 && [ ! -s "$WORK/cat.out" ]; then
	pass "dump --no-devices --cat of an empty file: nothing, exit 0"
else
	fail "dump --no-devices --cat of an empty file: $(head -2 "$WORK/cat.out")"
fi
expect_out "dump --no-devices --ls" 0 "^ +[0-9]+ +1  big$" \
	"$DUMP" --no-devices --ls --path=/d/e "$img"
expect_out "dump --no-devices -e" 0 "^ +0: .* # device 1$" \
	"$DUMP" --no-devices -e --path=/d/e/big "$img"
expect_out "dump --no-devices -x" 0 "user.size" \
	"$DUMP" --no-devices -x --path=/d/e/big "$img"
expect_out "dump --no-devices -S" 0 "^Filesystem regular file count:[[:space:]]+5$" \
	"$DUMP" --no-devices -S "$img"
expect_out "dump --no-devices --device" 2 "--device and --no-devices exclude each other" \
	"$DUMP" --no-devices --device="$blob" -s "$img"
if "$DUMP" --device="$blob" --cat --path=/d/e/big "$img" | cmp -s - "$src/d/e/big"; then
	pass "dump --device --cat still reads the device"
else
	fail "dump --device --cat"
fi

# ---- --tar=i: ours, erofs-utils', and the tar appended to its index ----
tar --format=pax --xattrs --xattrs-include='*' -C "$src" -cf "$WORK/src.tar" .
tar_index() { # LABEL IMAGE
	local label=$1 timg=$2
	expect_out "$label: fsck without --device" 2 \
		"missing: device 1 \(no tag, [0-9]+ blocks\); or check all but their data with --no-devices$" \
		"$FSCK" "$timg"
	expect_out "$label: fsck --no-devices" 0 \
		"the data of $nfiles files \($nbytes bytes\) is on extra devices not given: not verified" \
		"$FSCK" --no-devices "$timg"
	# what it extracts is the full extraction (--device) without those files
	rm -rf "$WORK/full"
	expect_out "$label: fsck --device --extract=DIR" 0 "no errors found" \
		"$FSCK" --device="$WORK/src.tar" --extract="$WORK/full" "$timg"
	without_data "$WORK/full" "$WORK/full-expected"
	rm -rf "$WORK/x"
	expect_out "$label: fsck --no-devices --extract=DIR" 1 "4 entries not extracted" \
		"$FSCK" --no-devices --extract="$WORK/x" "$timg"
	same_manifest "$label-no-devices-extract" "$WORK/full-expected" "$WORK/x"
	rm -rf "$WORK/x" "$WORK/full" "$WORK/full-expected"
}
"$MKFS" --quiet --tar=i "$WORK/ti.erofs" "$WORK/src.tar"
tar_index "tar=i" "$WORK/ti.erofs"
if [ -x "$REF/mkfs.erofs" ]; then
	# erofs-utils' index maps the tar into the image's block space (no chunks)
	"$REF/mkfs.erofs" --quiet --tar=i "$WORK/ti-eu.erofs" "$WORK/src.tar" >/dev/null 2>&1
	tar_index "erofs-utils tar=i" "$WORK/ti-eu.erofs"
else
	echo "note: no erofs-utils 1.9.4 at $REF: its --tar=i image not checked"
fi
# containerd's layer: the tar appended to the index is read without
# --device; --no-devices leaves it out all the same
cat "$WORK/ti.erofs" "$WORK/src.tar" >"$WORK/appended.erofs"
expect_out "appended tar: read without --device" 0 "no errors found" \
	"$FSCK" "$WORK/appended.erofs"
if ! grep -q "not verified" "$WORK/out.txt"; then
	pass "appended tar: every file's data verified"
else
	fail "appended tar: $(cat "$WORK/out.txt")"
fi
expect_out "appended tar: --no-devices does not read it" 0 \
	"the data of $nfiles files \($nbytes bytes\) is on extra devices not given: not verified" \
	"$FSCK" --no-devices "$WORK/appended.erofs"

finish
