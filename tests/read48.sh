#!/bin/bash
# Our readers on erofs-utils 1.9.4's 48-bit images (-E48bit, Linux 6.15)
# and metadata compression (-m, the metabox, Linux 6.17), in every layout
# its mkfs.erofs makes with them (../shared/anchors; skipped without it):
# plain and chunked files, 1 KiB and 2 KiB blocks, LZ4, LZ4HC, MicroLZMA,
# DEFLATE and zstd with pclusters up to 1 MiB (encoded extent records),
# ztailpacking, fragments, dedupe, directories without ".", shared xattrs,
# long xattr prefixes, a --blobdev device, metaboxes of several cluster
# sizes and algorithms.  For each image:
#   - fsck.erofs -p finds nothing and names the kernel it needs;
#   - fsck.erofs --extract gives the source tree (contents, owners, modes,
#     mtimes, xattrs; erofs-utils' own fsck.erofs reads FLAT_PLAIN files
#     without a block as empty, so it is no reference here);
#   - dump.erofs -s, -S and --path -e/--ls print erofs-utils' lines;
#   - the walk through lib/fsops/fsops.c (erofsfuse's operations) gives the tree.
. "$(dirname "$0")/fsck-common.sh"
. "$top_srcdir/tests/dump-views.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (devices, owners, trusted xattrs)"
REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}
[ -x "$REF/mkfs.erofs" ] && [ -x "$REF/dump.erofs" ] ||
	skip "no erofs-utils 1.9.4 in $REF (../shared/anchors)"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
FSOPS=$top_builddir/tools/erofs-fsops-manifest
export TZ=UTC

src=$WORK/src
bash "$top_srcdir/tests/gen-tree.sh" "$src" >"$WORK/gen-tree.log" 2>&1 ||
	{ fail "tests/gen-tree.sh failed: $(tail -2 "$WORK/gen-tree.log")"; finish; }
# the big random and sparse files would only cost LZMA seconds per layout
rm -f "$src/sizes/random-3m" "$src/same/a/copy" "$src/same/b/copy" "$src/sizes/sparse-100m"
truncate -s 5M "$src/sizes/sparse-5m"
printf 'middle' | dd of="$src/sizes/sparse-5m" bs=1 seek=3000000 conv=notrunc status=none
# erofs-utils 1.9.4 keeps a 1960s mtime in a compact 48-bit inode, as
# mtime - epoch cut to 32 bits: Linux and both fscks read 2096, not 1960
rm "$src/times/before-1970"
# names under a long prefix (--xattr-prefix below)
setfattr -n trusted.overlay.redirect -v /elsewhere "$src/xattrs/trusted"
setfattr -n user.foo.bar -v long-prefixed "$src/sizes/f100"
# compact 48-bit inodes keep whole seconds (mtime - epoch): so does the source
python3 - "$src" <<'EOF'
import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for n in dirs + files + ([] if d != sys.argv[1] else ['.']):
        p = os.path.join(d, n)
        st = os.lstat(p)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns // 10**9 * 10**9), follow_symlinks=False)
EOF
"$MANIFEST" "$src" >"$WORK/src.manifest" || { fail "manifest of the source tree"; finish; }
# dump views: every path but 99% of the big directory and names/ (dump.erofs
# shows control characters raw, ours escaped: tests/dump-erofs-utils.sh)
(cd "$src" && find . -path ./names -prune -o -print | sed -e 's|^\.||' -e 's|^$|/|' |
	grep -v '^/big-dir/.*[0-8][0-9]$') >"$WORK/paths"

chunks_in_metabox=
ext_lines() {
	if [ -n "$chunks_in_metabox" ]; then sed -E '/^[[:space:]]+[0-9]+:[[:space:]]/d'; else cat; fi
}

# dump_parity LABEL IMAGE: -s, -S and every listed path's -e (and --ls)
dump_parity() {
	local label=$1 img=$2 o p same=0 diffs=0 note=
	# erofs-utils 1.9.4 reads the chunk indexes of inodes in the metabox
	# from the image instead of the metabox (its fsck extracts wrong bytes
	# and its dump.erofs shows wrong blocks; ours match the source, above):
	# their extent lines are no reference there
	[ -z "$chunks_in_metabox" ] || note=" (extent lines left out: chunk indexes in the metabox)"
	for o in -s -S; do
		# shellcheck disable=SC2086
		if diff <("$REF/dump.erofs" $o "$img" 2>&1) <("$DUMP" $o "$img" 2>&1 | ours_only) \
			>"$WORK/diff" 2>&1; then
			same=$((same + 1))
		else
			diffs=$((diffs + 1))
			fail "$label: dump.erofs $o differs:"
			head -12 "$WORK/diff" >&2
		fi
	done
	dump_views "$REF/dump.erofs" "$img" "$src" "$WORK/paths" | ext_lines >"$WORK/ref.views"
	dump_views "$DUMP" "$img" "$src" "$WORK/paths" | ours_only | ext_lines >"$WORK/ours.views"
	compare_views "$label" "$WORK/ref.views" "$WORK/ours.views"
	same=$((same + $(wc -l <"$WORK/paths") - views_differ))
	diffs=$((diffs + views_differ))
	[ "$diffs" -eq 0 ] && pass "$label: dump.erofs, $same views as erofs-utils prints them$note"
}

# check LABEL KERNEL MKFS-OPTIONS...: the image erofs-utils makes, read every way
check() {
	local label=$1 kernel=$2 img=$WORK/img dev=() fsops=yes
	shift 2
	rm -f "$img" "$WORK/blob"
	if ! "$REF/mkfs.erofs" --quiet "$@" "$img" "$src" >"$WORK/mkfs.log" 2>&1; then
		fail "$label: erofs-utils' mkfs.erofs $*: $(tail -1 "$WORK/mkfs.log")"
		return
	fi
	if [ -e "$WORK/blob" ]; then
		dev=(--device="$WORK/blob")
		fsops=	# erofsfuse refuses multi-device images
	fi
	if "$FSCK" -p "${dev[@]}" "$img" >"$WORK/fsck.log" 2>&1 && ! grep -q warning "$WORK/fsck.log" &&
		grep -q "needs Linux $kernel" "$WORK/fsck.log"; then
		pass "$label: fsck.erofs -p finds nothing, needs Linux $kernel"
	else
		fail "$label: fsck.erofs -p: $(grep -m3 -E 'error|warning|kernel' "$WORK/fsck.log")"
	fi
	rm -rf "$WORK/out" "$WORK/ref"
	if ! "$FSCK" "${dev[@]}" --extract="$WORK/out" "$img" >"$WORK/x.log" 2>&1; then
		fail "$label: extraction: $(grep -m3 -E 'error|warning' "$WORK/x.log")"
	elif "$MANIFEST" "$WORK/out" | diff -u "$WORK/src.manifest" - >"$WORK/$label.diff"; then
		pass "$label: the extracted tree matches the source"
	else
		fail "$label: the extracted tree differs:"
		head -10 "$WORK/$label.diff" | cut -c1-200 >&2
	fi
	rm -rf "$WORK/out" "$WORK/ref"
	[ -n "${dev[*]}" ] || dump_parity "$label" "$img"
	if [ -n "$fsops" ] && [ -x "$FSOPS" ]; then
		if timeout 300 "$FSOPS" --cache=200000 "$img" >"$WORK/fsops.manifest" 2>"$WORK/fsops.err" &&
			diff -u "$WORK/src.manifest" "$WORK/fsops.manifest" >"$WORK/$label.fsops.diff"; then
			pass "$label: erofsfuse's operations walk the source tree"
		else
			fail "$label: erofsfuse's operations: $(head -2 "$WORK/fsops.err") $(sed -n 4,5p "$WORK/$label.fsops.diff" | cut -c1-160)"
		fi
	fi
}

check 48bit 6.15 -E48bit
check 48bit-1k-blocks 6.15 -E48bit -b 1024
check 48bit-chunks 6.15 -E48bit --chunksize=8192
check 48bit-blobdev 6.15 -E48bit --chunksize=4096 --blobdev="$WORK/blob"
check 48bit-lz4 6.15 -E48bit -zlz4
check 48bit-lz4hc-1m 6.15 -E48bit -zlz4hc,12 -C1048576
check 48bit-lz4-2k-blocks 6.15 -E48bit -b 2048 -zlz4hc -C16384
check 48bit-lzma 6.15 -E48bit -zlzma,9 -C1048576
check 48bit-deflate 6.15 -E48bit -zdeflate -C65536
check 48bit-zstd 6.15 -E48bit -zzstd -C65536
check 48bit-ztailpacking 6.15 -E48bit -zlz4hc -Eztailpacking
check 48bit-fragments 6.15 -E48bit -zlz4hc -C65536 -Efragments,ztailpacking
check 48bit-all-fragments 6.15 -E48bit -zzstd -Eall-fragments
check 48bit-dedupe 6.15 -E48bit -zlz4hc -C16384 -Ededupe
check 48bit-dot-omitted 6.15 -E48bit,dot-omitted -zlz4
check 48bit-xattrs 6.15 -E48bit -x1 --xattr-prefix=user.foo. --xattr-prefix=trusted.overlay.
check metabox 6.17 -m4096
check metabox-lz4hc 6.17 -zlz4hc -m4096
check metabox-zstd-lzma 6.17 -E48bit,dot-omitted -zzstd -C65536 -m16384:lzma
check metabox-fragments 6.17 -zlz4hc -Efragments,ztailpacking -m4096
chunks_in_metabox=yes check metabox-chunks 6.17 --chunksize=4096 -zlz4 -C16384 -m8192:lzma
check metabox-1k-blocks 6.17 -b 1024 -zlz4 -m1024
check metabox-xattrs 6.17 -zdeflate -x1 --xattr-prefix=trusted.overlay. -m4096
finish
