#!/bin/bash
# --xattr-inode-digest[=NAME] (erofs-utils 1.9.4): every non-empty regular
# file gets NAME ("erofs.fingerprint.v1" by default) = "sha256:" and the 32
# raw bytes of the SHA-256 of its bytes, inline, under a long xattr prefix
# of its own that follows the --xattr-prefix ones; the superblock sets
# COMPAT_ISHARE_XATTRS and ishare_xattr_prefix_id (Linux 7.0 shares page
# cache by it).  Checked here: the superblock and prefix table bytes, the
# digest of every file against sha256sum in every data layout, --workers
# and reproducibility, our fsck catching a flipped data byte by path,
# erofs-utils' fsck and dump reading our image and its own image giving
# the same xattrs, and bad arguments refused.
. "$(dirname "$0")/fsck-common.sh"
[ -x "$OUR_MKFS" ] || skip "mkfs.erofs not built"
command -v sha256sum >/dev/null || skip "sha256sum not found"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}

SRC=$WORK/src
mkdir -p "$SRC/sub/deep"
printf 'hello world\n' >"$SRC/a"
head -c 10000 /dev/urandom >"$SRC/b"
ln "$SRC/b" "$SRC/b.link"
: >"$SRC/empty"
ln -s a "$SRC/sym"
printf x >"$SRC/sub/c"
for i in 1 2 3 4; do echo same >"$SRC/sub/same$i"; done
seq 1 60000 >"$SRC/sub/deep/seq"			# compressible, 339 KiB
head -c 300000 /dev/urandom >"$SRC/sub/deep/rand"	# several pclusters, raw
has_user_xattrs=0
setfattr -n user.probe -v 1 "$SRC/a" 2>/dev/null && has_user_xattrs=1
[ "$has_user_xattrs" -eq 1 ] && setfattr -n user.other -v v "$SRC/sub/c"
touch -d @1700000000 "$SRC" "$SRC"/* "$SRC"/sub/* "$SRC"/sub/deep/*
FILES=(a b sub/c sub/same1 sub/same4 sub/deep/seq sub/deep/rand)

# digest_of IMAGE PATH NAME: the hex of NAME's value as our dump shows it ("" if none)
digest_of() {
	"$DUMP" -x --path="$2" "$1" 2>/dev/null | python3 -c '
import re, sys
name = sys.argv[1]
for line in sys.stdin:
    m = re.match(r"^(inline|shared)\s+(\S+?)=\"(.*)\"$", line.rstrip("\n"))
    if not m or m.group(2) != name:
        continue
    raw = re.sub(r"\\([0-7]{3})", lambda o: chr(int(o.group(1), 8)), m.group(3))
    data = raw.encode("latin-1")
    print(data[:7].decode("latin-1") + data[7:].hex())
' "$3"
}

# check_digests LABEL IMAGE NAME: every file's digest is sha256sum's, none elsewhere
check_digests() {
	local label=$1 img=$2 name=$3 f want got bad=0
	for f in "${FILES[@]}"; do
		want="sha256:$(sha256sum <"$SRC/$f" | cut -d' ' -f1)"
		got=$(digest_of "$img" "/$f" "$name")
		[ "$got" = "$want" ] || { bad=1; fail "$label: /$f: digest '$got', sha256sum says $want"; }
	done
	for f in empty sym sub sub/deep; do
		got=$(digest_of "$img" "/$f" "$name")
		[ -z "$got" ] || { bad=1; fail "$label: /$f has a digest: $got"; }
	done
	[ "$bad" -eq 0 ] && pass "$label: each file's $name is sha256sum's; empty files, symlinks, dirs have none"
	"$FSCK" "$img" >"$WORK/$label.fsck" 2>&1 && pass "$label: our fsck checks every digest" ||
		fail "$label: fsck: $(head -2 "$WORK/$label.fsck")"
}

IMG=$WORK/plain.img
mkfs_or_fail plain "$IMG" "$SRC" -T0 -Uclear --xattr-inode-digest || finish
compat=$(rd 1032 4) incompat=$(rd $((1024 + 0x50)) 4)
[ $((compat & 0x30)) -eq $((0x30)) ] && [ $((incompat & 0x40)) -ne 0 ] &&
	[ "$(rd $((1024 + 0x5B)) 1)" -eq 1 ] && [ "$(rd $((1024 + 0x69)) 1)" -eq 0 ] &&
	pass "superblock: COMPAT_ISHARE_XATTRS and PLAIN_XATTR_PFX, INCOMPAT_XATTR_PREFIXES, 1 prefix, ishare id 0" ||
	fail "superblock: compat $compat incompat $incompat count $(rd $((1024 + 0x5B)) 1) id $(rd $((1024 + 0x69)) 1)"
start=$(rd $((1024 + 0x5C)) 4)
got=$(od -An -v -tx1 -j $((start * 4)) -N 24 "$IMG" | tr -d ' \n')
# u16 21, base index 0 (no namespace), the whole name, padded to 4
want=150000$(printf erofs.fingerprint.v1 | od -An -tx1 | tr -d ' \n')00
[ "$got" = "$want" ] && pass "prefix table: exact bytes (base index 0, the whole name)" ||
	fail "prefix table at $((start * 4)): $got, want $want"
check_digests plain "$IMG" erofs.fingerprint.v1
# inline, 12-byte ibody header + a 4-byte entry of no name + 39 bytes, padded: 56
io=$(ino_off "$(nid_path /sub/same1)")
[ "$(rd $((io + 2)) 2)" -eq 12 ] && pass "identical digests stay inline (xattr_icount 12), never shared" ||
	fail "/sub/same1: xattr_icount $(rd $((io + 2)) 2)"
grep -q "ishare_xattrs" <("$DUMP" -s "$IMG") && pass "dump -s names the ishare_xattrs feature" ||
	fail "dump -s: no ishare_xattrs"

# a flipped data byte: our fsck names the file
cp "$IMG" "$WORK/bad.img"
off=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); b=open(sys.argv[2],"rb").read(4096); print(d.find(b))' "$IMG" "$SRC/b")
if [ "$off" -gt 0 ]; then
	IMG=$WORK/bad.img
	wr $((off + 5000)) 1 $(($(rd $((off + 5000)) 1) ^ 1))
	"$FSCK" "$IMG" >"$WORK/bad.log" 2>&1
	fsck_failed_as bad "a flipped data byte: fsck names /b and the digest mismatch" $? "$WORK/bad.log" \
		"/b " "content digest mismatch"
	IMG=$WORK/plain.img
else
	fail "cannot find /b's bytes in the image"
fi

# every layout: compressed (with fragments, dedupe, ztailpacking), chunked, tar
mkfs_or_fail lz4hc "$WORK/lz4hc.img" "$SRC" -T0 -zlz4hc -C16384 -Eztailpacking --xattr-inode-digest &&
	check_digests lz4hc "$WORK/lz4hc.img" erofs.fingerprint.v1
mkfs_or_fail frag "$WORK/frag.img" "$SRC" -T0 -zzstd -Eall-fragments,dedupe --xattr-inode-digest &&
	check_digests frag "$WORK/frag.img" erofs.fingerprint.v1
mkfs_or_fail chunks "$WORK/chunks.img" "$SRC" -T0 --chunksize=8192 --xattr-inode-digest &&
	check_digests chunks "$WORK/chunks.img" erofs.fingerprint.v1
tar -C "$SRC" -cf "$WORK/src.tar" .
mkfs_or_fail tar "$WORK/tar.img" "$WORK/src.tar" --tar=f -T0 --xattr-inode-digest &&
	check_digests tar "$WORK/tar.img" erofs.fingerprint.v1
"$OUR_MKFS" --quiet --tar=f -T0 --xattr-inode-digest "$WORK/stdin.img" <"$WORK/src.tar" \
	>"$WORK/stdin.log" 2>&1 && check_digests tar-stdin "$WORK/stdin.img" erofs.fingerprint.v1 ||
	fail "tar on stdin: $(tail -1 "$WORK/stdin.log")"
mkfs_or_fail nox "$WORK/nox.img" "$SRC" -T0 -x-1 --xattr-inode-digest &&
	check_digests "x-1" "$WORK/nox.img" erofs.fingerprint.v1

# a name in a namespace: after the --xattr-prefix ones, seen by getfattr
IMG=$WORK/user.img
mkfs_or_fail user "$IMG" "$SRC" -T0 --xattr-prefix=user.foo. --xattr-inode-digest=user.fp || finish
got=$(od -An -v -tx1 -j $(($(rd $((1024 + 0x5C)) 4) * 4)) -N 16 "$IMG" | tr -d ' \n')
[ "$(rd $((1024 + 0x5B)) 1)" -eq 2 ] && [ "$(rd $((1024 + 0x69)) 1)" -eq 1 ] &&
	[ "$got" = "050001666f6f2e000300016670000000" ] &&
	pass "user.fp: second prefix (ishare id 1), base index 1 (user.), infix fp" ||
	fail "user.fp: count $(rd $((1024 + 0x5B)) 1) id $(rd $((1024 + 0x69)) 1) table $got"
check_digests user "$IMG" user.fp
if [ "$has_user_xattrs" -eq 1 ]; then
	"$FSCK" --extract="$WORK/user.out" "$IMG" >"$WORK/user.x.log" 2>&1 ||
		fail "fsck --extract: $(head -2 "$WORK/user.x.log")"
	v=$(getfattr -h -e hex -n user.fp --only-values "$WORK/user.out/sub/deep/seq" 2>/dev/null | od -An -tx1 | tr -d ' \n')
	[ "$v" = "$(printf sha256: | od -An -tx1 | tr -d ' \n')$(sha256sum <"$SRC/sub/deep/seq" | cut -d' ' -f1)" ] &&
		pass "user.fp: restored by fsck --extract, getfattr reads sha256:<digest>" ||
		fail "user.fp on the extracted file: $v"
fi

# --workers and reproducibility
for w in 1 3; do
	mkfs_or_fail "w$w" "$WORK/w$w.img" "$SRC" -T0 -Uclear -zlz4hc -Efragments --workers=$w \
		--xattr-inode-digest || finish
done
mkfs_or_fail again "$WORK/again.img" "$SRC" -T0 -Uclear -zlz4hc -Efragments --workers=3 \
	--xattr-inode-digest || finish
cmp -s "$WORK/w1.img" "$WORK/w3.img" && cmp -s "$WORK/w3.img" "$WORK/again.img" &&
	pass "byte-identical for --workers=1 and 3, and run again" || fail "images differ across workers or runs"

# an empty NAME is the default name (erofs-utils 1.9.4 reads it so)
mkfs_or_fail empty-name "$WORK/emptyname.img" "$SRC" -T0 -Uclear -zlz4hc -Efragments --workers=1 \
	--xattr-inode-digest= &&
	{ cmp -s "$WORK/w1.img" "$WORK/emptyname.img" &&
		pass "--xattr-inode-digest= (empty): the same image as the bare option" ||
		fail "--xattr-inode-digest= gives another image than the bare option"; }

# bad arguments: exit 1 naming the option, no image
refused_by_name --xattr-inode-digest "--xattr-inode-digest=user.$(printf '%0260d' 0)"

rm -f "$WORK/refused.img"
"$OUR_MKFS" --quiet --max-kernel=6.1 --xattr-inode-digest "$WORK/refused.img" "$SRC" >"$WORK/refused.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q -- "--xattr-inode-digest: .*Linux 6.4" "$WORK/refused.log" && [ ! -e "$WORK/refused.img" ] &&
	pass "--max-kernel=6.1: refused, the digest's long prefix needs Linux 6.4" ||
	fail "--max-kernel=6.1: rc $rc: $(head -1 "$WORK/refused.log")"

# erofs-utils 1.9.4: reads ours; its image of the same tree has the same xattrs
if [ -x "$REF/fsck.erofs" ] && [ -x "$REF/mkfs.erofs" ] && [ -x "$REF/dump.erofs" ]; then
	for img in plain lz4hc frag user; do
		"$REF/fsck.erofs" "$WORK/$img.img" >"$WORK/$img.ref.log" 2>&1 &&
			"$REF/dump.erofs" --path=/sub/deep/seq "$WORK/$img.img" >>"$WORK/$img.ref.log" 2>&1 &&
			pass "$img: erofs-utils 1.9.4 fsck and dump accept it" ||
			fail "$img: erofs-utils: $(tail -1 "$WORK/$img.ref.log")"
	done
	for variant in "plain:" "user:--xattr-prefix=user.foo. --xattr-inode-digest=user.fp" \
		"lz4hc:-zlz4hc -C16384"; do
		label=${variant%%:*} extra=${variant#*:}
		[ "$label" = user ] || extra="$extra --xattr-inode-digest"
		"$REF/mkfs.erofs" --quiet -T0 $extra "$WORK/ref-$label.img" "$SRC" >"$WORK/ref-$label.log" 2>&1 ||
			{ fail "erofs-utils mkfs $label: $(tail -1 "$WORK/ref-$label.log")"; continue; }
		same=1
		for f in "${FILES[@]}" empty sym sub; do
			a=$("$DUMP" -x --path="/$f" "$WORK/$label.img" | sed -n '/^Xattrs:/,$p')
			b=$("$DUMP" -x --path="/$f" "$WORK/ref-$label.img" | sed -n '/^Xattrs:/,$p')
			[ "$a" = "$b" ] || { same=0; fail "$label: /$f: xattrs differ from erofs-utils': $a / $b"; }
		done
		IMG=$WORK/$label.img
		s1="$(rd 1032 4) $(rd $((1024 + 0x5B)) 1) $(rd $((1024 + 0x69)) 1)"
		IMG=$WORK/ref-$label.img
		s2="$(rd 1032 4) $(rd $((1024 + 0x5B)) 1) $(rd $((1024 + 0x69)) 1)"
		[ "$s1" = "$s2" ] || { same=0; fail "$label: compat/prefix count/ishare id $s1, erofs-utils $s2"; }
		[ "$same" -eq 1 ] && pass "$label: same xattrs and superblock bits as erofs-utils 1.9.4's image"
	done
	# the digest among other inline xattrs, sorted as erofs-utils sorts: whole images equal
	mkdir -p "$WORK/few"
	printf 'hi\n' >"$WORK/few/f"
	touch -d @1700000000 "$WORK/few/f" "$WORK/few"
	if [ "$has_user_xattrs" -eq 1 ] && setfattr -n user.a -v 1 "$WORK/few/f" &&
		setfattr -n user.z -v 2 "$WORK/few/f"; then
		for name in "" user.zzz user.m; do
			"$REF/mkfs.erofs" --quiet -T0 -Uclear --xattr-inode-digest${name:+=$name} \
				"$WORK/few-ref.img" "$WORK/few" >"$WORK/few.log" 2>&1 &&
				"$OUR_MKFS" --quiet -T0 -Uclear --xattr-inode-digest${name:+=$name} \
					"$WORK/few-our.img" "$WORK/few" >>"$WORK/few.log" 2>&1 ||
				{ fail "few ${name:-default}: $(tail -1 "$WORK/few.log")"; continue; }
			cmp -s "$WORK/few-ref.img" "$WORK/few-our.img" &&
				pass "digest ${name:-erofs.fingerprint.v1} beside user.a, user.z: byte-identical to erofs-utils'" ||
				fail "digest ${name:-default} beside user.a, user.z: image differs from erofs-utils' ($(cmp "$WORK/few-ref.img" "$WORK/few-our.img" 2>&1))"
		done
	fi
else
	echo "erofs-utils 1.9.4 not in $REF: cross-checks skipped"
fi
finish
