#!/bin/bash
# merge-hostile.sh: damaged layer images in rebuild mode and --incremental,
# the regression cases of tests/fuzz/run-merge.sh.  Each must fail naming
# the layer and the path inside it, leave no image (--incremental: the image
# byte for byte as it was), and, when valgrind is installed, run clean under
# it (no uninitialised value used, no invalid free).  And a valid but deep
# layer must merge on a small stack.
. "$(dirname "$0")/lib.sh"

python3 -c 'import tarfile' 2>/dev/null || { echo "$test_name: needs python3; skipped"; exit 77; }
VG=()
if command -v valgrind >/dev/null; then
	VG=(valgrind -q --error-exitcode=99 --leak-check=no)
else
	echo "note: no valgrind, the failure paths are not checked for memory errors"
fi

# put16 FILE OFFSET VALUE: a little-endian 16-bit field
put16() {
	printf "$(printf '\\x%02x\\x%02x' $(($3 & 255)) $(($3 >> 8)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# mkfs_fails LABEL PATTERN IMAGE-THAT-MUST-NOT-CHANGE|- ARGS...: mkfs.erofs
# (under valgrind when there is one) exits 1 within 5 minutes, its first line
# matches PATTERN
mkfs_fails() {
	local label=$1 pattern=$2 keep=$3 rc=0
	shift 3
	[ "$keep" = - ] || cp "$keep" "$WORK/before.img"
	timeout 300 "${VG[@]}" "$MKFS" --quiet "$@" >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
	if [ "$rc" -ne 1 ]; then
		fail "$label: exit $rc, not 1:"
		head -20 "$WORK/err.txt" >&2
	elif ! head -1 "$WORK/err.txt" | grep -qE -- "$pattern"; then
		fail "$label: the message does not match /$pattern/:"
		cat "$WORK/err.txt" >&2
	elif [ "$keep" != - ] && ! cmp -s "$keep" "$WORK/before.img"; then
		fail "$label: the image changed"
	elif [ "$keep" = - ] && [ -e "$WORK/out.img" ]; then
		fail "$label: an image was left"
	else
		pass "$label: $(head -1 "$WORK/err.txt")"
	fi
}

# hardlink_tar TAR NAME TARGET: a tar of one hard link
hardlink_tar() {
	python3 -c 'import sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    i = tarfile.TarInfo(sys.argv[2])
    i.type, i.linkname = tarfile.LNKTYPE, sys.argv[3]
    t.addfile(i)' "$@"
}

DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
mkdir -p "$WORK/t/d"
printf 'a\n' >"$WORK/t/d/aa" && printf 'b\n' >"$WORK/t/d/bb" && printf 'top\n' >"$WORK/t/top"
"$MKFS" --quiet -Enoinline_data "$WORK/good.img" "$WORK/t" || fail "mkfs of the layer"

# --- a failed --incremental build: the result it never filled was freed (valgrind) ---
hardlink_tar "$WORK/missing.tar" x nowhere
cp "$WORK/good.img" "$WORK/i.img"
mkfs_fails "--incremental, a hard link to a file nowhere" "missing\.tar: entry 'x'.*hard link" \
	"$WORK/i.img" --incremental --tar=f "$WORK/i.img" "$WORK/missing.tar"

# --- a directory entry's name offset past its block (fuzz: bad nameoff) ---
dblk=$("$DUMP" --path=/d -e "$WORK/good.img" |
	awk '$1 == "0:" { sub(/\.\..*/, "", $7); print $7 }')
[ -n "$dblk" ] || fail "no block for /d in dump.erofs -e"
cp "$WORK/good.img" "$WORK/bad.img"
# entries ., .., aa, bb (12 bytes each): aa's nameoff, at byte 8 of entry 2, past the
# block: found as the end of the name of entry 1
put16 "$WORK/bad.img" $((dblk + 2 * 12 + 8)) 1719
why="directory block 0, entry 1: bad nameoff 49 \\(next 1719"
mkfs_fails "metadata-only merge, damaged bottom layer" "^mkfs\.erofs: error: $WORK/bad\.img: /d: $why" \
	- "$WORK/out.img" "$WORK/bad.img" "$WORK/good.img"
mkfs_fails "metadata-only merge, damaged top layer" "^mkfs\.erofs: error: $WORK/bad\.img: /d: $why" \
	- "$WORK/out.img" "$WORK/good.img" "$WORK/bad.img"
mkfs_fails "--clean=data, damaged layer" "^mkfs\.erofs: error: $WORK/bad\.img: /d: $why" \
	- --clean=data -zlz4hc "$WORK/out.img" "$WORK/good.img" "$WORK/bad.img"
mkdir -p "$WORK/new" "$WORK/newd/d" && printf 'n\n' >"$WORK/new/n" && printf 'n\n' >"$WORK/newd/d/n"
cp "$WORK/bad.img" "$WORK/i.img"
# (a layer reaching into /d: in place reads only the directories reached, and
# whether it stays in place depends on the second the layer was made in)
mkfs_fails "--incremental, damaged image" "^mkfs\.erofs: error: $WORK/i\.img: /d: $why" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/newd"
# a hard link of the tar copies a file up from the damaged directory (fuzz: campaign 1, mutant 34)
hardlink_tar "$WORK/links.tar" link d/bb
mkfs_fails "--incremental --tar=f, a hard link copied up from a damaged directory" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/bb: $why" \
	"$WORK/i.img" --incremental --tar=f "$WORK/i.img" "$WORK/links.tar"

# --- --incremental keeps the base's data in place but rewrites its block 0: a file
# whose data the base puts in block 0 took another file's spooled bytes (plain:
# exit 0, wrong data) or block 0 as rewritten (chunks: exit 0, fsck rejects) ---
mkdir -p "$WORK/b0" "$WORK/n0" "$WORK/n1"
head -c 8192 /dev/urandom >"$WORK/b0/f" && head -c 5000 /dev/urandom >"$WORK/b0/g"
# a layer whose root is as old as the base's stays in place (its record fits
# the old one); one older needs an extended record, so all is rewritten
printf 'n\n' >"$WORK/n0/n" && printf 'n\n' >"$WORK/n1/n"
find "$WORK/b0" "$WORK/n0" -exec touch -h -d @1600000000 {} +
find "$WORK/n1" -exec touch -h -d @1000000000 {} +
# block_0_base IMAGE OFFSET-IN-INODE MKFS-OPTIONS...: /f's 32-bit field at the offset set to 0
block_0_base() {
	local img=$1 at=$2 nid meta
	shift 2
	"$MKFS" --quiet -Enosbcrc "$@" "$img" "$WORK/b0" || fail "mkfs $* of the base"
	nid=$("$DUMP" --path=/f "$img" | awk '/^NID:/ { print $2 }')
	meta=$("$DUMP" -s "$img" | awk '/inode metadata start block/ { print $NF }')
	"$DUMP" --path=/f "$img" | grep -q 'Inode size: 32 ' || fail "$img: /f is not a compact inode"
	printf '\0\0\0\0' | dd of="$img" bs=1 seek=$((meta * 4096 + nid * 32 + at)) conv=notrunc status=none
}
block_0_base "$WORK/i.img" 16 -Enoinline_data			# i_u: the first block
mkfs_fails "--incremental, a base file's blocks in block 0" \
	"^mkfs\.erofs: error: $WORK/i\.img: /f: its data lies in block 0, the superblock's" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/n1"
block_0_base "$WORK/i.img" 32 --chunksize=4096			# its one chunk index
# (-Efragments: all metadata rewritten, so every file of the image is read)
mkfs_fails "--incremental, a base file's chunk in block 0" \
	"^mkfs\.erofs: error: $WORK/i\.img: /f: chunk 0 lies in block 0, the superblock's" \
	"$WORK/i.img" --incremental -zlz4 -Efragments "$WORK/i.img" "$WORK/n0"
# added in place, the image's untouched files are not read: /f keeps its
# damage, which fsck still names, and nothing else of the image changes
"$MKFS" --quiet --incremental "$WORK/i.img" "$WORK/n0" 2>"$WORK/err.txt" ||
	fail "in place over a damaged file: $(head -1 "$WORK/err.txt")"
if "$FSCK" "$WORK/i.img" >"$WORK/out.txt" 2>&1 ||
   ! grep -q "/f (nid [0-9]*): data at block 0 overlaps the superblock" "$WORK/out.txt"; then
	fail "in place over a damaged file: fsck no longer names it: $(cat "$WORK/out.txt")"
elif ! "$DUMP" --path=/n --cat "$WORK/i.img" | grep -qx n; then
	fail "in place over a damaged file: the new layer's file is wrong"
else
	pass "in place over a damaged file: left as it was, still named by fsck"
fi

# --- in place (lib/source/imgbase.c) over hostile directories the new layer
# reaches: their entries are believed no further than their inodes agree.
# Each case is a clean base with one entry (or the superblock) poked by
# tests/dirent-poke.py; all times alike, so that the layer stays in place ---
POKE=$top_srcdir/tests/dirent-poke.py
mkdir -p "$WORK/hb/d/sub" "$WORK/hb/e" "$WORK/lsub/d/sub" "$WORK/laa/d/aa" "$WORK/lcc/d" \
	"$WORK/ltwo/d" "$WORK/ltwo/e"
printf 'a\n' >"$WORK/hb/d/aa" && printf 'b\n' >"$WORK/hb/d/bb" && printf 'x\n' >"$WORK/hb/d/sub/x"
printf 'y\n' >"$WORK/hb/e/y" && printf 't\n' >"$WORK/hb/top"
printf 'm\n' >"$WORK/lsub/d/sub/more" && printf 'z\n' >"$WORK/laa/d/aa/z"
printf 'c\n' >"$WORK/lcc/d/cc" && printf '1\n' >"$WORK/ltwo/d/n1" && printf '2\n' >"$WORK/ltwo/e/n2"
find "$WORK/hb" "$WORK/lsub" "$WORK/laa" "$WORK/lcc" "$WORK/ltwo" -exec touch -h -d @1600000000 {} +
"$MKFS" --quiet -Enoinline_data,nosbcrc "$WORK/hb.img" "$WORK/hb" || fail "mkfs of the in-place base"
"$MKFS" --quiet -Enosbcrc "$WORK/hbi.img" "$WORK/hb" || fail "mkfs of the inline in-place base"
# poked IMAGE ARGS...: $WORK/i.img is IMAGE with dirent-poke.py ARGS done
poked() {
	local img=$1
	shift
	cp "$img" "$WORK/i.img" && python3 "$POKE" "$WORK/i.img" "$@" || fail "dirent-poke.py $*"
}
nid_in() { python3 "$POKE" "$1" nid "$2"; }
# in_place_right LABEL LAYER: added in place, fsck-clean, the tree is the base's and the layer's
in_place_right() {
	local label=$1 layer=$2
	rm -rf "$WORK/x" "$WORK/expect"
	if ! "${VG[@]}" "$MKFS" --quiet -d 3 --incremental "$WORK/i.img" "$layer" 2>"$WORK/err.txt"; then
		fail "$label: $(grep -v ' s$' "$WORK/err.txt" | head -1)"
	elif grep -q "rewriting all" "$WORK/err.txt"; then
		fail "$label: not in place: $(head -1 "$WORK/err.txt")"
	elif ! "$FSCK" --extract="$WORK/x" "$WORK/i.img" >"$WORK/out.txt" 2>&1; then
		fail "$label: fsck rejects the result: $(head -1 "$WORK/out.txt")"
	else
		python3 "$top_srcdir/tests/overlay-apply.py" "$WORK/expect" "$WORK/hb" "$layer" >/dev/null
		same_manifest "$label" "$WORK/expect" "$WORK/x"
	fi
}

# an entry calling a directory a file, where the layer merges into it: its
# inode says (it was: "a hard-linked file loses a name", all rewritten)
poked "$WORK/hb.img" /d sub type=1
in_place_right "in place, an entry typing its directory a file" "$WORK/lsub"
# entries of unknown type (EROFS_FT_UNKNOWN, as Linux allows): the inode says
poked "$WORK/hb.img" / d type=0
python3 "$POKE" "$WORK/i.img" / e type=0 && python3 "$POKE" "$WORK/i.img" / top type=0
python3 "$POKE" "$WORK/i.img" /d sub type=0 && python3 "$POKE" "$WORK/i.img" /d aa type=0
in_place_right "in place, entries of unknown type" "$WORK/lcc"
poked "$WORK/hb.img" /d aa type=0 nid=999999
mkfs_fails "in place, an entry of unknown type naming no inode" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/aa: nid 999999 out of range" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# an entry calling a file a directory, where the layer merges into it
poked "$WORK/hb.img" /d aa type=2
mkfs_fails "in place, an entry typing a file a directory" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/aa: nid [0-9]+ is named as a directory, mode 0100644" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/laa"
# loops through a directory the layer merges into: an entry (typed a file)
# naming the directory itself or the root made the tree a cycle, which the
# build walked for ever (fuzz: campaign 4, mutant 237, with a tar's copy-up)
twice="is named twice, and as a directory \\(a loop or a directory hard link\\)"
for to in /d /; do
	for type in 1 2; do
		poked "$WORK/hb.img" /d aa nid="$to" type=$type
		mkfs_fails "in place, /d/aa naming $to (file type $type)" \
			"^mkfs\.erofs: error: $WORK/i\.img: /d/aa: nid $(nid_in "$WORK/hb.img" $to) $twice" \
			"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
	done
done
# ... and the layer reaching on into the loop
poked "$WORK/hb.img" /d aa nid=/ type=2
mkfs_fails "in place, the layer reaching into a loop to the root" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/aa: directory nid $(nid_in "$WORK/hb.img" /) is reached twice" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/laa"
# one directory under two names (a directory hard link), the layer reaching
# both names, or one of them (the other would have kept it twice)
poked "$WORK/hb.img" / e nid=/d
mkfs_fails "in place, a directory under two names the layer reaches" \
	"^mkfs\.erofs: error: $WORK/i\.img: /e: directory nid $(nid_in "$WORK/hb.img" /d) is reached twice" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/ltwo"
mkfs_fails "in place, a directory under two names, one reached" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d: directory nid $(nid_in "$WORK/hb.img" /d) is reached twice" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# a file under two names of two types (its kept entries would disagree)
poked "$WORK/hb.img" /d bb nid=/d/aa type=3
mkfs_fails "in place, a file named with two types" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/bb: nid $(nid_in "$WORK/hb.img" /d/aa) is named twice, with two file types" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# names the reader refuses in a directory the layer reaches: '/', empty
poked "$WORK/hb.img" /d bb slash
mkfs_fails "in place, a name with '/'" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d: directory block 0, entry 3: name '/b' contains '/'" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
poked "$WORK/hb.img" /d aa empty
mkfs_fails "in place, an empty name" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d: directory block 0, entry 2: bad nameoff" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# a root that is no directory (the superblock's root_nid naming /top)
cp "$WORK/hb.img" "$WORK/i.img"
put16 "$WORK/i.img" 1038 "$(nid_in "$WORK/hb.img" /top)"
mkfs_fails "in place, a root that is a file" \
	"^mkfs\.erofs: error: $WORK/i\.img: /: the root, nid $(nid_in "$WORK/hb.img" /top), is not a directory \\(mode 0100644\\)" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# a directory of 2 GiB (its i_size), where the layer merges into it
cp "$WORK/hb.img" "$WORK/i.img"
read -r at _ < <(python3 "$POKE" "$WORK/i.img" where "$(nid_in "$WORK/hb.img" /d)")
printf '\377\377\377\177' | dd of="$WORK/i.img" bs=1 seek=$((at + 8)) conv=notrunc status=none
mkfs_fails "in place, a directory claiming 2 GiB" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d: data blocks .* beyond the end of the image" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# /d's record in the last slot of its block: rewritten over it, within it
poked "$WORK/hb.img" move /d 127
dd if="$WORK/i.img" bs=4096 skip=1 status=none >"$WORK/after0"
in_place_right "in place, a directory record in the last slot of its block" "$WORK/lcc"
if [ "$(nid_in "$WORK/i.img" /d)" != 127 ]; then
	fail "in place, the last slot: /d moved to nid $(nid_in "$WORK/i.img" /d)"
elif ! dd if="$WORK/i.img" bs=4096 skip=1 count=$(($(stat -c %s "$WORK/after0") / 4096)) \
	status=none | cmp -s - "$WORK/after0"; then
	fail "in place, the last slot: the blocks after the record's changed"
else
	pass "in place, the last slot: /d kept nid 127, the blocks after it untouched"
fi
# an inline directory whose tail would run past its block: refused; one whose
# tail ends a few bytes before its block does: rewritten (without a tail) there
poked "$WORK/hbi.img" move /d 127
mkfs_fails "in place, an inline directory's tail past its block" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d: inline data (beyond the end of the image|.*crosses a block boundary)" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
size=$("$DUMP" --path=/d "$WORK/hbi.img" | awk '/^Size:/ { print $2 }')
slot=$((128 - (32 + size + 31) / 32))
poked "$WORK/hbi.img" move /d "$slot"
in_place_right "in place, an inline directory ending its block" "$WORK/lcc"
[ "$(nid_in "$WORK/i.img" /d)" = "$slot" ] || fail "in place, ending its block: /d moved"
# records the rewrite would write over: a kept entry naming a nid inside the
# record of the directory rewritten (its inline tail), two rewritten
# directories whose records overlap (/d's tail grown over /e's record), and a
# kept entry naming a nid past the image's end, which appending would make
# name a new record (fuzz: campaign 4, mutants 2428, 3485)
dnid=$(nid_in "$WORK/hbi.img" /d) enid=$(nid_in "$WORK/hbi.img" /e)
dsize=$("$DUMP" --path=/d "$WORK/hbi.img" | awk '/^Size:/ { print $2 }')
dlast=$((dnid + (32 + dsize + 31) / 32 - 1))
poked "$WORK/hbi.img" /d aa nid=$((dnid + 1))
mkfs_fails "in place, a kept entry naming a nid in a rewritten record" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/aa: nid $((dnid + 1)) lies in the record of /d \\(nids $dnid\.\.$dlast\\), which is rewritten in place" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
cp "$WORK/hbi.img" "$WORK/i.img"
read -r at _ < <(python3 "$POKE" "$WORK/i.img" where "$dnid")
put16 "$WORK/i.img" $((at + 8)) $(((enid - dnid) * 32 - 32 + 4))
mkfs_fails "in place, two rewritten records overlapping" \
	"^mkfs\.erofs: error: $WORK/i\.img: /e: nid $enid lies in the record of /d \\(nids $dnid\.\.$enid\\)" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/ltwo"
poked "$WORK/hb.img" /d bb nid=999999
mkfs_fails "in place, a kept entry naming a nid past the image's end" \
	"^mkfs\.erofs: error: $WORK/i\.img: /d/bb: nid 999999 out of range \\(the image has [0-9]+ inode slots\\)" \
	"$WORK/i.img" --incremental "$WORK/i.img" "$WORK/lcc"
# a directory of 20,000 entries, the layer adding one
mkdir -p "$WORK/huge/big" "$WORK/lhuge/big"
(cd "$WORK/huge/big" && seq -f 'file-with-a-name-%06g' 20000 | xargs touch)
printf 'new\n' >"$WORK/lhuge/big/file-with-a-name-010000x"
find "$WORK/huge" "$WORK/lhuge" -exec touch -h -d @1600000000 {} +
"$MKFS" --quiet "$WORK/i.img" "$WORK/huge" || fail "mkfs of the huge directory"
rm -rf "$WORK/hb" && mv "$WORK/huge" "$WORK/hb"
in_place_right "in place, a directory of 20,000 entries" "$WORK/lhuge"
rm -rf "$WORK/x" "$WORK/expect"

# --- a valid 48-bit layer of a few blocks whose file is a 2 TiB hole (no block at
# all): --clean=data read the hole as zeros, a MiB at a time (minutes; an i_size of
# 2^63 took years); now holes are skipped, and a size the spool cannot take is
# refused naming the file ---
mkdir -p "$WORK/h" && head -c 4096 /dev/urandom >"$WORK/h/f" && printf e >"$WORK/h/e"
"$MKFS" --quiet -E48bit,force-inode-extended,noinline_data,nosbcrc "$WORK/hole.img" "$WORK/h" ||
	fail "mkfs -E48bit of the layer"
nid=$("$DUMP" --path=/f "$WORK/hole.img" | awk '/^NID:/ { print $2 }')
meta=$("$DUMP" -s "$WORK/hole.img" | awk '/inode metadata start block/ { print $NF }')
at=$((meta * 4096 + nid * 32))
# extended inode: i_nb (startblk_hi) at 6, i_size at 8, i_u (startblk_lo) at 16
printf '\377\377' | dd of="$WORK/hole.img" bs=1 seek=$((at + 6)) conv=notrunc status=none
printf '\377\377\377\377' | dd of="$WORK/hole.img" bs=1 seek=$((at + 16)) conv=notrunc status=none
cp "$WORK/hole.img" "$WORK/huge.img"
printf '\0\0\0\0\0\2\0\0' | dd of="$WORK/hole.img" bs=1 seek=$((at + 8)) conv=notrunc status=none
printf '\377\377\377\377\377\377\377\177' | dd of="$WORK/huge.img" bs=1 seek=$((at + 8)) conv=notrunc status=none
rm -f "$WORK/out.img"
if ! "$DUMP" --path=/f "$WORK/hole.img" | grep -q '^Size: 2199023255552 '; then
	fail "the crafted layer has no 2 TiB /f"
elif timeout 60 "$MKFS" --quiet --clean=data --chunksize=1048576 "$WORK/out.img" "$WORK/hole.img" \
	2>"$WORK/err.txt" && "$FSCK" "$WORK/out.img" >/dev/null 2>&1 &&
	"$DUMP" --path=/f "$WORK/out.img" | grep -q '^Size: 2199023255552 '; then
	pass "--clean=data: a 2 TiB hole of a 48-bit layer is skipped, not read"
else
	fail "--clean=data of a 2 TiB hole: failed or still reading after 60 s:"
	tail -3 "$WORK/err.txt" >&2
fi
rm -f "$WORK/out.img"
# 2^63 - 1 bytes after /e's block, all holes: past what a file offset can
# say, so never spooled: it becomes a chunk-based file of holes at once
if timeout 60 "$MKFS" --quiet --clean=data --chunksize=1048576 "$WORK/out.img" "$WORK/huge.img" \
	2>"$WORK/err.txt" && "$FSCK" "$WORK/out.img" >/dev/null 2>&1 &&
	"$DUMP" --path=/f "$WORK/out.img" | grep -q '^Size: 9223372036854775807 '; then
	pass "--clean=data: a hole of 2^63 - 1 bytes becomes holes, not a spool"
else
	fail "--clean=data of a 2^63 - 1 byte hole:"
	tail -3 "$WORK/err.txt" >&2
fi
rm -f "$WORK/out.img"

# --- a valid layer nesting 3,000 directories, merged on a 512 KiB stack: the walk
# recursed once per level and ran out of stack at about 350 bytes a level ---
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(3000):
    os.mkdir("d", dir_fd=fd)
    fd2 = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = fd2
with open("/proc/self/fd/%d/f" % fd, "w") as f:
    f.write("bottom\n")' "$(mkdir -p "$WORK/deep" && echo "$WORK/deep")"
"$MKFS" --quiet "$WORK/deep.img" "$WORK/deep" || fail "mkfs of the deep layer"
cp "$WORK/deep.img" "$WORK/i.img"
rm -f "$WORK/out.img"
for what in "--clean=data $WORK/out.img $WORK/deep.img $WORK/good.img" \
	    "--incremental $WORK/i.img $WORK/new"; do
	# shellcheck disable=SC2086 # the words of $what
	if (ulimit -s 512 && exec "$MKFS" --quiet $what) 2>"$WORK/err.txt"; then
		img=$(set -- $what && echo "$2")
		# past PATH_MAX: erofs-manifest walks down by relative names
		if "$FSCK" --extract="$WORK/x" "$img" >/dev/null 2>&1 &&
		   "$MANIFEST" "$WORK/x" | grep -qE '^(d/){3000}f type=reg .* size=7 '; then
			pass "${what%% *}: 3,000 nested directories on a 512 KiB stack"
		else
			fail "${what%% *}: the deep merge does not extract to the tree"
		fi
		rm -rf "$WORK/x"
	else
		fail "${what%% *}: the deep merge failed or crashed:"
		tail -3 "$WORK/err.txt" >&2
	fi
done
finish
