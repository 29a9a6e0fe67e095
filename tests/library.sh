#!/bin/bash
# liberofs-forge as a user gets it: `make install DESTDIR=...`, then
# programs compiled with the installed header and `pkg-config --cflags
# --libs erofs-forge` and run against the installed shared library:
#   - docs/erofs-ls.c (the example) lists each image's tree, and the
#     listing equals one made from the source tree (type, size, mode,
#     owner, path, symlink target);
#   - tests/library-check.c reads every file through the public calls
#     (lookup, stat, read in uneven pieces, extents, xattrs, readlink)
#     and compares with the source, for plain, inline, compressed,
#     fragment, chunked, 48-bit and metabox layouts and an image at an
#     offset;
#   - the library exports the eforge_* calls and nothing else;
#   - damaged images give exit status 1 and a message, never a crash.
. "$(dirname "$0")/lib.sh"

require_root
command -v pkg-config >/dev/null || { echo "$test_name: pkg-config not installed; skipped"; exit 77; }
CC=${CC:-cc}

dest=$WORK/dest
if ! make -s -C "$top_builddir" install DESTDIR="$dest" >"$WORK/install.log" 2>&1; then
	fail "make install DESTDIR=...: $(tail -3 "$WORK/install.log")"
	finish
fi
pc=$(find "$dest" -name erofs-forge.pc | head -1)
lib=$(find "$dest" -name 'liberofs-forge.so.*' -type f | head -1)
hdr=$(find "$dest" -path '*/erofs-forge/erofs-forge.h' | head -1)
[ -n "$pc" ] && [ -n "$lib" ] && [ -n "$hdr" ] ||
	{ fail "install lacks the .pc ($pc), the library ($lib) or the header ($hdr)"; finish; }
pass "installed $(basename "$lib"), $(basename "$hdr"), $(basename "$pc")"

# the .pc names the installed paths; the sysroot puts them under DESTDIR
flags=$(PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest \
	pkg-config --cflags --libs erofs-forge) || { fail "pkg-config erofs-forge"; finish; }
case "$flags" in *"-I$dest"*"-L$dest"*|*"-L$dest"*"-I$dest"*) pass "pkg-config: $flags" ;;
	*) fail "pkg-config does not point into the install: $flags" ;; esac
export LD_LIBRARY_PATH=$(dirname "$lib")
for prog in docs/erofs-ls tests/library-check; do
	# shellcheck disable=SC2086
	if ! $CC -std=gnu11 -Wall -Wextra -Werror -o "$WORK/$(basename "$prog")" \
		"$top_srcdir/$prog.c" $flags 2>"$WORK/cc.log"; then
		fail "$prog.c does not build against the install: $(head -5 "$WORK/cc.log")"
		finish
	fi
done
ldd "$WORK/erofs-ls" >"$WORK/ldd.out" 2>&1 || true
grep -q "liberofs-forge.so.0 => $(dirname "$lib")/" "$WORK/ldd.out" &&
	pass "erofs-ls runs on the installed library" ||
	fail "erofs-ls is not linked to the installed library: $(grep erofs-forge "$WORK/ldd.out")"

# only the public calls are exported
nm -D --defined-only "$lib" | awk '{print $3}' | sort >"$WORK/exports"
grep -v '^eforge_' "$WORK/exports" >"$WORK/other-exports" || true
if [ -s "$WORK/other-exports" ]; then
	fail "the library exports more than eforge_*: $(head -5 "$WORK/other-exports" | tr '\n' ' ')"
else
	pass "exports: $(wc -l <"$WORK/exports") eforge_* calls, nothing else"
fi
for f in eforge_open eforge_close eforge_lookup eforge_readdir eforge_stat eforge_read \
	eforge_listxattr eforge_extents eforge_super eforge_needs_linux; do
	grep -qx "$f" "$WORK/exports" || fail "$f is not exported"
done

# every exported call is documented in man/erofs-forge.3
sed -n '/^\.SH NAME/,/^\.SH SYNOPSIS/p' "$top_srcdir/man/erofs-forge.3" |
	grep -o 'eforge_[a-z_]*' | sort -u >"$WORK/documented"
if cmp -s "$WORK/exports" "$WORK/documented"; then
	pass "man/erofs-forge.3 names every exported call"
else
	fail "exports and man/erofs-forge.3 differ: $(diff "$WORK/exports" "$WORK/documented" | grep '^[<>]' | tr '\n' ' ')"
fi

TREE=$WORK/tree
bash "$GEN_TREE" "$TREE" >"$WORK/gen-tree.log" 2>&1 || { fail "gen-tree.sh failed"; finish; }
rm -f "$TREE/sizes/sparse-100m"

# erofs-ls's listing, made from the source tree: depth first, names in byte order
expected_listing() {
	python3 - "$1" <<'PY'
import os, stat, sys
root = sys.argv[1]
def t(m):
    return {stat.S_IFDIR: 'd', stat.S_IFLNK: 'l', stat.S_IFCHR: 'c', stat.S_IFBLK: 'b',
            stat.S_IFIFO: 'p', stat.S_IFSOCK: 's'}.get(stat.S_IFMT(m), '-')
def walk(src, path):
    st = os.lstat(src)
    size = 'DIR' if stat.S_ISDIR(st.st_mode) else str(st.st_size)
    line = f'{t(st.st_mode)} {size} {stat.S_IMODE(st.st_mode):04o} {st.st_uid}:{st.st_gid} {path}'
    if stat.S_ISLNK(st.st_mode):
        line += ' -> ' + os.readlink(src)
    sys.stdout.write(line + '\n')
    if stat.S_ISDIR(st.st_mode):
        for name in sorted(os.listdir(src), key=os.fsencode):
            walk(os.path.join(src, name), (path.rstrip('/') + '/' + name))
walk(root, '/')
PY
}
expected_listing "$TREE" >"$WORK/expected.ls"

layouts=("plain:" "lz4hc:-zlz4hc" "lz4-ztail:-zlz4 -C16384 -Eztailpacking"
	"fragments:-zlz4hc -Efragments,ztailpacking" "chunks:--chunksize=8192"
	"zstd:-zzstd -C65536" "deflate-b1k:-zdeflate -b 1024" "48bit:-zlzma -E48bit"
	"metabox:-m 4096 -zlz4hc" "noinline:-Enoinline_data")
for l in "${layouts[@]}"; do
	name=${l%%:*} opts=${l#*:}
	img=$WORK/$name.img
	# shellcheck disable=SC2086
	if ! "$MKFS" $opts -T 100000 -U 6c1dd7b6-8f3a-4c50-9b6e-7f3c5a1e0d21 --quiet "$img" "$TREE" \
		>"$WORK/$name.mkfs.log" 2>&1; then
		fail "$name: mkfs.erofs $opts: $(tail -2 "$WORK/$name.mkfs.log")"
		continue
	fi
	if "$WORK/erofs-ls" "$img" >"$WORK/$name.ls" 2>"$WORK/$name.ls.err"; then
		# directory sizes are the image's own
		sed -E 's/^d [0-9]+ /d DIR /' "$WORK/$name.ls" >"$WORK/$name.ls.cmp"
		if diff -u "$WORK/expected.ls" "$WORK/$name.ls.cmp" >"$WORK/$name.ls.diff"; then
			pass "$name: erofs-ls lists the tree ($(wc -l <"$WORK/$name.ls") inodes)"
		else
			fail "$name: erofs-ls listing differs: $(head -8 "$WORK/$name.ls.diff" | tr '\n' '|')"
		fi
	else
		fail "$name: erofs-ls failed: $(head -3 "$WORK/$name.ls.err")"
	fi
	if "$WORK/library-check" "$img" "$TREE" >"$WORK/$name.check" 2>&1; then
		pass "$name: $(tail -1 "$WORK/$name.check")"
	else
		fail "$name: $(grep -m5 problem "$WORK/$name.check" | tr '\n' '|')"
	fi
done

# eforge_open_flags() on a multi-device image: all devices, or none on purpose
"$MKFS" --quiet --chunksize=4096 --blobdev="$WORK/blob.dev" "$WORK/blob.img" "$TREE"
blobfile=$(cd "$TREE" && find . -type f -size +8k | LC_ALL=C sort | head -1)
if "$WORK/library-check" --devices "$WORK/blob.img" "$WORK/blob.dev" "${blobfile#.}" \
	>"$WORK/devices.check" 2>&1; then
	pass "eforge_open_flags: $(tr '\n' '|' <"$WORK/devices.check")"
else
	fail "eforge_open_flags: $(grep problem "$WORK/devices.check" | tr '\n' '|')"
fi

# an image inside a bigger file, opened with an offset
{ head -c 12345 /dev/urandom; cat "$WORK/lz4hc.img"; head -c 999 /dev/urandom; } >"$WORK/offset.bin"
if "$WORK/library-check" "$WORK/offset.bin" "$TREE" --offset=12345 >"$WORK/offset.check" 2>&1; then
	pass "--offset: $(tail -1 "$WORK/offset.check")"
else
	fail "--offset: $(grep -m3 problem "$WORK/offset.check" | tr '\n' '|')"
fi
if "$WORK/erofs-ls" "$WORK/lz4hc.img" /sizes/no-such-file >/dev/null 2>"$WORK/enoent.err"; then
	fail "a missing path listed"
elif grep -q "/sizes/no-such-file: .*no such file" "$WORK/enoent.err"; then
	pass "a missing path: $(cat "$WORK/enoent.err")"
else
	fail "a missing path: no clear message: $(cat "$WORK/enoent.err")"
fi

# damaged images: a message and exit status 1, never a signal
python3 - "$WORK/fragments.img" "$WORK/damaged" <<'PY'
import random, sys
data = open(sys.argv[1], 'rb').read()
rng = random.Random(25)
for i in range(40):
    b = bytearray(data)
    if i < 8:
        b = b[:rng.randrange(1024, len(b))]            # truncated
    else:
        for _ in range(rng.randrange(1, 64)):           # bytes flipped in the metadata
            b[rng.randrange(1024, min(len(b), 1 << 16))] = rng.randrange(256)
    open(f'{sys.argv[2]}-{i}.img', 'wb').write(bytes(b))
PY
crashes=0 clean=0 refused=0
for img in "$WORK"/damaged-*.img; do
	rc=0
	timeout 60 "$WORK/erofs-ls" "$img" >/dev/null 2>"$WORK/damaged.err" || rc=$?
	if [ "$rc" -eq 0 ]; then
		clean=$((clean + 1))
	elif [ "$rc" -eq 1 ] && [ -s "$WORK/damaged.err" ]; then
		refused=$((refused + 1))
	else
		crashes=$((crashes + 1))
		fail "$(basename "$img"): erofs-ls exit status $rc: $(head -2 "$WORK/damaged.err")"
	fi
done
[ "$crashes" -eq 0 ] && pass "40 damaged images: $refused refused with a message, $clean still listed, no crash"
[ "$refused" -gt 0 ] || fail "no damaged image was refused: the damage did not reach the reader"

finish
