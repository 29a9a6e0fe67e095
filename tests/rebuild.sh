#!/bin/bash
# rebuild.sh: rebuild mode, mkfs.erofs IMAGE LAYER1.img ... LAYERN.img.  The
# layers are directories with overlayfs whiteouts (0:0 character devices) and
# opaque directories; each is made into an EROFS image and the merge must show
# what tests/overlay-apply.py (which shares no code with mkfs) makes of the
# directories: metadata-only (fsck with --device per layer), --clean=data
# from any layer layout, --clean=rvsp.  Bad layers fail naming the layer and
# the path, leaving no image.  erofs-utils 1.9.4, when present, reads our
# merged image and merges the same layers into the same tree.
. "$(dirname "$0")/lib.sh"
require_root

ANCHOR_DIR=$top_srcdir/../shared/anchors/erofs-utils-1.9.4
APPLY=$top_srcdir/tests/overlay-apply.py
L=$WORK/layers

mkfile() { mkdir -p "$(dirname "$1")" && printf '%s' "$2" > "$1"; }
whiteout() { mkdir -p "$(dirname "$1")" && mknod "$1" c 0 0; }

# layer 1: the base
mkfile "$L/1/a/f" "lower f"
head -c 300000 /dev/urandom > "$WORK/big" && mkdir -p "$L/1/a/b" && cp "$WORK/big" "$L/1/a/b/big"
mkfile "$L/1/a/hl1" "linked" && ln "$L/1/a/hl1" "$L/1/a/hl2"
mkfile "$L/1/d/x" "in d" && mkfile "$L/1/e/old" "hidden by opaque e"
mkfile "$L/1/rep" "a file, then a directory, then a file"
ln -s a/f "$L/1/sym" && mknod "$L/1/null" c 1 3 && mkfifo "$L/1/fifo"
head -c 20000 /dev/zero > "$L/1/zeros" && : > "$L/1/empty"
setfattr -n user.k -v lower "$L/1/a/f" && setfattr -n user.dir -v lower "$L/1/a"
chown 1000:1001 "$L/1/a/hl1" && chmod 0750 "$L/1/a/b"
# layer 2: deletes, replaces, hides
whiteout "$L/2/d" && whiteout "$L/2/sym" && whiteout "$L/2/a/hl2"
mkfile "$L/2/a/f" "upper f" && setfattr -n user.dir -v upper "$L/2/a"
mkdir -p "$L/2/e" && setfattr -n trusted.overlay.opaque -v y "$L/2/e" && mkfile "$L/2/e/z" "new in e"
rm -f "$L/2/rep" && mkfile "$L/2/rep/inside" "rep is a directory now"
mkfile "$L/2/g/h" "new dir" && setfattr -n security.test -v 1 "$L/2/g"
# layer 3: back again
mkfile "$L/3/rep" "rep is a file again" && mkfile "$L/3/d/y" "d is back, opaque"
mkfile "$L/3/p1" "pair" && ln "$L/3/p1" "$L/3/p2" && setfattr -n user.root -v 3 "$L/3"
touch -d '2020-01-02 03:04:05.123456789' "$L/3/rep" "$L/3/d"
find "$L" -mindepth 1 -not -type l -exec touch -h -d '2021-05-06 07:08:09' {} + 2>/dev/null || true
touch -d '2020-01-02 03:04:05.123456789' "$L/3/rep"

python3 "$APPLY" --strip "$WORK/expect-strip" "$L/1" "$L/2" "$L/3"
python3 "$APPLY" "$WORK/expect" "$L/1" "$L/2" "$L/3"

# layer images: blocks only (what a metadata-only merge can point into), and compressed
for i in 1 2 3; do
	"$MKFS" --quiet -Enoinline_data "$WORK/p$i.img" "$L/$i" || fail "mkfs of layer $i"
	"$MKFS" --quiet -zlz4hc -Eztailpacking,fragments "$WORK/z$i.img" "$L/$i" ||
		fail "mkfs of compressed layer $i"
done
P=("$WORK/p1.img" "$WORK/p2.img" "$WORK/p3.img")
Z=("$WORK/z1.img" "$WORK/z2.img" "$WORK/z3.img")
DEVS=(--device="$WORK/p1.img" --device="$WORK/p2.img" --device="$WORK/p3.img")

# --- metadata only ---
"$MKFS" --quiet --ovlfs-strip=1 "$WORK/m.img" "${P[@]}" || fail "metadata-only merge"
ours_extract "metadata-only, --ovlfs-strip=1" "$WORK/m.img" "$WORK/expect-strip" "${DEVS[@]}"
"$MKFS" --quiet "$WORK/mw.img" "${P[@]}" || fail "metadata-only merge with whiteouts"
ours_extract "metadata-only, whiteouts and opaque kept" "$WORK/mw.img" "$WORK/expect" "${DEVS[@]}"
data_blocks=$(( $(stat -c %s "$WORK/m.img") / 4096 ))
if [ "$data_blocks" -le 2 ]; then pass "metadata-only: $data_blocks blocks, no data"
else fail "metadata-only image has $data_blocks blocks"; fi
# the device table: one slot per layer, each layer's UUID as 32 hex digits
for i in 1 2 3; do
	uuid=$(od -An -tx1 -j $((1024 + 48)) -N 16 "$WORK/p$i.img" | tr -d ' \n')
	if grep -q "$uuid" <(strings -n 32 "$WORK/m.img"); then pass "layer $i tagged by its UUID"
	else fail "layer $i: no tag $uuid in the device table"; fi
done
expect_failure "metadata-only image without its layers" "device|--device" \
	"$FSCK" --extract="$WORK/nodev" "$WORK/m.img"

# --- --clean=data: from plain and from compressed layers, recompressed or not ---
"$MKFS" --quiet --ovlfs-strip=1 --clean=data "$WORK/c.img" "${P[@]}" || fail "--clean=data"
ours_extract "--clean=data" "$WORK/c.img" "$WORK/expect-strip"
"$MKFS" --quiet --ovlfs-strip=1 --clean "$WORK/cz.img" "${Z[@]}" || fail "--clean from compressed"
ours_extract "--clean from compressed layers" "$WORK/cz.img" "$WORK/expect-strip"
"$MKFS" --quiet --clean=data -zlz4hc,9 -Efragments,dedupe "$WORK/cz2.img" "${Z[@]}" ||
	fail "--clean=data -z"
ours_extract "--clean=data -zlz4hc from compressed, whiteouts kept" "$WORK/cz2.img" "$WORK/expect"

# --- --clean=rvsp: sizes kept, blocks reserved, zeros ---
"$MKFS" --quiet --ovlfs-strip=1 --clean=rvsp "$WORK/r.img" "${P[@]}" || fail "--clean=rvsp"
rm -rf "$WORK/rx" && "$FSCK" --extract="$WORK/rx" "$WORK/r.img" >/dev/null || fail "fsck of rvsp"
if [ "$(stat -c %s "$WORK/rx/a/b/big")" = 300000 ] && cmp -s "$WORK/rx/a/b/big" <(head -c 300000 /dev/zero) &&
   [ "$(stat -c %s "$WORK/r.img")" -ge 300000 ]; then pass "--clean=rvsp: sizes kept, zeros, blocks reserved"
else fail "--clean=rvsp: wrong sizes or data"; fi

# --- refusals: by layer and path, no image left ---
mkfile "$WORK/zc/text" "$(seq 1 2000)"
"$MKFS" --quiet -zlz4 "$WORK/zc.img" "$WORK/zc" >/dev/null
expect_failure "a compressed layer cannot be indexed" "zc.img: /text: compressed.*--clean=data" \
	"$MKFS" --quiet "$WORK/bad.img" "$WORK/p1.img" "$WORK/zc.img"
"$MKFS" --quiet "$WORK/t1.img" "$L/1" >/dev/null
expect_failure "a tail-inlined file cannot be indexed" "t1.img: /.*inlined.*--clean=data.*inline_data" \
	"$MKFS" --quiet "$WORK/bad.img" "$WORK/t1.img"
expect_failure "a metadata-only merge refuses -z" "-z does not apply.*--clean=data" \
	"$MKFS" --quiet -zlz4 "$WORK/bad.img" "${P[@]}"
expect_failure "a file that is not an image" "neither a directory nor an EROFS image" \
	"$MKFS" --quiet "$WORK/bad.img" "$WORK/p1.img" "$WORK/big"
expect_failure "the image cannot be one of its layers" "overwrite its own layer" \
	"$MKFS" --quiet "$WORK/p1.img" "$WORK/p1.img" "$WORK/p2.img"
expect_failure "--clean=0 is not a rebuild mode" "--clean=0" \
	"$MKFS" --quiet --clean=0 "$WORK/bad.img" "${P[@]}"
"$MKFS" --quiet -b 512 -Enoinline_data "$WORK/b512.img" "$L/2" >/dev/null
expect_failure "layers of another block size" "b512.img: /: 512-byte blocks.*-b 512" \
	"$MKFS" --quiet "$WORK/bad.img" "$WORK/p1.img" "$WORK/b512.img"
# a damaged directory inode of a layer (no superblock checksum to stop it
# earlier): the layer is named, and the path
"$MKFS" --quiet -Enoinline_data,nosbcrc "$WORK/broken.img" "$L/2" >/dev/null
meta=$(od -An -tu4 -j $((1024 + 40)) -N 4 "$WORK/broken.img" | tr -d ' ')
nid=$("$top_builddir/dump/dump.erofs" --path=/g "$WORK/broken.img" | sed -n 's/^NID: \([0-9]*\).*/\1/p')
printf '\xff\xff' | dd of="$WORK/broken.img" bs=1 seek=$((meta * 4096 + nid * 32)) conv=notrunc status=none
expect_failure "a corrupt layer" "broken.img: /g: " \
	"$MKFS" --quiet "$WORK/bad.img" "$WORK/p1.img" "$WORK/broken.img"
if [ -e "$WORK/bad.img" ]; then fail "a failed merge left $WORK/bad.img"; else pass "no image left by a failed merge"; fi

# --- many small layers: each adds a file and deletes the previous one ---
layers=()
for i in $(seq 1 50); do
	mkfile "$WORK/many/$i/f$i" "layer $i"
	mkfile "$WORK/many/$i/common" "from $i"
	[ "$i" = 1 ] || whiteout "$WORK/many/$i/f$((i - 1))"
	touch -d '2022-02-02 02:02:02' "$WORK/many/$i" "$WORK/many/$i"/*
	"$MKFS" --quiet -Enoinline_data "$WORK/many$i.img" "$WORK/many/$i" >/dev/null
	layers+=("$WORK/many$i.img")
done
python3 "$APPLY" --strip "$WORK/many-expect" $(seq -f "$WORK/many/%g" 1 50)
"$MKFS" --quiet --ovlfs-strip=1 "$WORK/many.img" "${layers[@]}" || fail "50 layers"
devs=()
for f in "${layers[@]}"; do devs+=(--device="$f"); done
ours_extract "50 layers, metadata-only" "$WORK/many.img" "$WORK/many-expect" "${devs[@]}"
"$MKFS" --quiet --ovlfs-strip=1 --clean=data "$WORK/many-c.img" "${layers[@]}" || fail "50 layers, data"
ours_extract "50 layers, --clean=data" "$WORK/many-c.img" "$WORK/many-expect"

# --- a layer nested deeper than any C stack would walk by recursion ---
python3 -c "
import os, sys
os.chdir(sys.argv[1])
for i in range(30000):
    os.mkdir('d'); os.chdir('d')
open('f', 'w').write('bottom')
" "$(mkdir -p "$WORK/deep" && echo "$WORK/deep")"
"$MKFS" --quiet -Enoinline_data "$WORK/deep.img" "$WORK/deep" || fail "mkfs of the deep layer"
if "$MKFS" --quiet "$WORK/deepm.img" "$WORK/deep.img" "$WORK/p1.img" &&
   "$FSCK" --device="$WORK/deep.img" --device="$WORK/p1.img" "$WORK/deepm.img" >/dev/null; then
	pass "a layer 30000 directories deep merges"
else fail "a 30000-deep layer does not merge"; fi

# --- a layer file that is all holes is copied as holes, not read (1 TiB) ---
mkdir -p "$WORK/holes" && truncate -s 1T "$WORK/holes/huge"
"$MKFS" --quiet --chunksize=1048576 "$WORK/holes.img" "$WORK/holes"
if timeout 20 "$MKFS" --quiet --clean=data "$WORK/holes-c.img" "$WORK/holes.img" &&
   "$FSCK" "$WORK/holes-c.img" >/dev/null &&
   "$top_builddir/dump/dump.erofs" --path=/huge "$WORK/holes-c.img" | grep -q "Size: 1099511627776 "; then
	pass "--clean=data: a 1 TiB file of holes in $(stat -c %s "$WORK/holes-c.img") bytes, at once"
else fail "--clean=data of a 1 TiB hole"; fi

# --- reproducible: the same layers, the same bytes ---
"$MKFS" --quiet -T 0 -U 11111111-2222-3333-4444-555555555555 "$WORK/r1.img" "${P[@]}"
"$MKFS" --quiet -T 0 -U 11111111-2222-3333-4444-555555555555 "$WORK/r2.img" "${P[@]}"
if cmp -s "$WORK/r1.img" "$WORK/r2.img"; then pass "reproducible merge"; else fail "two merges differ"; fi

# --- erofs-utils 1.9.4 as the second reader and the second merger ---
if [ -x "$ANCHOR_DIR/fsck.erofs" ] && [ -x "$ANCHOR_DIR/mkfs.erofs" ]; then
	if "$ANCHOR_DIR/fsck.erofs" "${DEVS[@]}" "$WORK/m.img" >"$WORK/a.log" 2>&1; then
		pass "erofs-utils fsck accepts our metadata-only merge"
	else fail "erofs-utils fsck rejects our merge: $(tail -1 "$WORK/a.log")"; fi
	for i in 1 2 3; do
		"$ANCHOR_DIR/mkfs.erofs" --quiet -Enoinline_data "$WORK/e$i.img" "$L/$i" >/dev/null 2>&1 ||
			fail "erofs-utils mkfs of layer $i"
	done
	E=("$WORK/e1.img" "$WORK/e2.img" "$WORK/e3.img")
	EDEVS=(--device="$WORK/e1.img" --device="$WORK/e2.img" --device="$WORK/e3.img")
	"$MKFS" --quiet --ovlfs-strip=1 "$WORK/oe.img" "${E[@]}" || fail "our merge of erofs-utils layers"
	ours_extract "our merge of erofs-utils layers" "$WORK/oe.img" "$WORK/expect-strip" "${EDEVS[@]}"
	"$ANCHOR_DIR/mkfs.erofs" --quiet --ovlfs-strip=1 "$WORK/ee.img" "${E[@]}" >"$WORK/ee.log" 2>&1 ||
		fail "erofs-utils merge: $(tail -1 "$WORK/ee.log")"
	rm -rf "$WORK/ex1" "$WORK/ex2"
	"$FSCK" "${EDEVS[@]}" --extract="$WORK/ex1" "$WORK/ee.img" >/dev/null &&
		"$FSCK" "${EDEVS[@]}" --extract="$WORK/ex2" "$WORK/oe.img" >/dev/null ||
		fail "extracting the two merges"
	# but the root, which erofs-utils makes 0777 and dates with the build time
	"$MANIFEST" "$WORK/ex1" | sed 1d > "$WORK/ex1.manifest"
	"$MANIFEST" "$WORK/ex2" | sed 1d > "$WORK/ex2.manifest"
	if diff -u "$WORK/ex1.manifest" "$WORK/ex2.manifest" > "$WORK/ex.diff"; then
		pass "erofs-utils and we merge the same layers into the same tree"
	else
		fail "erofs-utils and we merge the same layers differently:" && head -20 "$WORK/ex.diff" >&2
	fi
else
	echo "skip: erofs-utils 1.9.4 not in ../shared/anchors: no second merger"
fi
finish
