#!/bin/bash
# fsck.erofs on images made by erofs-utils' mkfs.erofs (1.9.4, from
# ../shared/anchors; the test is skipped without it), of every layout it
# makes that Linux 6.1 reads: each one is checked (no error, no warning)
# and extracted, and the extraction must match the source tree: the test
# tree plus a slice of /usr/share/doc (real files: changelogs, copyrights,
# symlinks between packages), with LZ4, MicroLZMA, DEFLATE and zstd.
# 48-bit images and metadata compression are read too (tests/read48.sh
# covers their layouts).
. "$(dirname "$0")/lib.sh"
require_root

REF_MKFS=${REF_MKFS:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs}
if [ ! -x "$REF_MKFS" ]; then
	echo "$test_name: no erofs-utils mkfs.erofs at $REF_MKFS (../shared/anchors); skipped"
	exit 77
fi

BUILD_TIME=1700000000
src=$WORK/src
bash "$GEN_TREE" "$src"
# the big random files cost erofs-utils' LZ4HC seconds each, per layout
rm -f "$src/sizes/random-3m" "$src/same/a/copy" "$src/same/b/copy" "$src/sizes/sparse-100m"
# a slice of /usr/share/doc: whole package folders, in name order, ~8 MB
if [ -d /usr/share/doc ]; then
	mkdir "$src/doc"
	for d in /usr/share/doc/*; do
		cp -a "$d" "$src/doc/"
		[ "$(du -sk "$src/doc" | cut -f1)" -lt 8192 ] || break
	done
fi
# erofs-utils stores an inode whose mtime falls in the build time's second
# in the compact form, at that whole second: the build time is fixed below
# (-T ... --mkfs-time), and the few inodes set to it keep both forms in use
touch -c -h -d @$BUILD_TIME "$src" "$src/doc" "$src/sizes"
"$MANIFEST" "$src" >"$WORK/src.manifest"

# accepted LABEL OPTIONS...: checked clean, extracted like the source
accepted() {
	local label=$1 img=$WORK/img
	shift
	rm -f "$img"
	if ! "$REF_MKFS" --quiet -T "$BUILD_TIME" --mkfs-time "$@" "$img" "$src" >"$WORK/mkfs.log" 2>&1; then
		echo "note: erofs-utils' mkfs.erofs cannot make '$*': $(tail -1 "$WORK/mkfs.log")"
		return
	fi
	if "$FSCK" -p "$img" >"$WORK/fsck.log" 2>&1 && ! grep -q 'warning' "$WORK/fsck.log"; then
		pass "$label: fsck.erofs finds nothing to report"
	else
		fail "$label: fsck.erofs: $(grep -m3 -E 'error|warning' "$WORK/fsck.log")"
	fi
	rm -rf "$WORK/out"
	if ! "$FSCK" --extract="$WORK/out" "$img" >"$WORK/x.log" 2>&1; then
		fail "$label: extraction: $(grep -m3 -E 'error|warning' "$WORK/x.log")"
	elif "$MANIFEST" "$WORK/out" | diff -u "$WORK/src.manifest" - >"$WORK/$label.diff"; then
		pass "$label: the extracted tree matches the source"
	else
		fail "$label: the extracted tree differs:"
		head -10 "$WORK/$label.diff" | cut -c1-200 >&2
	fi
	rm -rf "$WORK/out"
}

accepted plain
accepted 1k-blocks -b 1024
accepted 2k-blocks -b 2048
accepted chunks --chunksize=4096
accepted chunks-1k -b 1024 --chunksize=8192
accepted lz4 -z lz4
accepted lz4hc -z lz4hc
accepted lz4hc-64k -z lz4hc,12 -C 65536
accepted lz4-1m -z lz4 -C 1048576
accepted legacy -z lz4hc -E legacy-compress
accepted legacy-64k -z lz4hc -C 65536 -E legacy-compress
accepted ztail -z lz4hc -E ztailpacking
accepted ztail-legacy-64k -z lz4hc -C 65536 -E ztailpacking,legacy-compress
accepted fragments -z lz4hc -E fragments
accepted fragments-ztail-16k -z lz4hc -C 16384 -E fragments,ztailpacking
accepted all-fragments -z lz4hc -E all-fragments
accepted all-fragments-legacy -z lz4 -C 32768 -E all-fragments,legacy-compress
accepted fragdedupe-inode -z lz4hc -E fragments,fragdedupe=inode
accepted fragdedupe-full -z lz4hc -E fragments,fragdedupe=full
accepted dedupe -z lz4hc -E dedupe
accepted dedupe-fragments-ztail-64k -z lz4hc -C 65536 -E dedupe,fragments,ztailpacking
accepted small-extents -z lz4hc --max-extent-bytes=16384
accepted compressed-dirs -z lz4 --zD=1
accepted lz4-chunks -z lz4 --chunksize=8192

# the other algorithms (issue 14), in the layouts erofs-utils makes with them
accepted lzma -z lzma
accepted lzma-9-64k-ztail -z lzma,9 -C 65536 -E ztailpacking
accepted lzma-fragments-1m -z lzma,level=9,dictsize=1048576 -C 1048576 -E fragments,ztailpacking
accepted deflate -z deflate
accepted deflate-64k-legacy -z deflate,9 -C 65536 -E legacy-compress
accepted deflate-fragments -z deflate -C 65536 -E fragments,ztailpacking
accepted zstd -z zstd
accepted zstd-64k-ztail -z zstd,19 -C 65536 -E ztailpacking
accepted zstd-dedupe-fragments -z zstd -C 65536 -E dedupe,fragments,ztailpacking
accepted lz4hc-lzma -z lz4hc:lzma -C 65536
# compressed data in blocks under 4 KiB (Linux 6.8+)
accepted lz4-1k-blocks -b 1024 -z lz4
# (not with -E ztailpacking: erofs-utils 1.9.4 then writes an incompressible
# file whose tail both its fsck and ours read back wrong)
accepted lz4hc-2k-blocks -b 2048 -z lz4hc -C 16384
accepted lzma-1k-blocks-fragments -b 1024 -z lzma -E fragments
# 48-bit layouts (Linux 6.15) and metadata compression (6.17): tests/read48.sh
finish
