#!/bin/bash
# The per-inode xattr name filter (COMPAT_XATTR_FILTER, read by Linux 6.6+):
# on by default, off with -E^xattr-name-filter, its bits computed here by an
# independent xxh32 (the format fixes them), equal to erofs-utils 1.9.4's
# where present, and a filter that hides a present xattr is an fsck error
# (such an image loses that xattr on 6.6+ kernels).
. "$(dirname "$0")/fsck-common.sh"
[ -x "$OUR_MKFS" ] || skip "mkfs.erofs not built"
command -v python3 >/dev/null || skip "python3 missing"
setfattr -n user.probe -v 1 "$WORK" 2>/dev/null || skip "the scratch filesystem has no user xattrs"

SRC=$WORK/src
mkdir -p "$SRC/d"
printf 'a' >"$SRC/a"; printf 'b' >"$SRC/b"; printf 'c' >"$SRC/d/c"
setfattr -n user.mime_type -v text/plain "$SRC/a"
setfattr -n user.k -v v "$SRC/a"
setfattr -n trusted.overlay.opaque -v y "$SRC/d" 2>/dev/null || true
setfattr -n security.selinux -v "u:object_r:system_file:s0" "$SRC/b"
setfattr -n user.shared -v same "$SRC/a"
setfattr -n user.shared -v same "$SRC/b"
setfattr -n user.shared -v same "$SRC/d/c"	# three times: in the shared area
NOX=$WORK/nox
mkdir -p "$NOX"; printf 'x' >"$NOX/x"

# xattrs of PATH as "index suffix" lines, from the source (the expected filter input)
names_of() {
	getfattr -m - --absolute-names -d "$1" 2>/dev/null | sed -n 's/^\([a-z]*\)\.\([^=]*\)=.*/\1 \2/p'
}

# expected filter word of PATH: ~(OR of 1 << (xxh32(suffix, seed + index) & 31))
expected_filter() {
	names_of "$1" | python3 -c '
import sys
P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
M = 0xFFFFFFFF
rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & M
def xxh32(b, seed):
    n, i = len(b), 0
    if n >= 16:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 16 <= n:
            for k in range(4):
                w = int.from_bytes(b[i:i + 4], "little"); i += 4
                v[k] = (rotl((v[k] + w * P2) & M, 13) * P1) & M
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 4 <= n:
        h = (rotl((h + int.from_bytes(b[i:i + 4], "little") * P3) & M, 17) * P4) & M
        i += 4
    while i < n:
        h = (rotl((h + b[i] * P5) & M, 11) * P1) & M
        i += 1
    h ^= h >> 15; h = (h * P2) & M; h ^= h >> 13; h = (h * P3) & M; h ^= h >> 16
    return h
index = {"user": 1, "trusted": 4, "security": 6}
mask = 0
for line in sys.stdin:
    ns, suffix = line.rstrip("\n").split(" ", 1)
    mask |= 1 << (xxh32(suffix.encode(), 0x25BBE08F + index[ns]) & 31)
print(~mask & 0xFFFFFFFF)'
}

filter_of() { # IMAGE PATH: the first word of the inode's xattr ibody
	local io fmt
	IMG=$1
	io=$(ino_off "$(nid_path "$2")")
	fmt=$(rd "$io" 2)
	rd $((io + ((fmt & 1) ? 64 : 32))) 4
}

IMG=$WORK/on.img
mkfs_or_fail on "$IMG" "$SRC" -T 0 || finish
[ $(($(rd 1032 4) & 4)) -ne 0 ] && pass "default: COMPAT_XATTR_FILTER set" ||
	fail "default: COMPAT_XATTR_FILTER missing (compat $(rd 1032 4))"
for p in a b d d/c; do
	want=$(expected_filter "$SRC/$p") got=$(filter_of "$WORK/on.img" "/$p")
	[ "$got" = "$want" ] && pass "/$p: filter $got as computed here" ||
		fail "/$p: filter $got, computed here $want"
done
"$FSCK" "$WORK/on.img" >"$WORK/on.fsck" 2>&1 && pass "fsck: the filtered image is clean" ||
	fail "fsck on the filtered image: $(head -2 "$WORK/on.fsck")"

IMG=$WORK/off.img
mkfs_or_fail off "$IMG" "$SRC" -T 0 -E^xattr-name-filter || finish
[ $(($(rd 1032 4) & 4)) -eq 0 ] && [ "$(filter_of "$IMG" /a)" = 0 ] &&
	pass "-E^xattr-name-filter: no compat bit, zero filters" ||
	fail "-E^xattr-name-filter: compat $(rd 1032 4), /a filter $(filter_of "$IMG" /a)"

IMG=$WORK/nox.img
mkfs_or_fail nox "$IMG" "$NOX" -T 0 || finish
[ $(($(rd 1032 4) & 4)) -eq 0 ] && pass "no xattrs: no compat bit (as erofs-utils)" ||
	fail "no xattrs: compat $(rd 1032 4) has the filter bit"

# the filter bit of security.selinux set on /b (whose other xattr, user.shared,
# is /d/c's only one): fsck must name exactly that xattr
fb=$(filter_of "$WORK/on.img" /b) fc=$(filter_of "$WORK/on.img" /d/c)
selinux_bit=$((~fb & fc & 0xFFFFFFFF))
[ "$selinux_bit" -ne 0 ] || fail "test tree: security.selinux and user.shared share a filter bit"
cp "$WORK/on.img" "$WORK/bad.img"
IMG=$WORK/bad.img
io=$(ino_off "$(nid_path /b)")
off=$((io + (($(rd "$io" 2) & 1) ? 64 : 32)))
wr "$off" 4 $((fb | selinux_bit))
sb_nocsum
"$FSCK" "$IMG" >"$WORK/bad.log" 2>&1
fsck_failed_as bad "fsck: a filter hiding security.selinux is an error naming it" $? "$WORK/bad.log" \
	"/b" "security.selinux" "name filter"
# the same bits are harmless when the superblock does not claim the filter
wr 1032 4 $(($(rd 1032 4) & ~4))
"$FSCK" "$IMG" >"$WORK/bad2.log" 2>&1 && pass "fsck: filter words ignored without the compat bit" ||
	fail "fsck without the compat bit: $(head -2 "$WORK/bad2.log")"

# erofs-utils 1.9.4 writes the same words
REF_MKFS=${REF_MKFS:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs}
if [ -x "$REF_MKFS" ]; then
	"$REF_MKFS" --quiet -T 0 "$WORK/ref.img" "$SRC" >/dev/null 2>&1 || fail "erofs-utils mkfs"
	for p in a b d d/c; do
		r=$(filter_of "$WORK/ref.img" "/$p") o=$(filter_of "$WORK/on.img" "/$p")
		[ "$r" = "$o" ] && pass "/$p: filter equal to erofs-utils 1.9.4's" ||
			fail "/$p: ours $o, erofs-utils $r"
	done
else
	echo "no erofs-utils mkfs.erofs at $REF_MKFS: comparison skipped"
fi
finish
