# shellcheck shell=bash
# dump.erofs and erofsfuse on multi-device images (sourced by blobdev.sh
# and tar-index.sh, after lib.sh): --device in table order, --offset, and
# clear failures for a missing, short or surplus device.
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
FSOPS=${FSOPS:-$top_builddir/tools/erofs-fsops-manifest}
EROFSFUSE=${EROFSFUSE:-$top_builddir/fuse/erofsfuse}

# le FILE OFFSET WIDTH: an unsigned little-endian field
le() {
	od -An -tu"$3" -j "$2" -N "$3" --endian=little "$1" | tr -d ' '
}
# wr16 FILE OFFSET VALUE: writes a little-endian 16-bit field
# shellcheck disable=SC2059 # the format is the two bytes
wr16() { printf "$(printf '\\x%02x\\x%02x' $(($3 & 255)) $(($3 >> 8)))" |
	dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# nocsum IMAGE: clears the superblock's checksum flag, so that damage
# written after it is found by what it damages
nocsum() { wr16 "$1" $((1024 + 8)) $(($(le "$1" $((1024 + 8)) 2) & ~1)); }
# dev1_chunk_index IMAGE FROM DEVBLOCKS: the byte offset (from FROM on,
# 8-byte aligned) of the first chunk index naming device 1 at a block in
# (0, DEVBLOCKS); empty when there is none
dev1_chunk_index() {
	python3 - "$@" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
for at in range(int(sys.argv[2]), len(d) - 7, 8):
	advise, dev, blk = struct.unpack_from('<HHI', d, at)
	if advise == 0 and dev == 1 and 0 < blk < int(sys.argv[3]):
		print(at)
		break
EOF
}

# expect_exit LABEL RC PATTERN CMD...: CMD exits RC, its stderr matches PATTERN
expect_exit() {
	local label=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$@" >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$pattern" "$WORK/err.txt"; then
		pass "$label: exit $rc, $(grep -E -- "$pattern" "$WORK/err.txt" | head -1)"
	else
		fail "$label: exit $rc (wanted $want), stderr: $(head -2 "$WORK/err.txt")"
	fi
}

# rdtools_devices LABEL IMAGE TREE FILE DEVICE: IMAGE has one extra device,
# DEVICE; TREE is what it holds; FILE (a path in it, some of its data on
# the device) is read by dump.erofs --cat and shown by -e.
rdtools_devices() {
	local label=$1 img=$2 tree=$3 file=$4 dev=$5 rc
	local blksz devblocks

	# dump.erofs
	if "$DUMP" --device="$dev" --cat --path="/$file" "$img" 2>"$WORK/err.txt" |
		cmp -s - "$tree/$file"; then
		pass "$label: dump.erofs --device --cat /$file equals the source"
	else
		fail "$label: dump.erofs --device --cat /$file: $(head -1 "$WORK/err.txt")"
	fi
	if "$DUMP" --device="$dev" -e --path="/$file" "$img" >"$WORK/e.out" 2>"$WORK/err.txt" &&
		grep -qE '^ +[0-9]+: .* # device 1$' "$WORK/e.out"; then
		pass "$label: dump.erofs -e: extents on the device end with '# device 1'"
	else
		fail "$label: dump.erofs -e: $(head -1 "$WORK/err.txt") $(tail -2 "$WORK/e.out")"
	fi
	if "$DUMP" -S "$img" >/dev/null 2>"$WORK/err.txt"; then
		pass "$label: dump.erofs -S without --device (nothing on the device is read)"
	else
		fail "$label: dump.erofs -S without --device: $(head -1 "$WORK/err.txt")"
	fi
	expect_exit "$label: dump.erofs --cat without --device" 2 \
		"nid [0-9]+\): its data is on extra device 1 \(no tag, [0-9]+ blocks\), which was not given \(--device=PATH\)" \
		"$DUMP" --cat --path="/$file" "$img"
	expect_exit "$label: dump.erofs with two devices for one" 2 \
		"has 1 extra device: give it with --device=PATH \(2 given\)" \
		"$DUMP" --device="$dev" --device="$dev" --path=/ "$img"
	expect_exit "$label: dump.erofs -s with two devices for one" 2 "\(2 given\)" \
		"$DUMP" -s --device="$dev" --device="$dev" "$img"
	expect_exit "$label: dump.erofs with a missing device" 2 \
		"cannot open $WORK/no-such-device: No such file or directory" \
		"$DUMP" --device="$WORK/no-such-device" --path=/ "$img"
	blksz=$((1 << $(od -An -tu1 -j 1036 -N 1 "$img" | tr -d ' ')))
	devblocks=$(od -An -tu4 -j $(($(od -An -tu2 -j $((1024 + 0x58)) -N 2 --endian=little "$img" |
		tr -d ' ') * 128 + 64)) -N 4 --endian=little "$img" | tr -d ' ')
	head -c $(( (devblocks - 1) * blksz )) "$dev" >"$WORK/short.dev"
	expect_exit "$label: dump.erofs with a short device" 1 "device 1 is too short" \
		"$DUMP" --device="$WORK/short.dev" --path=/ "$img"

	# erofsfuse's operations, walked on the host
	if "$FSOPS" --device="$dev" "$img" >"$WORK/fsops.mf" 2>"$WORK/err.txt" &&
		"$MANIFEST" "$tree" | diff -q - "$WORK/fsops.mf" >/dev/null; then
		pass "$label: erofsfuse's operations with --device read the source tree"
	else
		fail "$label: erofsfuse's operations with --device: $(head -1 "$WORK/err.txt")"
	fi

	# the image 12345 bytes into a bigger file, the device beside it
	{ head -c 12345 /dev/urandom; cat "$img"; head -c 777 /dev/urandom; } >"$WORK/inside.bin"
	if "$DUMP" --offset=12345 --device="$dev" --cat --path="/$file" "$WORK/inside.bin" \
		2>"$WORK/err.txt" | cmp -s - "$tree/$file"; then
		pass "$label: dump.erofs --offset=12345 --device --cat /$file"
	else
		fail "$label: dump.erofs --offset=12345 --device: $(head -1 "$WORK/err.txt")"
	fi
	if "$FSOPS" --offset=12345 --device="$dev" "$WORK/inside.bin" >"$WORK/fsops.mf" \
		2>"$WORK/err.txt" && "$MANIFEST" "$tree" | diff -q - "$WORK/fsops.mf" >/dev/null; then
		pass "$label: erofsfuse's operations with --offset=12345 --device"
	else
		fail "$label: erofsfuse's operations with --offset=12345 --device: $(head -1 "$WORK/err.txt")"
	fi

	# erofsfuse's command line up to the mount (the mount point does not
	# exist: nothing is ever mounted on the host)
	if [ -x "$EROFSFUSE" ]; then
		expect_exit "$label: erofsfuse without --device" 1 \
			"has 1 extra device: give it with --device=PATH \(0 given\); missing: device 1 \(no tag, [0-9]+ blocks\)$" \
			"$EROFSFUSE" -f "$img" "$WORK/no-mnt"
		expect_exit "$label: erofsfuse with a short device" 1 "device 1 is too short" \
			"$EROFSFUSE" -f --device="$WORK/short.dev" "$img" "$WORK/no-mnt"
		expect_exit "$label: erofsfuse with two devices for one" 1 "\(2 given\)" \
			"$EROFSFUSE" -f --device="$dev" --device="$dev" "$img" "$WORK/no-mnt"
		rc=0
		"$EROFSFUSE" -f --offset=12345 --device="$dev" "$WORK/inside.bin" "$WORK/no-mnt" \
			>/dev/null 2>"$WORK/err.txt" || rc=$?
		if [ "$rc" -eq 1 ] && grep -q 'bad mount point' "$WORK/err.txt" &&
			! grep -qE 'device|superblock' "$WORK/err.txt"; then
			pass "$label: erofsfuse --offset=12345 --device: the image and device are accepted"
		else
			fail "$label: erofsfuse --offset --device: exit $rc: $(head -1 "$WORK/err.txt")"
		fi
	fi
	rm -f "$WORK/inside.bin" "$WORK/short.dev"
}
