#!/bin/bash
# fsck.erofs --extract never writes outside its target directory, never
# follows a symlink (from the image or planted in the target), and replaces
# existing entries only with --overwrite.  Crafted images try to write
# through a symlink extracted just before, or to use '..' and '/' names.
. "$(dirname "$0")/fsck-common.sh"

[ -x "$OUR_MKFS" ] || [ -n "$DEB_MKFS" ] || skip "no mkfs.erofs"
mkimg() { # IMG SRC: ours, or Debian's when ours cannot (mkfs is only a tool here)
	if [ -x "$OUR_MKFS" ] && "$OUR_MKFS" --quiet -T 1000 "$1" "$2" >"$WORK/mkfs.log" 2>&1; then
		return 0
	fi
	[ -x "$OUR_MKFS" ] && echo "note: our mkfs.erofs failed on $2: $(tail -1 "$WORK/mkfs.log")"
	if [ -n "$DEB_MKFS" ] && "$DEB_MKFS" --quiet -T 1000 "$1" "$2" >/dev/null 2>&1; then
		return 0
	fi
	fail "cannot make an image of $2"
	finish
}

OUT=$WORK/outside	# must stay empty
mkdir -p "$OUT"
outside_empty() { # LABEL
	if [ -z "$(ls -A "$OUT")" ]; then
		pass "$1: nothing written outside the target"
	else
		fail "$1: wrote outside the target: $(ls -A "$OUT")"
	fi
	rm -rf "${OUT:?}"/* "${OUT:?}"/.[!.]* 2>/dev/null
}

# run LABEL EXPECTED_RC PATTERN ARGS...
run() {
	local label=$1 want=$2 pat=$3 rc
	shift 3
	"$FSCK" "$@" >"$WORK/run.log" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || grep -qE -- "$pat" "$WORK/run.log"; }; then
		pass "$label"
	else
		fail "$label: rc $rc (want $want, /$pat/): $(head -3 "$WORK/run.log")"
	fi
}

# ---- a plain image: a.txt, d/f ----
SRC=$WORK/src
mkdir -p "$SRC/d"
printf 'image data' >"$SRC/a.txt"
printf 'f data' >"$SRC/d/f"
IMG=$WORK/plain.img
mkimg "$IMG" "$SRC"

X=$WORK/x1
mkdir -p "$X"
printf 'precious' >"$X/a.txt"
run "non-empty target refused without --force/--overwrite" 2 "is not empty" --extract="$X" "$IMG"
[ "$(cat "$X/a.txt")" = precious ] && [ ! -e "$X/d" ] && pass "refused extraction changed nothing" ||
	fail "refused extraction changed the target"
run "--force keeps an existing file and reports it" 1 "/a.txt: already exists" --extract="$X" --force "$IMG"
[ "$(cat "$X/a.txt")" = precious ] && [ "$(cat "$X/d/f")" = "f data" ] &&
	pass "--force: existing file untouched, the rest extracted" || fail "--force: wrong result"
run "--overwrite replaces an existing file" 0 "" --extract="$X" --overwrite "$IMG"
[ "$(cat "$X/a.txt")" = "image data" ] && pass "--overwrite: file replaced" || fail "--overwrite: file not replaced"

# a planted symlink where the image has a directory
X=$WORK/x2
mkdir -p "$X"
ln -s "$OUT" "$X/d"
run "planted dir symlink: --force reports it" 1 "/d: already exists" --extract="$X" --force "$IMG"
outside_empty "planted dir symlink, --force"
run "planted dir symlink: --overwrite replaces it" 0 "" --extract="$X" --overwrite "$IMG"
[ -d "$X/d" ] && [ ! -L "$X/d" ] && [ "$(cat "$X/d/f")" = "f data" ] &&
	pass "planted dir symlink became a real directory" || fail "planted dir symlink survived"
outside_empty "planted dir symlink, --overwrite"

# a planted symlink where the image has a file
X=$WORK/x3
mkdir -p "$X"
printf 'victim' >"$WORK/victim"
ln -s "$WORK/victim" "$X/a.txt"
run "planted file symlink: --overwrite replaces the link" 0 "" --extract="$X" --overwrite "$IMG"
[ "$(cat "$WORK/victim")" = victim ] && [ ! -L "$X/a.txt" ] && [ "$(cat "$X/a.txt")" = "image data" ] &&
	pass "planted file symlink: victim untouched" || fail "planted file symlink: victim written"
run "planted file symlink: --force does not follow it" 1 "already exists" --extract="$X" --force "$IMG"
rm -f "$X/a.txt"; ln -s "$WORK/victim" "$X/a.txt"
run "planted file symlink again, --force" 1 "/a.txt: already exists" --extract="$X" --force "$IMG"
[ "$(cat "$WORK/victim")" = victim ] && pass "victim still untouched" || fail "victim written"

# an existing real directory is merged into with --force
X=$WORK/x4
mkdir -p "$X/d"
printf 'keep' >"$X/d/keep.txt"
run "--force merges into an existing directory" 0 "" --extract="$X" --force "$IMG"
[ "$(cat "$X/d/keep.txt")" = keep ] && [ "$(cat "$X/d/f")" = "f data" ] &&
	pass "existing directory kept its files" || fail "existing directory merge"

# targets: created when missing; a missing parent and / are refused
run "missing target is created" 0 "" --extract="$WORK/new-target" "$IMG"
[ -f "$WORK/new-target/d/f" ] && pass "new target populated" || fail "new target not populated"
run "missing parent refused" 2 "cannot create" --extract="$WORK/no/such/dir" "$IMG"
EMPTYSRC=$WORK/emptysrc
mkdir -p "$EMPTYSRC"
chmod 0755 "$EMPTYSRC"
mkimg "$WORK/empty.img" "$EMPTYSRC"
ln -s / "$WORK/rootlink"
run "extracting into / refused" 2 "refusing to extract into /" --extract=/ "$WORK/empty.img"
run "extracting into / through a symlink refused" 2 "refusing to extract into /" --extract="$WORK/rootlink" "$WORK/empty.img"

# ---- crafted: a symlink 'a' to outside, then a directory also named 'a' ----
craft() { # NAME_OF_DIR NAME_OF_LINK -> $WORK/craft.img, dir renamed to the link's name
	local s=$WORK/craft-src
	rm -rf "$s"
	mkdir -p "$s/$1"
	printf 'payload' >"$s/$1/f"
	ln -s "$OUT" "$s/$2"
	IMG=$WORK/craft.img
	mkimg "$IMG" "$s"
	local de no nl
	read -r de no nl < <(find_dirent "$(sb_root)" "$1")
	wrs "$no" "$2"
	sb_nocsum
}

craft b a	# sorted: a (symlink), b (dir) -> a, a
X=$WORK/x5
run "symlink then same-named directory: rejected" 1 "duplicate directory entry 'a'" --extract="$X" "$IMG"
outside_empty "symlink then same-named directory"
[ -L "$X/a" ] && [ ! -e "$X/a/f" ] && pass "only the symlink was extracted" || fail "craft 1 result"

craft a b	# sorted: a (dir), b (symlink) -> b, b
X=$WORK/x6
run "directory then same-named symlink: rejected" 1 "duplicate directory entry 'b'" --extract="$X" "$IMG"
outside_empty "directory then same-named symlink"
[ -d "$X/b" ] && [ ! -L "$X/b" ] && [ "$(cat "$X/b/f")" = payload ] && pass "the directory kept its place" ||
	fail "craft 2 result"

# the same names one level down, with --overwrite (the most permissive mode)
craft zz zy	# zy (symlink) < zz (dir) -> zy, zy
X=$WORK/x7
run "crafted duplicate with --overwrite: still rejected" 1 "duplicate directory entry 'zy'" --extract="$X" --overwrite "$IMG"
outside_empty "crafted duplicate with --overwrite"

# names '..' and 'a/b'
craft zz ab
de=$(find_dirent "$(sb_root)" ab | head -1)
read -r _ no _ <<<"$de"
wrs "$no" ".."
X=$WORK/x8
run "a second '..' entry is rejected" 1 "(duplicate directory entry |not sorted: )'\.\.'" --extract="$X" "$IMG"
outside_empty "'..' entry"
[ ! -e "$WORK/f" ] && [ ! -e "$WORK/ab" ] && pass "'..' wrote nothing above the target" ||
	fail "'..' wrote above the target"

s=$WORK/slash-src
mkdir -p "$s/x"
printf 'p' >"$s/x/f"
printf 'q' >"$s/yyy"
IMG=$WORK/slash.img
mkimg "$IMG" "$s"
read -r _ no _ < <(find_dirent "$(sb_root)" yyy)
wrs "$no" "x/f"
sb_nocsum
X=$WORK/x9
run "a name with '/' is rejected" 1 "contains '/'" --extract="$X" --overwrite "$IMG"
[ "$(cat "$X/x/f")" = p ] && pass "'x/f' did not overwrite x/f" || fail "'x/f' overwrote x/f"

# a directory loop: extraction terminates and reports it
s=$WORK/loop-src
mkdir -p "$s/d/e"
IMG=$WORK/loop.img
mkimg "$IMG" "$s"
read -r de _ _ < <(find_dirent "$(nid_path /d)" e)
wr "$de" 8 "$(sb_root)"
sb_nocsum
X=$WORK/x10
timeout 20 "$FSCK" --extract="$X" "$IMG" >"$WORK/loop.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "directory hard link or loop" "$WORK/loop.log"; then
	pass "directory loop: reported, extraction terminated"
else
	fail "directory loop: rc $rc $(head -2 "$WORK/loop.log")"
fi
outside_empty "directory loop"

# nothing but the expected entries appeared in the scratch folder
unexpected=$(cd "$WORK" && ls -A | grep -vE '^(outside|victim|rootlink|src|emptysrc|craft-src|slash-src|loop-src|x[0-9]+|new-target|run\.log|loop\.log|mkfs\.log|.*\.img)$')
[ -z "$unexpected" ] && pass "no stray files beside the targets" || fail "stray files: $unexpected"
finish
