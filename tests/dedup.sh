#!/bin/bash
# Whole-file dedup: identical files are stored once (plain and compressed),
# every copy reads back right through ours and a second, independent reader
# (tests/second-reader.sh), and
# near-duplicates (same size, other bytes) are not merged; -E fragments
# implies -E dedupe (not with -E ^dedupe or --block-list-file).
. "$(dirname "$0")/lib.sh"
require_root

src=$WORK/src
mkdir -p "$src/a/b" "$src/c"
head -c 3000000 /dev/urandom >"$src/original"
for i in $(seq 1 20); do
	cp "$src/original" "$src/$([ $((i % 2)) = 0 ] && echo a/b || echo c)/copy-$i"
done
head -c 8192 /dev/urandom >"$WORK/prefix"
for i in $(seq 1 20); do
	{ cat "$WORK/prefix"; printf 'tail %02d' "$i"; } >"$src/c/prefix-$i"
done
# same size as the original, one byte different: must stay separate
cp "$src/original" "$src/near"
printf 'X' | dd of="$src/near" bs=1 seek=1500000 conv=notrunc status=none
chmod 0600 "$src/a/b/copy-2"
setfattr -n user.note -v differs "$src/c/copy-3"

for config in "" "-z lz4hc" "-z lz4hc -E ztailpacking" "-z lz4 -C 65536 -E legacy-compress" \
	"--chunksize=4096" "--chunksize=65536" "-E dedupe" "-z lz4hc -E dedupe" \
	"-z lz4hc,12 -C 65536 -E dedupe,ztailpacking" "-z lz4 -E dedupe,legacy-compress" \
	"-z lz4hc -C 65536 -E dedupe,fragments,ztailpacking"; do
	label=${config// /}
	label=${label:-plain}
	img=$WORK/$label.img
	# shellcheck disable=SC2086
	"$MKFS" --quiet $config "$img" "$src"
	size=$(stat -c %s "$img")
	# the original and the near copy, plus metadata and 20 small files
	if [ "$size" -lt $((2 * 3000000 + 500000)) ]; then
		pass "$label: 22 files of 3 MB stored twice: $size bytes"
	else
		fail "$label: $size bytes: duplicates were not shared"
	fi
	# block-level dedup also shares the near copy's unchanged blocks and
	# the common prefixes (issue 5: under 4.5 MB)
	if [[ $config == *dedupe* || $config == --chunksize=4096 ]]; then
		if [ "$size" -lt $((3000000 + 500000)) ]; then
			pass "$label: the near copy shares all but its changed block: $size bytes"
		else
			fail "$label: $size bytes: the near copy was stored again"
		fi
	fi
	ours_extract "$label" "$img" "$src"
	# shellcheck disable=SC2086
	reader2_reads $config && reader2_extract "$label-reader2" "$img" "$src"
done
# -E dedupe: a run repeated inside a file and at a shifted offset in
# another file is stored once (content-defined cut points), and the image
# is the same for every worker count
mkdir "$WORK/shift"
for i in 1 2 3 4 5 6; do cat /usr/share/common-licenses/*; done >"$WORK/shift/text"
{ head -c 777 /dev/urandom; cat "$WORK/shift/text"; } >"$WORK/shift/text-shifted"
"$MKFS" --quiet -z lz4hc "$WORK/shift-plain.img" "$WORK/shift"
"$MKFS" --quiet -U clear -z lz4hc -E dedupe --workers=1 "$WORK/shift.img" "$WORK/shift"
"$MKFS" --quiet -U clear -z lz4hc -E dedupe --workers=3 "$WORK/shift3.img" "$WORK/shift"
plain=$(stat -c %s "$WORK/shift-plain.img") deduped=$(stat -c %s "$WORK/shift.img")
if [ $((deduped * 3)) -lt "$plain" ]; then
	pass "-E dedupe: repeated and shifted runs stored once: $deduped bytes, $plain without"
else
	fail "-E dedupe: $deduped bytes, $plain without: repeated runs were not shared"
fi
if cmp -s "$WORK/shift.img" "$WORK/shift3.img"; then
	pass "-E dedupe: --workers=1 and --workers=3 give the same image"
else
	fail "-E dedupe: the image depends on the worker count"
fi
ours_extract dedupe-shift "$WORK/shift.img" "$WORK/shift"
reader2_extract dedupe-shift-reader2 "$WORK/shift.img" "$WORK/shift"
# -E fragments implies -E dedupe, as erofs-utils 1.9 shares the pclusters
# of a file that begins as an earlier one did; -E ^dedupe and
# --block-list-file keep them apart
mkdir "$WORK/prefixed"
head -c 400000 /dev/urandom >"$WORK/prefixed/a"
{ cat "$WORK/prefixed/a"; head -c 10000 /dev/urandom; } >"$WORK/prefixed/b"
for label in fragments no-dedupe block-list; do
	case $label in
	fragments) config="-E fragments" ;;
	no-dedupe) config="-E fragments,^dedupe" ;;
	block-list) config="-E fragments --block-list-file=$WORK/bl.txt" ;;
	esac
	# shellcheck disable=SC2086
	"$MKFS" --quiet -z lz4hc $config "$WORK/prefixed.img" "$WORK/prefixed"
	size=$(stat -c %s "$WORK/prefixed.img")
	if [ $label = fragments ]; then
		[ "$size" -lt 600000 ] &&
			pass "$config: the file beginning as another shares its pclusters: $size bytes" ||
			fail "$config: $size bytes: the common 400 kB were stored twice"
	else
		[ "$size" -gt 800000 ] &&
			pass "$label ($config): no pclusters shared: $size bytes" ||
			fail "$label ($config): $size bytes: pclusters shared where they must not be"
	fi
	ours_extract "prefixed-$label" "$WORK/prefixed.img" "$WORK/prefixed"
done
# without -z, as in erofs-utils, -E dedupe shares identical blocks through
# chunks of one block: the same image as --chunksize of the block size
"$MKFS" --quiet -U clear -T 0 -E dedupe "$WORK/b.img" "$WORK/shift"
"$MKFS" --quiet -U clear -T 0 --chunksize=4096 "$WORK/c.img" "$WORK/shift"
"$MKFS" --quiet -U clear -T 0 -b 1024 -E dedupe "$WORK/b1k.img" "$WORK/shift"
"$MKFS" --quiet -U clear -T 0 -b 1024 --chunksize=1024 "$WORK/c1k.img" "$WORK/shift"
cmp -s "$WORK/b.img" "$WORK/c.img" && cmp -s "$WORK/b1k.img" "$WORK/c1k.img" &&
	pass "-E dedupe without -z is --chunksize of the block size (4096 and 1024)" ||
	fail "-E dedupe without -z differs from --chunksize of the block size"

# chunks: holes and zero chunks cost nothing, so sparse files stay sparse
# (runs of holes or of contiguous chunks merge into one larger chunk)
mkdir "$WORK/sparse"
truncate -s 1G "$WORK/sparse/hole-1g"
head -c 1000000 /dev/zero >"$WORK/sparse/zeros"
head -c 8000000 /dev/urandom >"$WORK/sparse/unique-8m"
"$MKFS" --quiet --chunksize=4096 "$WORK/sparse.img" "$WORK/sparse"
size=$(stat -c %s "$WORK/sparse.img")
if [ "$size" -lt $((8000000 + 65536)) ]; then
	pass "--chunksize: 1 GB of holes, 1 MB of zeros and 8 MB of data take $size bytes"
else
	fail "--chunksize: sparse image of $size bytes"
fi
truncate -s 256M "$WORK/sparse/data-inside"
printf 'data' | dd of="$WORK/sparse/data-inside" bs=1 seek=100000000 conv=notrunc status=none
"$MKFS" --quiet --chunksize=1048576 "$WORK/sparse.img" "$WORK/sparse"
rm -rf "$WORK/x"
"$FSCK" --extract="$WORK/x" "$WORK/sparse.img" >/dev/null &&
	cmp "$WORK/sparse/data-inside" "$WORK/x/data-inside" && cmp "$WORK/sparse/unique-8m" "$WORK/x/unique-8m" &&
	pass "--chunksize: sparse and merged files read back" || fail "--chunksize: sparse files differ"
expect_failure "chunks with compression" "without -z" "$MKFS" -z lz4 --chunksize=4096 "$WORK/b.img" "$src"
expect_failure "chunk size not a power of two" "not a power of two" "$MKFS" --chunksize=5000 "$WORK/b.img" "$src"
expect_failure "chunk size below the block size" "not between the block size" \
	"$MKFS" -b 4096 --chunksize=1024 "$WORK/b.img" "$src"
# two identical sparse files: the original's trailing hole is not written
# yet when the copy is compared with it, and must read back as zeros
mkdir "$WORK/sparse-dup"
head -c 8192 /dev/urandom >"$WORK/sparse-dup/a"
truncate -s 73728 "$WORK/sparse-dup/a"
cp --sparse=always "$WORK/sparse-dup/a" "$WORK/sparse-dup/b"
rm -rf "$WORK/x"
if "$MKFS" --quiet "$WORK/sparse-dup.img" "$WORK/sparse-dup" 2>"$WORK/sparse-dup.err" &&
	"$FSCK" --extract="$WORK/x" "$WORK/sparse-dup.img" >/dev/null &&
	cmp -s "$WORK/sparse-dup/b" "$WORK/x/b"; then
	pass "sparse duplicates: shared, and read back right"
else
	fail "sparse duplicates: $(cat "$WORK/sparse-dup.err")"
fi

finish
