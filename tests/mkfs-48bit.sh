#!/bin/bash
# mkfs.erofs -E48bit and -m (metadata compression): round trips of the test
# tree and of a tree whose nids pass 16 bits, with every compressor and
# layout option they combine with, each extracted by our fsck.erofs and
# compared with the source (full manifests, xattrs included), and checked
# and extracted by erofs-utils 1.9.4's fsck.erofs too where it is present
# (those checks are skipped without it); the superblock and inode fields
# the format fixes, byte for byte; --workers=1 and 2 give the same bytes;
# and --max-kernel refuses both below their releases.
#
# erofs-utils 1.9.4 reads the inline data (plain or compressed tails) and
# the chunk tables of an inode inside the metabox from the wrong place (its
# own -m images extract wrong contents too), so metabox images are
# extracted with -Enoinline_data and without ztailpacking or chunks; every
# form is checked by its fsck without extraction here, and mounted by
# Linux 7.x in the QEMU suite (qemu-tests/matrix, gen-metabox*).
. "$(dirname "$0")/lib.sh"
require_root

REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
have_ref=1
if [ ! -x "$REF/fsck.erofs" ]; then
	echo "note: no erofs-utils 1.9.4 fsck.erofs at $REF: its checks are skipped"
	have_ref=0
fi
UUID=0f0e0d0c-0b0a-0908-0706-050403020100

src=$WORK/src
bash "$GEN_TREE" "$src" >/dev/null
rm -f "$src/sizes/sparse-100m"	# 100 MB to extract per image, and nothing new to learn
"$MANIFEST" "$src" >"$WORK/src.manifest"
"$MANIFEST" --no-xattrs "$src" >"$WORK/src.noxattrs"

# little-endian field of FILE at OFFSET, WIDTH bytes, as a decimal number
le() { od -An -v -t "u$3" -j "$2" -N "$3" "$1" | tr -d ' \n'; }
# the nid our dump.erofs finds for PATH (its lines are erofs-utils')
ref_nid() { "$DUMP" --path="$2" "$1" | sed -n 's/^NID: *\([0-9]*\).*/\1/p'; }

# our_fsck LABEL IMAGE SOURCE_MANIFEST: our reader extracts it like the source
our_fsck() {
	local label=$1 img=$2
	rm -rf "$WORK/ours"
	if "$FSCK" --extract="$WORK/ours" "$img" >"$WORK/ours.log" 2>&1; then
		if "$MANIFEST" "$WORK/ours" | diff -u "$3" - >"$WORK/$label.ours.diff"; then
			pass "$label: our fsck.erofs extracts the source tree"
		else
			fail "$label: our fsck.erofs extracts a different tree:"
			head -10 "$WORK/$label.ours.diff" | cut -c1-200 >&2
		fi
	else
		fail "$label: our fsck.erofs: $(tail -2 "$WORK/ours.log")"
	fi
	rm -rf "$WORK/ours"
}

# ref_check LABEL IMAGE [extract]: erofs-utils' fsck finds nothing wrong and,
# with "extract", pulls out the source tree (it restores no xattrs)
ref_check() {
	local label=$1 img=$2
	if [ "$have_ref" = 0 ]; then
		echo "skip: $label: no erofs-utils 1.9.4"
		return
	fi
	if ! "$REF/fsck.erofs" "$img" >"$WORK/ref.log" 2>&1; then
		fail "$label: erofs-utils fsck.erofs: $(grep -m2 -E '<E>|error' "$WORK/ref.log")"
		return
	fi
	[ "${3:-}" = extract ] || { pass "$label: erofs-utils fsck.erofs finds no error"; return; }
	rm -rf "$WORK/ref"
	if ! "$REF/fsck.erofs" --extract="$WORK/ref" "$img" >"$WORK/ref.log" 2>&1; then
		fail "$label: erofs-utils extraction: $(grep -m2 -E '<E>|error' "$WORK/ref.log")"
	elif "$MANIFEST" --no-xattrs "$WORK/ref" | diff -u "$WORK/src.noxattrs" - \
			>"$WORK/$label.ref.diff"; then
		pass "$label: erofs-utils checks and extracts the source tree"
	else
		fail "$label: erofs-utils extracts a different tree:"
		head -10 "$WORK/$label.ref.diff" | cut -c1-200 >&2
	fi
	rm -rf "$WORK/ref"
}

# roundtrip LABEL OPTIONS...: build, then both readers
roundtrip() {
	local label=$1 img=$WORK/$1.img
	shift
	if ! "$MKFS" --quiet -U "$UUID" "$@" "$img" "$src" >"$WORK/mkfs.log" 2>&1; then
		fail "$label: mkfs.erofs $*: $(tail -2 "$WORK/mkfs.log")"
		return
	fi
	if [[ " $* " == *" -m"* ]]; then
		ref_check "$label" "$img"	# inline forms: checked, not extracted
		# nor chunk tables, which it also reads outside the metabox
		if [[ " $* " != *" --chunksize="* ]]; then
			"$MKFS" --quiet -U "$UUID" "${@/#-Eztailpacking/-Enoinline_data}" \
				-Enoinline_data "$img.noinline" "$src" >"$WORK/mkfs.log" 2>&1 ||
				fail "$label: mkfs -Enoinline_data failed"
			ref_check "$label-noinline" "$img.noinline" extract
			rm -f "$img.noinline"
		fi
	else
		ref_check "$label" "$img" extract
	fi
	our_fsck "$label" "$img" "$WORK/src.manifest"
	rm -f "$img"
}

roundtrip 48bit          -E48bit
roundtrip 48bit-lz4hc    -E48bit -zlz4hc -C65536 -Eztailpacking
roundtrip 48bit-lzma     -E48bit -zlzma -C65536
roundtrip 48bit-zstd     -E48bit -zzstd -C16384 -Efragments
roundtrip 48bit-frag     -E48bit -zlz4hc -Efragments,ztailpacking
roundtrip 48bit-dedupe   -E48bit -zlz4hc -C65536 -Ededupe
roundtrip 48bit-chunk    -E48bit --chunksize=16384
roundtrip 48bit-b1024    -E48bit -zlz4hc -b 1024 -C8192
roundtrip dot-omitted    -Edot-omitted -zlz4hc
roundtrip mbox-plain     -m4096
roundtrip mbox-lz4hc     -m4096 -zlz4hc -Eztailpacking
roundtrip mbox-lzma      -m65536 -zlzma -C65536 -Efragments
roundtrip mbox-zstd      -m16384:zstd -zlz4hc -C16384
roundtrip mbox-chunk     -m4096:lzma --chunksize=8192
roundtrip mbox-b1024     -m4096 -zlz4hc -b 1024 -C4096 -Ededupe

# --- the fields the format fixes ---
small=$WORK/small
mkdir -p "$small/d"
printf 'old\n' >"$small/old"
printf 'new\n' >"$small/new"
printf 'frac\n' >"$small/frac"
printf 'ancient\n' >"$small/ancient"
touch -d @1600000000 "$small/old"
touch -d @100000000 "$small/ancient"
touch -d @1700000000 "$small/new" "$small/d" "$small"
touch -d @1700000000.5 "$small/frac"
img=$WORK/fields.img
"$MKFS" --quiet -E48bit -U "$UUID" "$img" "$small" >/dev/null 2>&1 || fail "fields: mkfs failed"
sb=1024
incompat=$(le "$img" $((sb + 0x50)) 4)
[ $((incompat & 0x80)) -ne 0 ] && pass "fields: INCOMPAT_48BIT set" || fail "fields: incompat $incompat"
# the mkfs time (the tree's most common mtime) is below 2^32: epoch 0, delta = it
if [ "$(le "$img" $((sb + 0x18)) 8)" = 0 ] && [ "$(le "$img" $((sb + 0x6C)) 4)" = 1700000000 ] &&
   [ "$(le "$img" $((sb + 0x20)) 4)" = 0 ] && [ "$(le "$img" $((sb + 0x70)) 8)" = 0 ]; then
	pass "fields: epoch 0, build time delta 1700000000, fixed_nsec 0, rootnid_8b 0"
else
	fail "fields: superblock epoch/delta/nsec/rootnid_8b:" \
	     "$(le "$img" $((sb + 0x18)) 8) $(le "$img" $((sb + 0x6C)) 4)" \
	     "$(le "$img" $((sb + 0x20)) 4) $(le "$img" $((sb + 0x70)) 8)"
fi
# compact inodes with their own seconds: i_mtime = mtime - epoch at 0x0C,
# i_nb the nlink (NLINK_1 is for addresses past 32 bits only, as erofs-utils)
for f in old:1600000000 new:1700000000; do
	off=$(($(ref_nid "$img" "/${f%%:*}") * 32))
	fmt=$(le "$img" "$off" 2)
	if [ $((fmt & 0x11)) -eq 0 ] && [ "$(le "$img" $((off + 12)) 4)" = "${f#*:}" ] &&
	   [ "$(le "$img" $((off + 6)) 2)" = 1 ]; then
		pass "fields: /${f%%:*} compact, i_mtime ${f#*:}, nlink 1 without NLINK_1"
	else
		fail "fields: /${f%%:*}: i_format $fmt, i_mtime $(le "$img" $((off + 12)) 4)"
	fi
done
# other nanoseconds than the superblock's: extended, nothing lost; its
# i_nb holds the high half of "no block" (0xFFFF), as erofs-utils writes it
off=$(($(ref_nid "$img" /frac) * 32))
if [ $(($(le "$img" "$off" 2) & 1)) -eq 1 ] && [ "$(le "$img" $((off + 0x28)) 4)" = 500000000 ] &&
   [ "$(le "$img" $((off + 6)) 2)" = 65535 ]; then
	pass "fields: /frac extended with its nanoseconds, i_nb 0xFFFF"
else
	fail "fields: /frac: i_format $(le "$img" "$off" 2), nsec $(le "$img" $((off + 0x28)) 4)"
fi
# a mkfs time past 2^32 - 1: the epoch moves up, a file older than it goes
# extended (one within 2^32 - 1 seconds of it stays compact)
"$MKFS" --quiet -E48bit --mkfs-time=5000000000 -U "$UUID" "$img" "$small" >/dev/null 2>&1
epoch=$(le "$img" $((sb + 0x18)) 8)
if [ "$epoch" = $((5000000000 - 4294967295)) ] && [ "$(le "$img" $((sb + 0x6C)) 4)" = 4294967295 ] &&
   [ $(($(le "$img" $(($(ref_nid "$img" /ancient) * 32)) 2) & 1)) -eq 1 ] &&
   [ "$(le "$img" $(($(ref_nid "$img" /old) * 32 + 12)) 4)" = $((1600000000 - epoch)) ]; then
	pass "fields: --mkfs-time=5000000000: epoch $epoch, delta 2^32-1, /ancient extended"
else
	fail "fields: --mkfs-time=5000000000: epoch $epoch, delta $(le "$img" $((sb + 0x6C)) 4)"
fi
ref_check fields-late "$img"
# metabox: sb_extslots 1, INCOMPAT 0x180, the root at nid 0 of the metabox
# (bit 63, in rootnid_8b; the 16-bit field is blocks_hi), metabox_nid at
# 0x80 naming a compact regular inode whose size is whole blocks
"$MKFS" --quiet -m4096 -zlz4hc -U "$UUID" "$img" "$small" >/dev/null 2>&1
mb=$(le "$img" $((sb + 0x80)) 8)
root8=$(od -An -v -t x8 -j $((sb + 0x70)) -N 8 "$img" | tr -d ' \n')
if [ "$(le "$img" $((sb + 0x0D)) 1)" = 1 ] && [ $(($(le "$img" $((sb + 0x50)) 4) & 0x180)) = $((0x180)) ] &&
   [ "$root8" = 8000000000000000 ] && [ "$(le "$img" $((sb + 0x0E)) 2)" = 0 ] &&
   [ $(($(le "$img" $((mb * 32 + 4)) 2) & 0170000)) = $((0100000)) ] &&
   [ $(($(le "$img" $((mb * 32 + 8)) 4) % 4096)) = 0 ] && [ $(($(le "$img" $((mb * 32)) 2) & 1)) = 0 ]; then
	pass "fields: metabox superblock (extslots 1, root 1<<63, metabox nid $mb)"
else
	fail "fields: metabox superblock: extslots $(le "$img" $((sb + 0x0D)) 1), root $root8, metabox nid $mb"
fi
ref_check fields-metabox "$img"
# dot-omitted: the root has no "." (12 + 1 bytes less) and says so in i_format
"$MKFS" --quiet -E48bit -U "$UUID" "$img" "$small" >/dev/null 2>&1
with_dot=$(le "$img" $(($(le "$img" $((sb + 0x0E)) 2) * 32 + 8)) 4)
"$MKFS" --quiet -Edot-omitted -U "$UUID" "$img" "$small" >/dev/null 2>&1
root=$(($(le "$img" $((sb + 0x0E)) 2) * 32))
if [ $(($(le "$img" $((sb + 0x50)) 4) & 0x80)) -ne 0 ] && [ $(($(le "$img" "$root" 2) & 0x10)) -ne 0 ] &&
   [ "$(le "$img" $((root + 8)) 4)" = $((with_dot - 13)) ]; then
	pass "fields: dot-omitted: 48bit, DOT_OMITTED set, root dir 13 bytes shorter"
else
	fail "fields: dot-omitted: i_format $(le "$img" "$root" 2), size $(le "$img" $((root + 8)) 4) vs $with_dot"
fi
ref_check fields-dot-omitted "$img"

# --- nids past 16 bits: 700 files with 3000-byte inline tails (2.1 MB of
# records), in the area (48bit) and in the metabox ---
many=$WORK/many
mkdir -p "$many/files"
head -c 3000 /dev/zero | tr '\0' 'x' >"$many/files/0000"
copies_of() { # FILE LAST: copies FILE to 0001 .. LAST beside it, one cp
	# each in order (made by one tee, the files are laid out in another
	# order and /files/0699's nid stays under 16 bits); printf -v, as a
	# $(printf) fork each cost seconds in all on slow hosts
	local dir=${1%/*} i n
	for ((i = 1; i <= $2; i++)); do
		printf -v n '%04d' "$i"
		cp "$1" "$dir/$n"
	done
}
copies_of "$many/files/0000" 699
"$MANIFEST" --no-xattrs "$many" >"$WORK/many.noxattrs"
"$MANIFEST" "$many" >"$WORK/many.manifest"
for opts in "-E48bit" "-m4096 -zlz4hc" "-m65536 -zlzma -C65536"; do
	label="many ${opts// /}"
	# shellcheck disable=SC2086 # options are words
	"$MKFS" --quiet -U "$UUID" $opts "$img" "$many" >/dev/null 2>&1 || fail "$label: mkfs failed"
	nid=$(ref_nid "$img" /files/0699)
	if [ -n "$nid" ] && [ $(( (nid & 0x7FFFFFFFFFFFFFFF) > 0xFFFF )) = 1 ]; then
		pass "$label: /files/0699 has nid $nid"
	else
		fail "$label: /files/0699 nid '$nid' not past 16 bits"
	fi
	if [[ $opts == -E48bit ]] && [ "$have_ref" = 1 ]; then
		rm -rf "$WORK/ref"
		"$REF/fsck.erofs" --extract="$WORK/ref" "$img" >/dev/null 2>&1 &&
			"$MANIFEST" --no-xattrs "$WORK/ref" | diff -q "$WORK/many.noxattrs" - >/dev/null &&
			pass "$label: erofs-utils extracts it" || fail "$label: erofs-utils extraction differs"
		rm -rf "$WORK/ref"
	else
		ref_check "$label" "$img"
	fi
	our_fsck "$label" "$img" "$WORK/many.manifest"
done

# --- a metabox whose one pcluster would decode past the 2047 lclusters an
# index delta reaches (512-byte blocks, 1 MiB pclusters, records that
# compress 20x): its extents must stop short; and the superblock's inode
# count includes the metabox inode, as erofs-utils counts it ---
dense=$WORK/dense
mkdir -p "$dense"
head -c 400 /dev/zero | tr '\0' 'x' >"$dense/0000"
copies_of "$dense/0000" 2999
"$MANIFEST" "$dense" >"$WORK/dense.manifest"
if "$MKFS" --quiet -U "$UUID" -b 512 -C1048576 -m1048576 -zlz4hc "$img" "$dense" >"$WORK/mkfs.log" 2>&1; then
	our_fsck "metabox-dense" "$img" "$WORK/dense.manifest"
	if "$DUMP" -s "$img" >"$WORK/dump.log" 2>&1 && ! grep -q 'warning' "$WORK/dump.log" &&
	   [ "$(le "$img" $((sb + 0x10)) 8)" = 3002 ]; then
		pass "metabox-dense: inode count 3002 (3000 files, the root, the metabox inode)"
	else
		fail "metabox-dense: inode count $(le "$img" $((sb + 0x10)) 8): $(grep -m1 warning "$WORK/dump.log")"
	fi
else
	fail "metabox-dense: mkfs: $(tail -2 "$WORK/mkfs.log")"
fi

# --- the same bytes for every --workers ---
for opts in "-E48bit -zlz4hc -C65536" "-m16384 -zlzma -C65536 -Efragments"; do
	# shellcheck disable=SC2086 # options are words
	"$MKFS" --quiet -U "$UUID" $opts --workers=1 "$WORK/w1.img" "$src" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$MKFS" --quiet -U "$UUID" $opts --workers=2 "$WORK/w2.img" "$src" >/dev/null 2>&1
	if [ -s "$WORK/w1.img" ] && cmp -s "$WORK/w1.img" "$WORK/w2.img"; then
		pass "$opts: --workers=1 and 2 give the same bytes"
	else
		fail "$opts: --workers=1 and 2 differ"
	fi
	rm -f "$WORK/w1.img" "$WORK/w2.img"
done

# --- kernel targeting: refused before anything is written ---
expect_failure "max-kernel 6.12 -E48bit" '-E48bit: 48-bit layout needs Linux 6.15' \
	"$MKFS" --max-kernel=6.12 -E48bit "$WORK/no.img" "$small"
expect_failure "max-kernel 6.15 -m" '-m: metadata compression needs Linux 6.17' \
	"$MKFS" --max-kernel=6.15 -m4096 "$WORK/no.img" "$small"
[ ! -e "$WORK/no.img" ] && pass "max-kernel: no image written" || fail "max-kernel: an image was written"
if "$MKFS" --max-kernel=6.15 -E48bit "$WORK/ok.img" "$small" >"$WORK/ok.log" 2>&1 &&
   grep -q 'needs Linux 6.15 (48-bit layout)' "$WORK/ok.log"; then
	pass "max-kernel 6.15 -E48bit: built, summary names 6.15"
else
	fail "max-kernel 6.15 -E48bit: $(tail -2 "$WORK/ok.log")"
fi
expect_failure "-m bad size" 'metabox pcluster size' "$MKFS" -m 1000x "$WORK/no.img" "$small"
expect_failure "-m not a block multiple" 'multiple of the block size' \
	"$MKFS" -m 6000 "$WORK/no.img" "$small"
expect_failure "-m index past -z" 'algorithm index 1' \
	"$MKFS" -zlz4hc -m 4096:1 "$WORK/no.img" "$small"
finish
