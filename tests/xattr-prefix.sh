#!/bin/bash
# Long xattr name prefixes (--xattr-prefix, INCOMPAT_XATTR_PREFIXES, Linux
# 6.4+): the table's exact bytes in both places it can live (beside the
# superblock, with COMPAT_PLAIN_XATTR_PFX; at the start of the packed
# inode's data with -E fragments), names stored without their prefix, round
# trips through our fsck and erofs-utils' (when present), name filters that
# do not depend on the prefixes, bad arguments and damaged tables refused.
. "$(dirname "$0")/fsck-common.sh"
[ -x "$OUR_MKFS" ] || skip "mkfs.erofs not built"
setfattr -n user.probe -v 1 "$WORK" 2>/dev/null || skip "the scratch filesystem has no user xattrs"

SRC=$WORK/src
mkdir -p "$SRC/d"
printf 'a' >"$SRC/a"; printf 'b' >"$SRC/d/b"
head -c 20000 /dev/zero | tr '\0' x >"$SRC/d/big"
setfattr -n user.foo.bar -v 1 "$SRC/a"
setfattr -n user.foo.baz -v 2 "$SRC/a"
setfattr -n user.other -v 3 "$SRC/a"
setfattr -n user.foo.bar -v 1 "$SRC/d/b"
if setfattr -n trusted.overlay.opaque -v y "$SRC/d" 2>/dev/null; then
	have_trusted=1
else
	have_trusted=0
fi
PFX=(--xattr-prefix=user.foo. --xattr-prefix=trusted.overlay.)

xattr_dump() { # DIR: every xattr of every path, sorted
	(cd "$1" && getfattr -R -h -m - -d --absolute-names . 2>/dev/null | grep -v '^$' | sort)
}

IMG=$WORK/plain.img
mkfs_or_fail plain "$IMG" "$SRC" -T 0 "${PFX[@]}" || finish
incompat=$(rd $((1024 + 0x50)) 4) compat=$(rd 1032 4)
count=$(rd $((1024 + 0x5B)) 1) start=$(rd $((1024 + 0x5C)) 4)
[ $((incompat & 0x40)) -ne 0 ] && [ $((compat & 0x10)) -ne 0 ] && [ "$count" -eq 2 ] &&
	pass "plain table: INCOMPAT_XATTR_PREFIXES, COMPAT_PLAIN_XATTR_PFX, 2 prefixes" ||
	fail "plain table: incompat $incompat compat $compat count $count"
# u16 length, base index, infix, padded to 4: user.foo. = 1 "foo.", trusted.overlay. = 4 "overlay."
want=050001666f6f2e00090004 want2=6f7665726c61792e
got=$(od -An -v -tx1 -j $((start * 4)) -N 20 "$IMG" | tr -d ' \n')
[ "$got" = "$want$want2"00 ] && pass "plain table: exact bytes at byte $((start * 4))" ||
	fail "plain table bytes at $((start * 4)): $got"
grep -qa 'foo\.bar' "$IMG" && fail "the name user.foo.bar is still stored whole" ||
	pass "names under a long prefix are stored without it"
"$FSCK" --extract="$WORK/plain.out" "$IMG" >"$WORK/plain.fsck" 2>&1 ||
	fail "fsck --extract: $(head -2 "$WORK/plain.fsck")"
[ "$(xattr_dump "$WORK/plain.out")" = "$(xattr_dump "$SRC")" ] &&
	pass "fsck --extract restores every xattr" ||
	fail "extracted xattrs differ: $(diff <(xattr_dump "$SRC") <(xattr_dump "$WORK/plain.out") | head -4)"

# the name filter hashes the name after the short prefix: same words with or without
mkfs_or_fail noprefix "$WORK/noprefix.img" "$SRC" -T 0 || finish
for p in /a /d/b; do
	IMG=$WORK/plain.img; io=$(ino_off "$(nid_path "$p")")
	f1=$(rd $((io + (($(rd "$io" 2) & 1) ? 64 : 32))) 4)
	IMG=$WORK/noprefix.img; io=$(ino_off "$(nid_path "$p")")
	f2=$(rd $((io + (($(rd "$io" 2) & 1) ? 64 : 32))) 4)
	[ "$f1" = "$f2" ] && pass "$p: name filter independent of long prefixes" ||
		fail "$p: filter $f1 with prefixes, $f2 without"
done

IMG=$WORK/packed.img
mkfs_or_fail packed "$IMG" "$SRC" -T 0 -zlz4hc -Efragments "${PFX[@]}" || finish
[ $(($(rd 1032 4) & 0x10)) -eq 0 ] && [ "$(rd $((1024 + 0x5C)) 4)" -eq 0 ] &&
	[ $(($(rd $((1024 + 0x50)) 4) & 0x60)) -eq $((0x60)) ] &&
	pass "fragments: the table starts the packed inode (no plain bit, start 0)" ||
	fail "fragments: compat $(rd 1032 4) start $(rd $((1024 + 0x5C)) 4) incompat $(rd $((1024 + 0x50)) 4)"
"$FSCK" --extract="$WORK/packed.out" "$IMG" >"$WORK/packed.fsck" 2>&1 ||
	fail "fsck --extract (fragments): $(head -2 "$WORK/packed.fsck")"
[ "$(xattr_dump "$WORK/packed.out")" = "$(xattr_dump "$SRC")" ] && cmp -s "$SRC/d/big" "$WORK/packed.out/d/big" &&
	pass "fragments: xattrs and data round-trip" || fail "fragments: extraction differs"

REF_FSCK=${REF_FSCK:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/fsck.erofs}
if [ -x "$REF_FSCK" ]; then
	for img in plain packed; do
		"$REF_FSCK" --extract="$WORK/$img.ref" --xattrs "$WORK/$img.img" >"$WORK/$img.ref.log" 2>&1 ||
			fail "erofs-utils fsck on $img: $(tail -1 "$WORK/$img.ref.log")"
		[ "$(xattr_dump "$WORK/$img.ref")" = "$(xattr_dump "$SRC")" ] &&
			pass "$img: erofs-utils 1.9.4 reads every xattr back" ||
			fail "$img: erofs-utils reads other xattrs"
	done
else
	echo "no erofs-utils fsck.erofs at $REF_FSCK: second reader skipped"
fi

# bad arguments: named, nothing written
for bad in foo. user. system.posix_acl_access.x "user.$(head -c 260 /dev/zero | tr '\0' a)"; do
	rm -f "$WORK/bad.img"
	if "$OUR_MKFS" --quiet --xattr-prefix="$bad" "$WORK/bad.img" "$SRC" >"$WORK/bad.log" 2>&1 ||
		[ -e "$WORK/bad.img" ] || ! grep -q -- "--xattr-prefix" "$WORK/bad.log"; then
		fail "--xattr-prefix=${bad:0:20}: not refused cleanly: $(head -1 "$WORK/bad.log")"
	else
		pass "--xattr-prefix=${bad:0:20}...: refused"
	fi
done
many=()
for i in $(seq 0 128); do many+=(--xattr-prefix=user.p$i.); done
"$OUR_MKFS" --quiet "${many[@]}" "$WORK/bad.img" "$SRC" >"$WORK/many.log" 2>&1 &&
	fail "129 prefixes accepted" || pass "129 prefixes refused: $(head -1 "$WORK/many.log")"

# damaged: a prefix index beyond the table, and a table past the image
cp "$WORK/plain.img" "$WORK/short.img"
IMG=$WORK/short.img
wr $((1024 + 0x5B)) 1 1
sb_nocsum
"$FSCK" "$IMG" >"$WORK/short.log" 2>&1
rc=$?
if [ "$have_trusted" = 1 ]; then
	fsck_failed_as short "fsck: an entry under prefix 1 of a 1-prefix table is an error" $rc \
		"$WORK/short.log" "long prefix 1" "has 1"
else
	echo "no trusted xattrs here: the index-beyond-table case is not reached"
fi
cp "$WORK/plain.img" "$WORK/far.img"
IMG=$WORK/far.img
wr $((1024 + 0x5C)) 4 $((0x7FFFFFF0))
sb_nocsum
"$FSCK" "$IMG" >"$WORK/far.log" 2>&1
fsck_failed_as far "fsck: a prefix table beyond the image is an error" $? "$WORK/far.log" \
	"xattr prefix table"
finish
