#!/bin/bash
# incremental.sh: mkfs.erofs --incremental IMAGE SOURCE adds SOURCE (a
# directory, or a tar with --tar=f) to IMAGE as a new top layer, with
# overlayfs rules.  Every step must extract to what tests/overlay-apply.py
# makes of the layers; the base image's bytes past block 0 must be
# untouched (its data stays where it is); the UUID is kept; a failure (bad
# tar, full disk, SIGINT) leaves IMAGE byte for byte as it was and no file
# beside it.
. "$(dirname "$0")/lib.sh"
require_root

ANCHOR_FSCK=$top_srcdir/../shared/anchors/erofs-utils-1.9.4/fsck.erofs
APPLY=$top_srcdir/tests/overlay-apply.py
UUID=0a0b0c0d-1111-2222-3333-444455556666

mkfile() { mkdir -p "$(dirname "$1")" && printf '%s' "$2" > "$1"; }
whiteout() { mkdir -p "$(dirname "$1")" && mknod "$1" c 0 0; }

# check LABEL IMAGE LAYER_DIR...: fsck-clean, and extracts to the layers applied
check() {
	local label=$1 img=$2
	shift 2
	rm -rf "$WORK/expect"
	python3 "$APPLY" "$WORK/expect" "$@"
	ours_extract "$label" "$img" "$WORK/expect"
}

# kept LABEL OLD NEW: the old image's blocks after block 0 are in NEW
# unchanged, and so is block 0 past the superblock (the old records there
# must survive until the new superblock is written)
kept() {
	local size
	size=$(stat -c %s "$2")
	if cmp -s <(tail -c +4097 "$2") <(head -c "$size" "$3" | tail -c +4097) &&
	   cmp -s <(head -c 4096 "$2" | tail -c 2048) <(head -c 4096 "$3" | tail -c 2048); then
		pass "$1: the base's $(( size / 4096 - 1 )) blocks after block 0, and block 0 past the superblock, unchanged"
	else
		fail "$1: the base's blocks changed"
	fi
}

DUMP=$top_builddir/dump/dump.erofs
nid_of() { "$DUMP" --path="$2" "$1" | sed -n 's/^NID: *\([0-9]*\).*/\1/p'; }
# record_ranges IMAGE PATH...: "offset length" of each path's record (core,
# xattrs, inline tail), in the image as it is
record_ranges() {
	local img=$1 meta p
	shift
	meta=$("$DUMP" -s "$img" | sed -n 's/.*inode metadata start block: *//p')
	for p; do
		"$DUMP" --path="$p" "$img" | awk -v meta="$meta" '
			/^Size:/ { size = $2 }
			/^NID:/ { nid = $2; layout = $6 }
			/^Inode size:/ { isize = $3; xsize = $6 }
			END { print meta * 4096 + nid * 32, isize + xsize + (layout == 2 ? size % 4096 : 0) }'
	done
}
# kept_except LABEL OLD NEW PATH...: OLD's bytes are in NEW unchanged but
# for the superblock and the records of PATHs (directories rewritten)
kept_except() {
	local label=$1 old=$2 new=$3
	shift 3
	if python3 - "$old" "$new" $(record_ranges "$old" "$@") <<'PY'
import sys
old, new = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
ranges = [(1024, 1024 + 128)] + [(int(a), int(a) + int(b)) for a, b in zip(sys.argv[3::2], sys.argv[4::2])]
o, n = bytearray(old), bytearray(new[:len(old)])
for a, b in ranges:
    o[a:b] = n[a:b] = bytes(b - a)
sys.exit(0 if o == n else 1)
PY
	then pass "$label: every byte of the old image stays but the superblock and $# records"
	else fail "$label: old bytes changed outside the records rewritten"; fi
}
# --- a plain base and a directory layer with whiteouts and an opaque directory ---
mkfile "$WORK/l1/a/f" "base f"
head -c 100000 /dev/urandom > "$WORK/rand" && cp "$WORK/rand" "$WORK/l1/a/big"
head -c 8192 /dev/urandom > "$WORK/l1/exact"
mkfile "$WORK/l1/d/x" "in d" && mkfile "$WORK/l1/gone" "deleted later"
mkfile "$WORK/l1/h1" "hard" && ln "$WORK/l1/h1" "$WORK/l1/h2"
ln -s a/f "$WORK/l1/sym" && setfattr -n user.base -v 1 "$WORK/l1/a/f"
mkfile "$WORK/l2/new" "new file" && whiteout "$WORK/l2/gone"
mkdir -p "$WORK/l2/d" && setfattr -n trusted.overlay.opaque -v y "$WORK/l2/d" && mkfile "$WORK/l2/d/y" "only y"
mkfile "$WORK/l2/a/f" "replaced f" && mkfile "$WORK/l2/h2" "h2 replaced, h1 stays"

"$MKFS" --quiet -U "$UUID" "$WORK/i.img" "$WORK/l1" || fail "base image"
cp "$WORK/i.img" "$WORK/base.img"
"$MKFS" --quiet --incremental "$WORK/i.img" "$WORK/l2" || fail "--incremental with a directory"
check "directory layer" "$WORK/i.img" "$WORK/l1" "$WORK/l2"
kept "directory layer" "$WORK/base.img" "$WORK/i.img"
if "$top_builddir/dump/dump.erofs" -s "$WORK/i.img" | grep -q "UUID: *$UUID"; then
	pass "the UUID is kept"
else fail "the UUID changed"; fi
if [ "$("$top_builddir/dump/dump.erofs" --path=/a/big "$WORK/i.img" | sed -n 's/^NID.*Layout: \([0-9]\).*/\1/p')" = 2 ]; then
	pass "a file with head blocks and an inline tail keeps its layout"
else fail "a/big changed layout"; fi

# --- a tar layer with aufs whiteouts, and --ovlfs-strip=1 ---
python3 - "$WORK/l3.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    def add(name, data=None, kind=None):
        ti = tarfile.TarInfo(name)
        ti.mtime = 1700000000
        if kind == "dir":
            ti.type, ti.mode = tarfile.DIRTYPE, 0o755
            t.addfile(ti)
        elif kind == "link":
            ti.type, ti.linkname = tarfile.LNKTYPE, data
            t.addfile(ti)
        else:
            ti.size, ti.mode = len(data), 0o644
            t.addfile(ti, io.BytesIO(data))
    add(".wh.sym", b"")
    add("a", kind="dir")
    add("a/.wh..wh..opq", b"")
    add("a/only", b"a is opaque now\n")
    add("new2", b"second layer\n")
    add("exactlink", "exact", kind="link")
EOF
mkdir -p "$WORK/l3/a" && mknod "$WORK/l3/sym" c 0 0
setfattr -n trusted.overlay.opaque -v y "$WORK/l3/a" && mkfile "$WORK/l3/a/only" "a is opaque now
" && mkfile "$WORK/l3/new2" "second layer
"
cp "$WORK/i.img" "$WORK/base2.img"
"$MKFS" --quiet --incremental --tar=f --aufs --ovlfs-strip=1 "$WORK/i.img" "$WORK/l3.tar" ||
	fail "--incremental --tar=f"
rm -rf "$WORK/x" && "$FSCK" --extract="$WORK/x" "$WORK/i.img" >/dev/null || fail "fsck after the tar layer"
if [ -f "$WORK/x/a/only" ] && [ ! -e "$WORK/x/a/big" ] && [ ! -e "$WORK/x/sym" ] &&
   [ -f "$WORK/x/new2" ] && [ -f "$WORK/x/new" ] && [ ! -e "$WORK/x/gone" ] &&
   cmp -s "$WORK/x/exactlink" "$WORK/l1/exact" &&
   [ "$(stat -c %i "$WORK/x/exactlink")" = "$(stat -c %i "$WORK/x/exact")" ]; then
	pass "tar layer: opaque directory, whiteouts stripped, a hard link to a base file"
else
	fail "tar layer: wrong tree"; find "$WORK/x" >&2
fi
# (added in place: the root's record is rewritten, the opaque /a is new)
kept_except "tar layer" "$WORK/base2.img" "$WORK/i.img" /

# --- a chain of ten layers: deleting and re-adding a path, a directory becoming a file and back ---
"$MKFS" --quiet "$WORK/c.img" "$WORK/l1" || fail "chain base"
layers=("$WORK/l1")
for i in $(seq 1 10); do
	c=$WORK/chain/$i
	mkfile "$c/f$i" "layer $i"
	case $((i % 3)) in
	0) whiteout "$c/again" ;;
	1) mkfile "$c/again" "again in $i" ;;
	2) mkfile "$c/again/inside" "a directory in $i" ;;
	esac
	[ "$i" -lt 2 ] || whiteout "$c/f$((i - 1))"
	"$MKFS" --quiet --incremental "$WORK/c.img" "$c" || fail "chain step $i"
	layers+=("$c")
done
check "ten layers" "$WORK/c.img" "${layers[@]}"

# --- sixty small layers in place, reaching into the same nested directories
# again and again: adds, whiteouts, a directory made opaque, one replaced by a
# file and back (every step must stay in place) ---
mkfile "$WORK/m0/top/x0/seed" "seed"
"$MKFS" --quiet "$WORK/m.img" "$WORK/m0" || fail "sixty layers: base"
layers=("$WORK/m0")
fallbacks=0
for i in $(seq 1 60); do
	c=$WORK/many/$i
	mkfile "$c/top/x$((i % 7))/deep/f$i" "layer $i"
	[ "$i" -le 5 ] || whiteout "$c/top/x$(((i - 5) % 7))/deep/f$((i - 5))"
	[ $((i % 10)) -ne 0 ] || { mkdir -p "$c/top/x3" && setfattr -n trusted.overlay.opaque -v y "$c/top/x3"; }
	case $((i % 13)) in
	0) mkfile "$c/top/y" "y is a file now" ;;
	1) mkfile "$c/top/y/z" "y is a directory again" ;;
	esac
	"$MKFS" --quiet -d 3 --incremental "$WORK/m.img" "$c" 2>"$WORK/m.log" || fail "sixty layers: step $i"
	grep -q "rewriting all" "$WORK/m.log" && fallbacks=$((fallbacks + 1))
	layers+=("$c")
done
[ "$fallbacks" = 0 ] && pass "sixty layers: every step in place" ||
	fail "sixty layers: $fallbacks steps rewrote all metadata"
check "sixty layers" "$WORK/m.img" "${layers[@]}"
# the superblock counts the inodes still reached: what was replaced, deleted
# or hidden (a directory with its subtree) is no longer counted
if "$FSCK" "$WORK/m.img" 2>&1 | grep -q "inode count"; then
	fail "sixty layers: $("$FSCK" "$WORK/m.img" 2>&1 | grep "inode count")"
else pass "sixty layers: the superblock's inode count is what is reachable"; fi

# --- a compressed base: its files are read back through the reader ---
mkdir -p "$WORK/zl" && seq 1 30000 > "$WORK/zl/text" && cp "$WORK/rand" "$WORK/zl/rand"
"$MKFS" --quiet -zlz4hc -Eztailpacking,fragments "$WORK/z.img" "$WORK/zl"
"$MKFS" --quiet --incremental -zlz4hc "$WORK/z.img" "$WORK/l2" || fail "--incremental on a compressed base"
check "compressed base" "$WORK/z.img" "$WORK/zl" "$WORK/l2"

# --- a compressed base (big pclusters, shared ones, every algorithm): its
# pclusters stay where they are, with no -z given for the new layer ---
for args in "-zlz4hc -C65536" "-zlz4 -C16384 -Ededupe" "-zlzma -C65536" "-zdeflate" "-zzstd,5"; do
	"$MKFS" --quiet $args "$WORK/k.img" "$WORK/zl"
	cp "$WORK/k.img" "$WORK/k0.img"
	"$top_builddir/dump/dump.erofs" -e --path=/text "$WORK/k.img" | grep -E '^ +[0-9]+:' > "$WORK/ext0"
	"$MKFS" --quiet --incremental "$WORK/k.img" "$WORK/l2" || fail "--incremental on $args"
	"$top_builddir/dump/dump.erofs" -e --path=/text "$WORK/k.img" | grep -E '^ +[0-9]+:' > "$WORK/ext1"
	if cmp -s "$WORK/ext0" "$WORK/ext1" && [ -s "$WORK/ext0" ]; then
		pass "$args base: /text keeps its $(wc -l < "$WORK/ext0") extents where they were"
	else fail "$args base: /text's extents moved"; diff "$WORK/ext0" "$WORK/ext1" >&2; fi
	kept "$args base" "$WORK/k0.img" "$WORK/k.img"
	check "$args base" "$WORK/k.img" "$WORK/zl" "$WORK/l2"
	if [ -x "$ANCHOR_FSCK" ] && ! "$ANCHOR_FSCK" "$WORK/k.img" >"$WORK/a.log" 2>&1; then
		fail "$args base: erofs-utils fsck rejects the result: $(tail -1 "$WORK/a.log")"
	fi
done

# --- one large file first, then a small layer (erofs-utils 1.9.3 could not) ---
mkdir -p "$WORK/one" && head -c $((24 << 20)) /dev/urandom > "$WORK/one/huge"
"$MKFS" --quiet "$WORK/one.img" "$WORK/one"
"$MKFS" --quiet --incremental "$WORK/one.img" "$WORK/l2" || fail "a small layer over one large file"
check "one large file, then a layer" "$WORK/one.img" "$WORK/one" "$WORK/l2"

# --- in place: only the directories the layer reaches are rewritten, over
# their own records; every other record and block of the image stays ---
mkfile "$WORK/p1/keep/deep/file" "untouched"
mkfile "$WORK/p1/merge/sub/file" "below the merge"
mkfile "$WORK/p1/merge/old" "replaced"
mkdir -p "$WORK/p1/opq" && setfattr -n trusted.overlay.opaque -v y "$WORK/p1/opq"
mkfile "$WORK/p1/opq/in" "in an opaque directory"
mkfile "$WORK/p1/hl" "linked" && ln "$WORK/p1/hl" "$WORK/p1/hl2"
mkfile "$WORK/p2/merge/new" "added" && mkfile "$WORK/p2/merge/old" "new content"
mkfile "$WORK/p2/opq/more" "merged over an opaque directory"
whiteout "$WORK/p2/keep/deep/gone"
"$MKFS" --quiet "$WORK/p.img" "$WORK/p1" || fail "in-place base"
cp "$WORK/p.img" "$WORK/p0.img"
"$MKFS" --quiet -d 3 --incremental "$WORK/p.img" "$WORK/p2" 2>"$WORK/p.log" || fail "in-place layer"
if grep -q "rewriting all" "$WORK/p.log"; then fail "in place: fell back: $(cat "$WORK/p.log")"
else pass "in place: no fallback"; fi
check "in place" "$WORK/p.img" "$WORK/p1" "$WORK/p2"
kept_except "in place" "$WORK/p0.img" "$WORK/p.img" / /merge /opq /keep /keep/deep
for p in / /merge /merge/sub /merge/sub/file /keep/deep/file /opq/in /hl; do
	[ "$(nid_of "$WORK/p0.img" "$p")" = "$(nid_of "$WORK/p.img" "$p")" ] ||
		fail "in place: $p moved from nid $(nid_of "$WORK/p0.img" "$p") to $(nid_of "$WORK/p.img" "$p")"
done
pass "in place: the root, the merged directories and untouched files keep their nids"
grown=$(( $(stat -c %s "$WORK/p.img") - $(stat -c %s "$WORK/p0.img") ))
[ "$grown" -le $((6 * 4096)) ] && pass "in place: the image grew by $grown bytes" ||
	fail "in place: the image grew by $grown bytes (more than 6 blocks for 2 files)"
rm -rf "$WORK/px" && "$FSCK" --extract="$WORK/px" "$WORK/p.img" >/dev/null
if [ "$(getfattr --only-values -n trusted.overlay.opaque "$WORK/px/opq" 2>/dev/null)" = y ]; then
	pass "in place: a directory merged over an opaque one stays opaque"
else fail "in place: /opq lost its opaque marker"; fi

# what in place cannot express is built again with all metadata rewritten:
# a hard-linked file of the image losing a name (its link count is in its
# kept record), a root whose new record outgrows the old one
cp "$WORK/p0.img" "$WORK/p.img"
mkfile "$WORK/p3/hl2" "no longer linked"
"$MKFS" --quiet -d 3 --incremental "$WORK/p.img" "$WORK/p3" 2>"$WORK/p.log" || fail "hard link layer"
grep -q "rewriting all" "$WORK/p.log" && pass "a hard link losing a name: all metadata rewritten" ||
	fail "a hard link losing a name: stayed in place"
check "a hard link losing a name" "$WORK/p.img" "$WORK/p1" "$WORK/p3"
# (one mtime everywhere: every inode of the base compact, the root's 32 bytes)
cp -a "$WORK/p1" "$WORK/p1c" && find "$WORK/p1c" -exec touch -h -d @1000000000 {} +
"$MKFS" --quiet -Enoinline_data "$WORK/r.img" "$WORK/p1c" || fail "compact root base"
mkdir -p "$WORK/p4" && setfattr -n user.big -v "$(printf 'v%.0s' $(seq 1 200))" "$WORK/p4"
mkfile "$WORK/p4/root-xattr" "the root gains an xattr"
"$MKFS" --quiet -d 3 --incremental "$WORK/r.img" "$WORK/p4" 2>"$WORK/p.log" || fail "outgrown root layer"
grep -q "rewriting all" "$WORK/p.log" && pass "a root outgrowing its record: all metadata rewritten" ||
	fail "a root outgrowing its record: stayed in place"
check "a root outgrowing its record" "$WORK/r.img" "$WORK/p1c" "$WORK/p4"

# --- failures leave the image as it was, and nothing beside it ---
unchanged() { # LABEL
	if cmp -s "$WORK/i.img" "$WORK/before.img"; then pass "$1: the image is unchanged"
	else fail "$1: the image changed"; fi
	if ls "$WORK"/i.img?* >/dev/null 2>&1; then fail "$1: files left: $(ls "$WORK"/i.img?*)"
	else pass "$1: nothing left beside it"; fi
}
cp "$WORK/i.img" "$WORK/before.img"
printf 'not a tar at all, just bytes' > "$WORK/bad.tar"
expect_failure "a bad tar" "bad.tar: " "$MKFS" --quiet --incremental --tar=f "$WORK/i.img" "$WORK/bad.tar"
unchanged "a bad tar"
( trap '' XFSZ; ulimit -f $(( $(stat -c %s "$WORK/i.img") / 1024 + 8 ));
  "$MKFS" --quiet --incremental "$WORK/i.img" "$WORK/one" >"$WORK/full.log" 2>&1 ) &&
	fail "a full disk: the build succeeded"
grep -q "File too large\|No space" "$WORK/full.log" && pass "a full disk: $(head -1 "$WORK/full.log")" ||
	fail "a full disk: $(cat "$WORK/full.log")"
unchanged "a full disk"
mkfifo "$WORK/fifo"
"$MKFS" --quiet --incremental --tar=f "$WORK/i.img" "$WORK/fifo" 2>/dev/null &
pid=$!
exec 9>"$WORK/fifo"
{ tar -C "$WORK/l1" -cf - . | head -c 20480 >&9; } || true
sleep 0.5
kill -INT "$pid"
exec 9>&-
wait "$pid" && fail "SIGINT: the build succeeded"
unchanged "SIGINT"

# while the merge writes into the image: interrupted once the image has
# grown (the new blocks going in), SIGINT puts it back; SIGKILL cannot, but
# the old superblock still rules, so the image reads as before
mkdir -p "$WORK/grow" && head -c $((160 << 20)) /dev/urandom > "$WORK/grow/big"
interrupt_growing() { # SIGNAL
	local size pid n=0
	size=$(stat -c %s "$WORK/i.img")
	"$MKFS" --quiet --incremental "$WORK/i.img" "$WORK/grow" 2>/dev/null &
	pid=$!
	while [ "$(stat -c %s "$WORK/i.img")" -le "$size" ] && [ $n -lt 3000 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.01
		n=$((n + 1))
	done
	kill "-$1" "$pid" 2>/dev/null
	! wait "$pid"
}
if interrupt_growing INT; then unchanged "SIGINT while the image grows"
else fail "SIGINT while the image grows: the build finished first"; fi
if interrupt_growing KILL; then
	rm -rf "$WORK/k" && "$FSCK" --extract="$WORK/k" "$WORK/i.img" >/dev/null &&
		same_manifest "SIGKILL while the image grows: still the old image" "$WORK/x" "$WORK/k"
	cp "$WORK/before.img" "$WORK/i.img"
else fail "SIGKILL while the image grows: the build finished first"; fi

# --- refusals ---
expect_failure "not an image" "not an EROFS image" \
	"$MKFS" --quiet --incremental "$WORK/rand" "$WORK/l2"
expect_failure "no image" "expected an existing EROFS image" \
	"$MKFS" --quiet --incremental "$WORK/none.img" "$WORK/l2"
expect_failure "-b disagrees" "-b must agree" \
	"$MKFS" --quiet --incremental -b 1024 "$WORK/i.img" "$WORK/l2"
expect_failure "--clean with --incremental" "not both" \
	"$MKFS" --quiet --incremental --clean "$WORK/i.img" "$WORK/l2"
"$MKFS" --quiet -Enoinline_data "$WORK/p.img" "$WORK/l1" >/dev/null
"$MKFS" --quiet "$WORK/meta.img" "$WORK/p.img" >/dev/null
expect_failure "an image with extra devices" "extra devices" \
	"$MKFS" --quiet --incremental "$WORK/meta.img" "$WORK/l2"

# --- in place with --ovlfs-strip=1: the image's character devices in the
# directories the layer reaches are kept (their stubs knew no numbers, so
# a kept 1:3 looked like a whiteout and was dropped); its whiteouts go ---
mkdir -p "$WORK/cb/d" && mknod "$WORK/cb/d/null" c 1 3 && mknod "$WORK/cb/d/wh" c 0 0
mkfile "$WORK/cb/d/f" "f"
find "$WORK/cb" -exec touch -h -d @1700000000 {} +
python3 - "$WORK/cl.tar" <<'EOF2'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for name, data in (("d", None), ("d/n", b"n\n")):
        ti = tarfile.TarInfo(name)
        ti.mtime, ti.mode = 1700000000, 0o755
        if data is None:
            ti.type = tarfile.DIRTYPE
            t.addfile(ti)
        else:
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
EOF2
"$MKFS" --quiet "$WORK/cb.img" "$WORK/cb" || fail "the base with devices"
"$MKFS" --quiet -d 3 --incremental --tar=f --ovlfs-strip=1 "$WORK/cb.img" "$WORK/cl.tar" \
	2>"$WORK/cb.log" || fail "--ovlfs-strip=1 over devices: $(head -1 "$WORK/cb.log")"
grep -q "rewriting all" "$WORK/cb.log" && fail "--ovlfs-strip=1 over devices: not in place"
rm -rf "$WORK/x" && "$FSCK" --extract="$WORK/x" "$WORK/cb.img" >/dev/null 2>&1 ||
	fail "--ovlfs-strip=1 over devices: fsck rejects the image"
if [ "$(stat -c %F:%t:%T "$WORK/x/d/null" 2>/dev/null)" = "character special file:1:3" ] &&
   [ ! -e "$WORK/x/d/wh" ] && [ -f "$WORK/x/d/n" ] && [ -f "$WORK/x/d/f" ]; then
	pass "--ovlfs-strip=1 in place: the image's device 1:3 stays, its whiteout goes"
else
	fail "--ovlfs-strip=1 in place over devices: wrong tree"; find "$WORK/x" >&2
fi

if [ -x "$ANCHOR_FSCK" ]; then
	for img in i c z one; do
		if "$ANCHOR_FSCK" "$WORK/$img.img" >"$WORK/a.log" 2>&1; then
			pass "erofs-utils fsck accepts the incremented $img.img"
		else fail "erofs-utils fsck rejects $img.img: $(tail -1 "$WORK/a.log")"; fi
	done
else
	echo "skip: erofs-utils 1.9.4 not in ../shared/anchors: no second reader"
fi
finish
