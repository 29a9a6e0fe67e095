#!/bin/bash
# --max-extent-bytes=-N with -E48bit (erofs-utils 1.9.4): every extent takes
# exactly N input bytes (counted from the file's start; a segment's end cuts
# one short), compressed whole with no search for the input that fills a
# pcluster, or stored raw when that saves nothing; the pclusters of a file
# follow one another byte after byte (unaligned), which only the encoded
# extents of -E48bit address.  Checked for zstd, lzma and deflate: the
# extents dump -e lists (lengths of N, unaligned byte addresses), round trips
# through our fsck and erofs-utils' (when present), --workers, the kernel
# summary (6.15), and the combinations refused by name.  Mounted by Linux 7.x
# in the QEMU suite (qemu-tests/matrix, *-fixed-*).
. "$(dirname "$0")/fsck-common.sh"
[ -x "$OUR_MKFS" ] || skip "mkfs.erofs not built"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}

SRC=$WORK/src
mkdir -p "$SRC/d"
seq 1 400000 >"$SRC/seq"				# 2.6 MiB of text
head -c 1500000 /dev/urandom >"$SRC/d/rand"		# raw extents
{ seq 1 100000; head -c 300000 /dev/urandom; seq 1 100000; } >"$SRC/d/mixed"
cp "$SRC/seq" "$SRC/d/seq.copy"
printf 'short\n' >"$SRC/d/short"
: >"$SRC/empty"
N=262144

# extents PATH IMAGE: "LOFS LLEN PA PLEN" lines from our dump -e
extents() {
	"$DUMP" -e --path="$1" "$2" | sed -nE 's/^ *[0-9]+: *([0-9]+)\.\. *([0-9]+) \| *([0-9]+) : *([0-9]+)\.\. *([0-9]+) \| *([0-9]+).*/\1 \3 \4 \6/p'
}

for alg in zstd lzma deflate; do
	IMG=$WORK/$alg.img
	mkfs_or_fail "$alg" "$IMG" "$SRC" -T0 -Uclear -E48bit --max-extent-bytes=-$N -C131072 \
		-z$alg || continue
	"$FSCK" --extract="$WORK/$alg.out" "$IMG" >"$WORK/$alg.fsck" 2>&1 &&
		diff -r "$SRC" "$WORK/$alg.out" >/dev/null &&
		pass "$alg: our fsck checks it, the extracted tree is the source" ||
		fail "$alg: fsck/extract: $(head -2 "$WORK/$alg.fsck")"
	ext=$(extents /seq "$IMG")
	count=$(wc -l <<<"$ext")
	bad=$(awk -v n=$N -v size=$(stat -c %s "$SRC/seq") \
		'$1 % n != 0 || ($1 + $2 != size && $2 != n) || $4 >= $2 { print }' <<<"$ext")
	unaligned=$(awk '$3 % 4096 != 0' <<<"$ext" | wc -l)
	[ "$count" -eq 11 ] && [ -z "$bad" ] && [ "$unaligned" -gt 0 ] &&
		pass "$alg: /seq in 11 extents of $N input bytes, compressed, $unaligned at unaligned addresses" ||
		fail "$alg: /seq extents: $count, bad: $bad, unaligned $unaligned"
	# each pcluster starts where the one before ends: nothing between them
	gaps=$(awk 'NR > 1 && $3 != end { print } { end = $3 + $4 }' <<<"$ext")
	[ -z "$gaps" ] && pass "$alg: /seq's pclusters packed back to back" ||
		fail "$alg: gaps before: $gaps"
	raw=$(extents /d/rand "$IMG" | awk '$2 != $4' | wc -l)
	[ "$raw" -eq 0 ] && pass "$alg: random data stored raw (extents as long as their bytes)" ||
		fail "$alg: /d/rand has $raw extents of other lengths"
	if [ -x "$REF/fsck.erofs" ]; then
		"$REF/fsck.erofs" --extract="$WORK/$alg.ref" "$IMG" >"$WORK/$alg.ref.log" 2>&1 &&
			diff -r "$SRC" "$WORK/$alg.ref" >/dev/null &&
			pass "$alg: erofs-utils 1.9.4 fsck checks and extracts it" ||
			fail "$alg: erofs-utils fsck: $(tail -1 "$WORK/$alg.ref.log")"
	fi
done

IMG=$WORK/zstd.img
"$OUR_MKFS" -T0 -Uclear -E48bit --max-extent-bytes=-$N -C131072 -zzstd "$WORK/say.img" "$SRC" \
	>"$WORK/say.log" 2>&1
grep -q "Linux 6.15" "$WORK/say.log" && pass "the summary says Linux 6.15 (48-bit layout)" ||
	fail "summary: $(grep -i linux "$WORK/say.log")"

for w in 1 3; do
	mkfs_or_fail "w$w" "$WORK/w$w.img" "$SRC" -T0 -Uclear -E48bit --max-extent-bytes=-100000 \
		-C65536 -zlzma --workers=$w || finish
done
cmp -s "$WORK/w1.img" "$WORK/w3.img" && pass "the same bytes for --workers=1 and 3 (N not a power of 2)" ||
	fail "--workers changes the image"
"$FSCK" "$WORK/w1.img" >/dev/null 2>&1 && pass "N=100000: fsck finds no error" || fail "N=100000: fsck"

# refused by name: exit 1, no image
for args in "-zzstd" "-E48bit" "-E48bit -zzstd -Eztailpacking" "-E48bit -zzstd -Efragments" \
	"-E48bit -zzstd -Ededupe"; do
	refused_by_name --max-extent-bytes=- $args --max-extent-bytes=-$N
done
refused_by_name --max-extent-bytes=- -E48bit -zzstd --max-extent-bytes=-1000
finish
