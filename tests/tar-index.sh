#!/bin/bash
# --tar=i: index images whose file data stays in the tar.  Both forms: the
# tar as extra device 1 (512-byte blocks, chunk indexes naming it) and
# --tar=i,MAPFILE (the image's hole blocks, the map file saying which tar
# bytes fill them).  Each must give, through our fsck.erofs (--device, or
# the map applied), the tree the full image of the same tar (--tar=f)
# gives; compared with erofs-utils 1.9.4 both ways (skipped without
# ../shared/anchors); bad input fails clearly and leaves nothing behind.
. "$(dirname "$0")/lib.sh"
require_root
. "$top_srcdir/tests/rdtools-common.sh"

REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}
src=$WORK/src
mkdir -p "$src/d/e" "$src/empty"
for n in 0 1 511 512 513 4095 4096 4097 70000 1048576; do
	head -c "$n" /dev/urandom >"$src/f$n"
done
head -c 200000 /dev/zero >"$src/zeros"
cp "$src/f70000" "$src/d/e/copy"
ln "$src/f513" "$src/d/hard"
ln -s ../f1 "$src/d/rel"
mkfifo "$src/fifo"
mknod "$src/null" c 1 3
setfattr -n user.colour -v blue "$src/f1"
chown 1000:100 "$src/d/e/copy"
touch -d '2001-02-03 04:05:06.123456789' "$src/f4096"


for fmt in gnu pax; do
	tarf=$WORK/$fmt.tar
	extra=()
	[ "$fmt" = gnu ] || extra=(--xattrs --xattrs-include='*')
	tar --format="$fmt" "${extra[@]}" -C "$src" -cf "$tarf" .
	"$MKFS" --quiet -T 0 --tar=f "$WORK/$fmt-full.erofs" "$tarf"
	rm -rf "$WORK/full"
	"$FSCK" --extract="$WORK/full" "$WORK/$fmt-full.erofs" >/dev/null

	# ---- the tar as device 1 ----
	img=$WORK/$fmt-index.erofs
	"$MKFS" --quiet -T 0 --tar=i "$img" "$tarf"
	bits=$(le "$img" 1036 1)
	slot=$(($(le "$img" $((1024 + 0x58)) 2) * 128))
	if [ "$bits" = 9 ] && [ "$(le "$img" $((1024 + 0x56)) 2)" = 1 ] &&
		[ "$(le "$img" $((slot + 64)) 4)" = $(( ($(stat -c %s "$tarf") + 511) / 512 )) ] &&
		[ "$(stat -c %s "$img")" -lt $(($(stat -c %s "$tarf") / 20)) ]; then
		pass "$fmt: --tar=i: 512-byte blocks, the tar as device 1 (its blocks in the table), $(stat -c %s "$img") bytes of metadata"
	else
		fail "$fmt: --tar=i: block bits $bits, device table: $(od -An -tx1 -j "$slot" -N 72 "$img" | tail -1)"
	fi
	ours_extract "$fmt-index" "$img" "$WORK/full" --device="$tarf"
	rdtools_devices "$fmt-index" "$img" "$WORK/full" f70000 "$tarf"

	# ---- a map file ----
	img=$WORK/$fmt-map.erofs
	map=$WORK/$fmt.map
	"$MKFS" --quiet -T 0 --tar=i,"$map" "$img" "$tarf"
	cp "$img" "$WORK/applied.erofs"
	python3 - "$WORK/applied.erofs" "$map" "$tarf" <<'EOF'
import sys
img, mapf, tarf = sys.argv[1:]
bits = open(img, 'rb').read(1037)[1036]
with open(img, 'r+b') as out, open(tarf, 'rb') as tar, open(mapf) as m:
	for line in m:
		f = line.split()
		blk, n, off = int(f[0], 16), int(f[1], 16), int(f[2], 16)
		zeroed = int(f[3]) if len(f) > 3 else 0
		tar.seek(off)
		out.seek(blk << bits)
		out.write(tar.read((n << bits) - zeroed))
EOF
	# 11 files with data (a hard link is one of them)
	if [ "$(le "$img" 1036 1)" = 12 ] && [ $(($(le "$img" $((1024 + 0x50)) 4) & 8)) = 0 ] &&
		[ "$(wc -l <"$map")" = 11 ]; then
		pass "$fmt: --tar=i,MAPFILE: 4096-byte blocks, no device table, $(wc -l <"$map") files mapped"
	else
		fail "$fmt: --tar=i,MAPFILE: block bits $(le "$img" 1036 1), $(wc -l <"$map") lines"
	fi
	ours_extract "$fmt-mapfile" "$WORK/applied.erofs" "$WORK/full"
done

# ---- bad input: a clear message, no image, no map file left ----
out=$WORK/out
mkdir -p "$out"
tarf=$WORK/pax.tar
# from standard input, a pipe too (containerd's "--tar=i IMAGE < layer.tar"):
# offsets and the tar's size are the stream's, so the same bytes as from the file
for form in "" ",$WORK/map"; do
	"$MKFS" --quiet -T 0 -U clear "--tar=i$form" "$WORK/from-file.erofs" "$tarf"
	[ -z "$form" ] || mv "$WORK/map" "$WORK/map.file"
	cat "$tarf" | "$MKFS" --quiet -T 0 -U clear "--tar=i$form" "$WORK/from-pipe.erofs"
	if cmp -s "$WORK/from-file.erofs" "$WORK/from-pipe.erofs" &&
	   { [ -z "$form" ] || cmp -s "$WORK/map" "$WORK/map.file"; }; then
		pass "--tar=i${form:+,MAP} from a pipe: the same image${form:+ and map} as from the file"
	else
		fail "--tar=i${form:+,MAP} from a pipe differs from the file's"
	fi
done
expect_failure "--tar=i with -z" "keeps file data in the tar" \
	"$MKFS" --quiet --tar=i -z lz4 "$out/i" "$tarf"
expect_failure "--tar=i with --chunksize" "keeps file data in the tar" \
	"$MKFS" --quiet --tar=i --chunksize=4096 "$out/i" "$tarf"
expect_failure "--tar=i, with an empty map name" "map file name is empty" \
	"$MKFS" --quiet --tar=i, "$out/i" "$tarf"
expect_failure "--tar=x" "expected f .*, i .*, i,MAPFILE or headerball" \
	"$MKFS" --quiet --tar=x "$out/i" "$tarf"
expect_failure "--tar=i -b 1024" "512-byte blocks; -b 1024 needs --tar=i,MAPFILE" \
	"$MKFS" --quiet --tar=i -b 1024 "$out/i" "$tarf"
gzip -c "$tarf" >"$WORK/t.tar.gz"
expect_failure "a compressed tar" "gzip" \
	"$MKFS" --quiet --tar=i,"$out/m" "$out/i" "$WORK/t.tar.gz"
head -c 10000 "$tarf" >"$WORK/cut.tar"
expect_failure "a truncated tar" "cut.tar" \
	"$MKFS" --quiet --tar=i,"$out/m" "$out/i" "$WORK/cut.tar"
expect_failure "the map file in a missing folder" "cannot create the map file" \
	"$MKFS" --quiet --tar=i,"$out/none/m" "$out/i" "$tarf"
if [ -z "$(ls -A "$out")" ]; then
	pass "no image and no map file left behind"
else
	fail "left behind: $(ls -A "$out")"
fi
# the tar given to fsck too short for the device table
head -c $(($(stat -c %s "$tarf") - 1024)) "$tarf" >"$WORK/short.tar"
expect_failure "fsck with a short tar" "device 1 is too short" \
	"$FSCK" --device="$WORK/short.tar" "$WORK/pax-index.erofs"

# ---- erofs-utils 1.9.4 ----
if [ ! -x "$REF/mkfs.erofs" ] || [ ! -x "$REF/fsck.erofs" ]; then
	echo "note: no erofs-utils 1.9.4 at $REF: not cross-checked"
	finish
fi
rm -rf "$WORK/full" "$WORK/x"
"$FSCK" --extract="$WORK/full" "$WORK/pax-full.erofs" >/dev/null
reader2_extract "erofs-utils reads our --tar=i" "$WORK/pax-index.erofs" "$WORK/full" \
	--device="$tarf"
"$REF/mkfs.erofs" --quiet -T 0 --tar=i "$WORK/ref-index.erofs" "$tarf" >/dev/null 2>&1
ours_extract "ours reads erofs-utils' --tar=i" "$WORK/ref-index.erofs" "$WORK/full" \
	--device="$tarf"
"$REF/mkfs.erofs" --quiet -T 0 --tar=i,"$WORK/ref.map" "$WORK/ref-map.erofs" "$tarf" \
	>/dev/null 2>&1
# the same runs of the tar: block counts, offsets and zeroed tails (the
# image blocks they go to differ with the order files are placed in)
if diff <(cut -d' ' -f2- "$WORK/pax.map" | sed 's/^ *//' | sort) \
	<(cut -d' ' -f2- "$WORK/ref.map" | sed 's/^ *//' | sort) >"$WORK/map.diff"; then
	pass "the map file names the runs of the tar erofs-utils' names"
else
	fail "map files differ from erofs-utils': $(head -5 "$WORK/map.diff")"
fi
echo "figures: tar $(stat -c %s "$tarf") bytes; --tar=i image: ours $(stat -c %s "$WORK/pax-index.erofs")," \
	"erofs-utils $(stat -c %s "$WORK/ref-index.erofs"); --tar=i,MAP image (sparse):" \
	"ours $(stat -c %s "$WORK/pax-map.erofs"), erofs-utils $(stat -c %s "$WORK/ref-map.erofs")"
finish
