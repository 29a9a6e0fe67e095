#!/bin/bash
# fsck.erofs and dump.erofs on damaged 48-bit and metabox images: two small
# images of erofs-utils 1.9.4 kept in tests/images (so that no anchor is
# needed), made from a tree of text, random and mixed files, a symlink and
# an xattr, with -T1700000000 -U 6c0a4d1e-2c6e-4c1e-9d6a-4b1c2d3e4f50 and
#   r48-extents.img: -E48bit -zlz4hc (4 and 16-byte extent records)
#   r48-metabox.img: -zlz4hc -Efragments,ztailpacking -m4096
# Each case edits one structure (an extent record, the map header, the
# superblock's root or metabox nid, the metabox inode or its data) and
# expects exit status 1 from both tools with a message naming the nid and
# the reason; then random byte flips and truncations: never a crash or a
# hang, and under valgrind (when installed) no memory error.
. "$(dirname "$0")/fsck-common.sh"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
[ -x "$DUMP" ] || { echo "$test_name: $DUMP not built" >&2; exit 99; }

EXT=$WORK/ext.img
MBOX=$WORK/mbox.img
gzip -dc "$top_srcdir/tests/images/r48-extents.img.gz" >"$EXT"
gzip -dc "$top_srcdir/tests/images/r48-metabox.img.gz" >"$MBOX"
for i in "$EXT" "$MBOX"; do
	"$FSCK" "$i" >"$WORK/good.log" 2>&1 || { fail "$(basename "$i") is not clean: $(head -2 "$WORK/good.log")"; finish; }
done

# where things are (checked, so that a changed image cannot make a case pass blind)
BIG_NID=93	# /e/big: 16-byte records, 4 of them
TEXT_NID=84	# /d/mix: 4-byte records after a base address
IMG=$EXT
[ "$("$DUMP" --path=/e/big "$EXT" | sed -n 's/^NID: *\([0-9]*\).*/\1/p')" = "$BIG_NID" ] &&
	[ "$("$DUMP" --path=/d/mix "$EXT" | sed -n 's/^NID: *\([0-9]*\).*/\1/p')" = "$TEXT_NID" ] &&
	[ "$(rd $(($(ino_off $BIG_NID) + 36)) 2)" = 5 ] && [ "$(rd $(($(ino_off $TEXT_NID) + 36)) 2)" = 1 ] ||
	{ fail "r48-extents.img: /e/big and /d/mix are not where this test expects them"; finish; }
BIG_HDR=$(($(ino_off $BIG_NID) + 32))
BIG_REC=$((BIG_HDR + 16))		# round_up(header end, 16)
TEXT_HDR=$(($(ino_off $TEXT_NID) + 32))
TEXT_BASE=$((TEXT_HDR + 8))
TEXT_REC=$((TEXT_BASE + 8))
MBOX_NID=37
MBOX_ILOC=$((MBOX_NID * 32))		# meta_blkaddr 0

# corrupt LABEL IMAGE EDIT DUMP_ARGS WORDS...: a fresh copy edited; fsck.erofs and
# dump.erofs DUMP_ARGS both exit 1 naming every word
corrupt() {
	local label=$1 base=$2 edit=$3 args=$4 rc
	shift 4
	IMG=$WORK/case.img
	cp "$base" "$IMG"
	sb_nocsum
	eval "$edit"
	rc=0
	timeout 30 "$FSCK" "$IMG" >"$WORK/case.log" 2>&1 || rc=$?
	fsck_failed_as "$label" "$label: fsck.erofs: $(grep -m1 error "$WORK/case.log" | cut -c1-150)" \
		"$rc" "$WORK/case.log" "$@"
	rc=0
	# shellcheck disable=SC2086
	timeout 30 "$DUMP" $args "$IMG" >"$WORK/case.dump" 2>&1 || rc=$?
	fsck_failed_as "$label" "$label: dump.erofs $args: exit 1" "$rc" "$WORK/case.dump" "$@"
}

corrupt record-lstart-falls "$EXT" "wr $((BIG_REC + 2 * 16 + 12)) 4 1" "--path=/e/big -e" \
	"nid $BIG_NID" "extent record 2: lstart 1 not after"
corrupt record-lstart-not-0 "$EXT" "wr $((BIG_REC + 12)) 4 5" "--path=/e/big -e" \
	"nid $BIG_NID" "extent record 0 starts at byte 5, not 0"
corrupt record-plen-reserved "$EXT" "wr $((BIG_REC + 2)) 1 \$((\$(rd $((BIG_REC + 2)) 1) | 0x40))" \
	"--path=/e/big -e" "nid $BIG_NID" "reserved bits in plen"
corrupt record-algorithm "$EXT" "wr $((BIG_REC + 3)) 1 0x90" "--path=/e/big -e" \
	"nid $BIG_NID" "algorithm 8"
corrupt record-past-image "$EXT" "wr $((BIG_REC + 8)) 4 0x100" "--path=/e/big -e" \
	"nid $BIG_NID" "beyond the end of the image"
corrupt record-count "$EXT" "wr $BIG_HDR 4 0x7fffffff" "--path=/e/big" \
	"nid $BIG_NID" "extent table (2147483647 records of 16 bytes) beyond the end of the image"
corrupt record-base "$EXT" "wr $TEXT_BASE 8 \$((1 << 60))" "--path=/d/mix" \
	"nid $TEXT_NID" "extent base address 1152921504606846976 out of range"
corrupt record-lclusters "$EXT" "wr $((TEXT_HDR + 7)) 1 15" "--path=/d/mix" \
	"nid $TEXT_NID" "extent records of 2^27-byte lclusters"
corrupt record-4b-past-image "$EXT" "wr $TEXT_BASE 8 \$((1 << 40))" "--path=/d/mix -e" \
	"nid $TEXT_NID" "beyond the end of the image"
corrupt record-past-isize "$EXT" "wr $((BIG_REC + 3 * 16 + 12)) 4 0x7fffffff" "--path=/e/big" \
	"nid $BIG_NID" "extent record 3: lstart 2147483647 at or beyond i_size 79890"
corrupt unknown-incompat "$EXT" "wr 1104 4 \$((\$(rd 1104 4) | 0x200))" "-s -S" \
	"unsupported incompatible features: unknown bits 0x200"
# rootnid_8b set: the 16 bits at 0x0E are the block count's top, here 0
corrupt root-nid-8b "$EXT" "wr 1136 8 123456789; wr 1038 2 0" "--path=/" \
	"root nid 123456789 beyond the end"

corrupt metabox-in-itself "$MBOX" "wr 1152 8 \$((1 << 63 | MBOX_NID))" "--path=/" \
	"metabox nid 9223372036854775845 lies in the metabox itself"
corrupt metabox-is-packed "$MBOX" "wr 1152 8 \$(rd 1120 8)" "--path=/" \
	"metabox nid 55 is the packed inode"
corrupt metabox-nid-range "$MBOX" "wr 1152 8 999999" "--path=/" \
	"metabox inode (nid 999999)" "out of range"
corrupt metabox-not-file "$MBOX" "wr $((MBOX_ILOC + 4)) 2 \$((0040755))" "--path=/" \
	"metabox inode (nid 37)" "not a regular file"
corrupt metabox-no-slot "$MBOX" "wr 1037 1 0" "--path=/" "no extension slot for its nid"
corrupt metabox-root-range "$MBOX" "wr 1136 8 \$((1 << 63 | 5000))" "--path=/" \
	"nid 9223372036854780808 out of range (the metabox has 128 inode slots)"
corrupt metabox-feature-gone "$MBOX" "wr 1104 4 \$((\$(rd 1104 4) & ~0x100))" "--path=/" \
	"nid 9223372036854775808 is in the metabox (bit 63), but the image has no metabox"
corrupt metabox-data "$MBOX" "wr 1400 4 0xffffffff" "--path=/d/mix" \
	"metabox (nid 37)"

# random damage: fsck, then dump.erofs under every view
for base in "$EXT" "$MBOX"; do
	sweep_start 4848
	size=$(stat -c %s "$base")
	dcrash=0
	for i in $(seq 1 150); do
		IMG=$WORK/sweep.img
		cp "$base" "$IMG"
		damage_image "$i" "$size" 4096
		sweep_check "$i" 25 5 30
		for args in "-s" "-S" "--path=/e/big -e" "--path=/d --ls" "--path=/text -x" "--path=/d/mix --cat"; do
			# shellcheck disable=SC2086
			timeout 30 "$DUMP" $args "$IMG" >/dev/null 2>&1
			rc=$?
			[ "$rc" -le 1 ] || { dcrash=$((dcrash + 1)); cp "$IMG" "$WORK/dump-crash-$i.img"; }
		done
	done
	sweep_verdict
	[ "$dcrash" -eq 0 ] && pass "$(basename "$base"): dump.erofs survives the damage too" ||
		fail "$(basename "$base"): dump.erofs crashed or hung $dcrash times (images kept in $WORK)"
done
finish
