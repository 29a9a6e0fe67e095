#!/bin/bash
# fsck.erofs options shared with erofs-utils' fsck.erofs (1.9.4): --offset,
# --nid, --path, --[no-]xattrs, -A/-a/-y, the extraction options and the
# exit status; and --workers: the same extraction and the same messages,
# byte for byte, for any number of workers, also on a damaged image.  When
# erofs-utils 1.9.4's fsck.erofs is present, the same command lines are run
# through it and must extract the same trees.
. "$(dirname "$0")/fsck-common.sh"

[ -x "$OUR_MKFS" ] || skip "our mkfs.erofs is not built"
THEIRS=${EROFS_UTILS_FSCK:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/fsck.erofs}
[ -x "$THEIRS" ] || THEIRS=

SRC=$WORK/src
mkdir -p "$SRC/d/sub" "$SRC/e"
python3 - "$SRC" <<'PY' || { fail "cannot build the source tree"; finish; }
import os, random, sys
rnd = random.Random(7)
d = sys.argv[1]
words = [b"alpha", b"beta", b"gamma", b"erofs", b"\n"]
def text(n):
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words) + b" "
    return bytes(out[:n])
for i in range(40):
    sub = ("d", "d/sub", "e")[i % 3]
    open(os.path.join(d, sub, "f%02d" % i), "wb").write(text(rnd.randint(100, 70000)))
open(os.path.join(d, "top"), "wb").write(text(5000))
PY
ln "$SRC/d/f00" "$SRC/e/link-to-d-f00"
ln -s ../top "$SRC/d/sym"
setfattr -n user.colour -v blue "$SRC/d/f03" 2>/dev/null && HAVE_XATTR=1 || HAVE_XATTR=
IMG=$WORK/img

# exits LABEL RC PATTERN CMD...: CMD exits with status RC, its output matching PATTERN
exits() {
	local label=$1 want=$2 re=$3 rc=0
	shift 3
	"$@" >"$WORK/exits.log" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$re" "$WORK/exits.log"; then
		pass "$label: exit $rc, $(head -1 "$WORK/exits.log")"
	else
		fail "$label: exit $rc (wanted $want, /$re/): $(head -2 "$WORK/exits.log")"
	fi
}
"$OUR_MKFS" --quiet -z lz4hc -C 16384 "$IMG" "$SRC" || { fail "mkfs"; finish; }

# exit status: 0 clean, 2 usage, 1 corrupt
"$FSCK" "$IMG" >/dev/null 2>&1 && pass "clean image: exit 0" || fail "clean image: exit $?"
"$FSCK" --no-such-option "$IMG" >/dev/null 2>&1
[ $? -eq 2 ] && pass "unknown option: exit 2" || fail "unknown option: not exit 2"
"$FSCK" "$WORK/missing.img" >/dev/null 2>&1
[ $? -eq 2 ] && pass "missing image: exit 2" || fail "missing image: not exit 2"
for o in -a -A -y -n -d0 -d9 -p --xattrs --no-xattrs --workers=1 --workers=3; do
	"$FSCK" $o "$IMG" >"$WORK/o.log" 2>&1 && pass "$o accepted" ||
		fail "$o: $(head -2 "$WORK/o.log")"
done
exits "--workers=0" 2 "workers" "$FSCK" --workers=0 "$IMG"
exits "--offset past the end" 2 "offset" "$FSCK" --offset=99999999 "$IMG"

# --offset: the image 12345 bytes into a bigger file
BIG=$WORK/big
{ head -c 12345 /dev/urandom; cat "$IMG"; head -c 5000 /dev/urandom; } >"$BIG"
exits "no --offset" 1 "superblock|magic" "$FSCK" "$BIG"
"$FSCK" --offset=12345 "$BIG" >"$WORK/off.log" 2>&1 &&
	pass "--offset=12345: no errors" || fail "--offset: $(head -2 "$WORK/off.log")"
rm -rf "$WORK/x"
"$FSCK" --offset 12345 --extract="$WORK/x" "$BIG" >/dev/null 2>&1 &&
	compare_trees offset-extract "$SRC" "$WORK/x" || fail "--offset --extract"

# --path and --nid: the subtree, checked and extracted (d/f00's other
# name is outside it: a copy of d alone has it as a plain file)
cp -a "$SRC/d" "$WORK/d-alone"
for sel in "--path=/d" "--path=d/" "--path=/e/../d/./" "--nid=$(nid_path /d)"; do
	rm -rf "$WORK/x"
	if "$FSCK" "$sel" --extract="$WORK/x" "$IMG" >"$WORK/p.log" 2>&1; then
		compare_trees "subtree-$(echo "$sel" | tr -c "a-z0-9\n" _)" "$WORK/d-alone" "$WORK/x"
	else
		fail "$sel --extract: $(head -3 "$WORK/p.log")"
	fi
done
# a hard link whose other name is outside the subtree is no error
"$FSCK" --path=/e "$IMG" >"$WORK/p.log" 2>&1 &&
	pass "--path=/e: link counts outside the subtree not checked" ||
	fail "--path=/e: $(head -3 "$WORK/p.log")"
"$FSCK" --path=/d/f00 "$IMG" >"$WORK/p.log" 2>&1 &&
	pass "--path to a file: checked" || fail "--path=/d/f00: $(head -3 "$WORK/p.log")"
rm -rf "$WORK/one"
"$FSCK" --path=/d/f00 --extract="$WORK/one" "$IMG" >"$WORK/p.log" 2>&1 && cmp -s "$WORK/one" "$SRC/d/f00" &&
	pass "--path to a file --extract=F: F is the file" || fail "--path=/d/f00 --extract: $(head -3 "$WORK/p.log")"
exits "--path to a file, F exists" 1 "exists" "$FSCK" --path=/d/f00 --extract="$WORK/one" "$IMG"
"$FSCK" --path=/d/f00 --overwrite --extract="$WORK/one" "$IMG" >/dev/null 2>&1 && cmp -s "$WORK/one" "$SRC/d/f00" &&
	pass "--path to a file, F exists, --overwrite" || fail "--path to a file --overwrite"
exits "--path to nothing" 2 "no such file" "$FSCK" --path=/d/nothing "$IMG"
exits "--path through a file" 2 "" "$FSCK" --path=/top/x "$IMG"
exits "--nid of no inode" 1 "nid" "$FSCK" --nid=999999999 "$IMG"

# --xattrs / --no-xattrs
if [ -n "$HAVE_XATTR" ]; then
	rm -rf "$WORK/x"
	"$FSCK" --no-xattrs --extract="$WORK/x" "$IMG" >/dev/null 2>&1
	if [ -f "$WORK/x/d/f03" ] && ! getfattr -n user.colour "$WORK/x/d/f03" >/dev/null 2>&1; then
		pass "--no-xattrs: none restored"
	else
		fail "--no-xattrs: user.colour restored (or no file)"
	fi
	rm -rf "$WORK/x"
	"$FSCK" --xattrs --extract="$WORK/x" "$IMG" >/dev/null 2>&1
	[ "$(getfattr --only-values -n user.colour "$WORK/x/d/f03" 2>/dev/null)" = blue ] &&
		pass "--xattrs: restored" || fail "--xattrs: user.colour not restored"
fi

# --workers: the same tree and the same output for 1, 2 and 5 workers
for w in 1 2 5; do
	rm -rf "$WORK/w$w"
	"$FSCK" --workers=$w --extract="$WORK/w$w" "$IMG" >"$WORK/w$w.log" 2>&1 ||
		fail "--workers=$w: $(head -2 "$WORK/w$w.log")"
done
compare_trees workers-1-2 "$WORK/w1" "$WORK/w2"
compare_trees workers-1-5 "$WORK/w1" "$WORK/w5"
compare_trees workers-2-source "$SRC" "$WORK/w2"

# a damaged image: the messages, their order and the exit status do not
# depend on --workers (every pcluster of several files damaged)
BAD=$WORK/bad
cp "$IMG" "$BAD"
python3 - "$BAD" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
# damage a byte in the middle of every 8th block of the data area
for off in range(8192 * 3 + 100, len(b) - 4096, 8192):
    b[off] ^= 0x5a
open(p, "wb").write(bytes(b))
PY
for w in 1 2 5; do
	"$FSCK" --workers=$w "$BAD" >"$WORK/bad$w.out" 2>&1
	echo "exit $?" >>"$WORK/bad$w.out"
	rm -rf "$WORK/bx$w"
	"$FSCK" --workers=$w -d9 --extract="$WORK/bx$w" "$BAD" >"$WORK/badx$w.out" 2>&1
	echo "exit $?" >>"$WORK/badx$w.out"
done
n=$(grep -c 'nid' "$WORK/bad1.out")
if [ "$n" -ge 3 ] && grep -q "exit 1" "$WORK/bad1.out"; then
	pass "damaged image: $n messages naming a nid, exit 1"
else
	fail "damaged image: only $n messages: $(head -3 "$WORK/bad1.out")"
fi
for w in 2 5; do
	cmp -s "$WORK/bad1.out" "$WORK/bad$w.out" &&
		pass "damaged image, check: --workers=$w prints what --workers=1 prints" ||
		{ fail "damaged image, check: --workers=$w differs"; diff "$WORK/bad1.out" "$WORK/bad$w.out" | head >&2; }
	cmp -s "$WORK/badx1.out" "$WORK/badx$w.out" &&
		pass "damaged image, -d9 --extract: --workers=$w prints what --workers=1 prints" ||
		{ fail "damaged image, extract: --workers=$w differs"; diff "$WORK/badx1.out" "$WORK/badx$w.out" | head >&2; }
	compare_trees "damaged-extracted-workers-$w" "$WORK/bx1" "$WORK/bx$w"
done

# the extraction options, spelled as erofs-utils spells them
mkdir -p "$WORK/full"
echo old >"$WORK/full/top"
exits "non-empty target" 2 "not empty" "$FSCK" --extract="$WORK/full" "$IMG"
"$FSCK" --extract="$WORK/full" --overwrite "$IMG" >/dev/null 2>&1 &&
	cmp -s "$WORK/full/top" "$SRC/top" && pass "--overwrite replaces" || fail "--overwrite"
for opts in "--force --overwrite" "--preserve" "--no-preserve" "--preserve-owner --no-preserve-perms" \
	"--no-preserve-owner --preserve-perms" "--xattrs --preserve"; do
	rm -rf "$WORK/x"
	# shellcheck disable=SC2086
	"$FSCK" $opts --extract="$WORK/x" "$IMG" >"$WORK/p.log" 2>&1 && [ -f "$WORK/x/d/sub/f01" ] &&
		pass "$opts" || fail "$opts: $(head -2 "$WORK/p.log")"
done

# erofs-utils 1.9.4: the same command lines extract the same trees
if [ -n "$THEIRS" ]; then
	# erofs-utils restores xattrs only with --xattrs
	for args in "--path=/d --xattrs" "--nid=$(nid_path /d/sub) --xattrs" "--xattrs"; do
		rm -rf "$WORK/ours" "$WORK/theirs"
		# shellcheck disable=SC2086
		"$FSCK" $args --extract="$WORK/ours" "$IMG" >/dev/null 2>&1 &&
		"$THEIRS" $args --extract="$WORK/theirs" "$IMG" >/dev/null 2>&1 ||
			{ fail "erofs-utils comparison '$args': a tool failed"; continue; }
		compare_trees "erofs-utils-$(echo "$args" | tr -c "a-z0-9\n" _)" "$WORK/theirs" "$WORK/ours"
	done
	"$THEIRS" --offset=12345 "$BIG" >/dev/null 2>&1 &&
		pass "erofs-utils reads the same --offset image" || fail "erofs-utils --offset"
else
	echo "note: erofs-utils 1.9.4 fsck.erofs not found; comparisons skipped"
fi
finish
