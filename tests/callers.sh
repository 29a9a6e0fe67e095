#!/bin/bash
# The real callers of mkfs.erofs (../shared/reference/callers.md), each with
# its exact argv, in its order, and its input form (standard input, a FIFO,
# a file; a tar or a directory), named after its public source.  Every image
# is extracted by our fsck.erofs and compared with the source tree, its
# "needs Linux" verdict (fsck.erofs -p) checked against the release the
# options need (man/mkfs.erofs.8, KERNEL VERSIONS), and, when ../shared has
# erofs-utils 1.9.4, checked by its fsck.erofs (extracting, diffed) and read
# by its dump.erofs.
. "$(dirname "$0")/lib.sh"
require_root
command -v tar >/dev/null || { echo "$test_name: needs tar; skipped"; exit 77; }
REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}
[ -x "$REF/fsck.erofs" ] && [ -x "$REF/dump.erofs" ] ||
	echo "note: no erofs-utils 1.9.4 in ../shared/anchors: its fsck and dump checks skipped"

# the tree: text and random data, a hard link, a symlink, a device, owners,
# xattrs, an empty directory; whole-second times, as a ustar header keeps them
tree=$WORK/tree
mkdir -p "$tree/usr/bin" "$tree/etc/ssl" "$tree/var/empty" "$tree/usr/share/doc"
seq 1 40000 >"$tree/usr/share/doc/numbers.txt"
head -c 300000 /dev/urandom >"$tree/usr/bin/tool"
cp "$tree/usr/bin/tool" "$tree/usr/bin/tool-copy"
{ seq 1 3000; cat "$tree/usr/share/doc/numbers.txt"; } >"$tree/usr/share/doc/more.txt"
echo 'config=1' >"$tree/etc/app.conf"
ln "$tree/etc/app.conf" "$tree/etc/app.conf.link"
ln -s ../usr/bin/tool "$tree/etc/tool-link"
mknod "$tree/etc/null" c 1 3
chown 1000:1000 "$tree/etc/ssl"
setfattr -n user.origin -v callers "$tree/usr/bin/tool" 2>/dev/null || true
find "$tree" -exec touch -h -d @1700000000 {} +
UUID=6f3c1a2e-7d4b-4c8e-9a1f-2b3c4d5e6f70

# verify NAME IMAGE NEEDS EXPECTED_TREE [our fsck options]: the image holds
# EXPECTED_TREE, needs Linux NEEDS, and erofs-utils reads it
verify() {
	local name=$1 img=$2 needs=$3 want=$4
	shift 4
	if [ ! -s "$img" ]; then
		fail "$name: no image (mkfs: $(tail -1 "$WORK/$name.err"))"
		return
	fi
	ours_extract "$name" "$img" "$want" "$@"
	if "$FSCK" -p "$@" "$img" 2>&1 | grep -q "kernel: *needs Linux $needs\b"; then
		pass "$name: needs Linux $needs"
	else
		fail "$name: $("$FSCK" -p "$@" "$img" 2>&1 | grep 'kernel:'), expected $needs"
	fi
	[ -x "$REF/fsck.erofs" ] || return 0
	rm -rf "$WORK/ref"
	if "$REF/fsck.erofs" --extract="$WORK/ref" --xattrs "$@" "$img" >"$WORK/ref.log" 2>&1; then
		same_manifest "$name-erofs-utils" "$want" "$WORK/ref"
	else
		fail "$name: erofs-utils' fsck: $(tail -1 "$WORK/ref.log")"
	fi
	rm -rf "$WORK/ref"
	"$REF/dump.erofs" "$img" >/dev/null 2>&1 && pass "$name: erofs-utils' dump reads it" ||
		fail "$name: erofs-utils' dump refuses it"
}

# the layer tar as a container runtime writes it (numeric owners, pax xattrs)
tar --numeric-owner --xattrs --format=pax -C "$tree" -cf "$WORK/layer.tar" .

# containerd/containerd internal/erofsutils/mount.go (ConvertTarErofs) with
# the mkfs_options docs/snapshotters/erofs.md recommends (-T0 --mkfs-time):
# the layer on standard input
mkfs.containerd() { "$MKFS" "$@" <"$WORK/layer.tar" 2>"$WORK/containerd-tar.err"; }
mkfs.containerd --tar=f --aufs --quiet -Enoinline_data -b4096 -T0 --mkfs-time -U "$UUID" \
	"$WORK/containerd-tar.erofs"
verify containerd-tar "$WORK/containerd-tar.erofs" 5.4 "$tree"
[ "$(od -An -tu8 -j $((1024 + 0x18)) -N8 "$WORK/containerd-tar.erofs" | tr -d ' ')" = 0 ] &&
	pass "containerd-tar: -T0 --mkfs-time: build time 0, the layer's mtimes kept" ||
	fail "containerd-tar: the build time is not -T0's"

# the same with --sort=none (containerd's docs, erofs-utils >= 1.8.2)
"$MKFS" --tar=f --aufs --quiet -Enoinline_data -b4096 -T0 --mkfs-time --sort=none -U "$UUID" \
	"$WORK/containerd-sort.erofs" <"$WORK/layer.tar" 2>"$WORK/containerd-sort.err"
verify containerd-sort "$WORK/containerd-sort.erofs" 5.4 "$tree"

# containerd, tar-index mode (GenerateTarIndexAndAppendTar): the index on
# standard input, then the raw tar appended to the image file; the tar is
# the extra device (our fsck is given it; erofs-utils' reads the appended one)
"$MKFS" --tar=i --aufs --quiet -b4096 -U "$UUID" "$WORK/containerd-index.erofs" \
	<"$WORK/layer.tar" 2>"$WORK/containerd-index.err"
cat "$WORK/layer.tar" >>"$WORK/containerd-index.erofs"
# (--tar=i forces the tar's 512-byte blocks: Linux 6.4, or 6.1.113 on)
verify containerd-index "$WORK/containerd-index.erofs" 6.4 "$tree" --device="$WORK/layer.tar"
# without --device, our fsck reads the tar where the device table maps it,
# appended to the index, as erofs-utils' fsck checks it
rm -rf "$WORK/appended"
if "$FSCK" --extract="$WORK/appended" "$WORK/containerd-index.erofs" >"$WORK/appended.log" 2>&1; then
	same_manifest containerd-index-appended "$tree" "$WORK/appended"
else
	fail "containerd-index: our fsck without --device: $(tail -1 "$WORK/appended.log")"
fi
if [ -x "$REF/fsck.erofs" ]; then
	# its extraction wants --device even so; its check reads the appended tar
	"$REF/fsck.erofs" "$WORK/containerd-index.erofs" >"$WORK/ref.log" 2>&1 &&
		pass "containerd-index: erofs-utils' fsck checks the image with the tar appended" ||
		fail "containerd-index: erofs-utils' fsck: $(tail -1 "$WORK/ref.log")"
fi

# containerd, from a directory (ConvertErofs)
"$MKFS" --quiet -Enoinline_data -b4096 "$WORK/containerd-dir.erofs" "$tree" \
	2>"$WORK/containerd-dir.err"
verify containerd-dir "$WORK/containerd-dir.erofs" 5.4 "$tree"

# containerd core/images/converter/erofs/erofs.go (ctr image convert --erofs):
# tar mode with -zlz4hc -C 65536 first, the UUID a name UUID of the diffID
"$MKFS" -zlz4hc -C 65536 --tar=f --aufs --quiet -Enoinline_data -b4096 -U "$UUID" \
	"$WORK/ctr-convert.erofs" <"$WORK/layer.tar" 2>"$WORK/ctr-convert.err"
verify ctr-convert "$WORK/ctr-convert.erofs" 5.13 "$tree"

# a Go image builder (code index): the layer through a FIFO, --workers=N
mkfifo "$WORK/layer.fifo"
cat "$WORK/layer.tar" >"$WORK/layer.fifo" &
"$MKFS" --all-root -E noinline_data --workers=2 --tar=f --aufs --ovlfs-strip=1 --sort=none \
	"$WORK/go-fifo.erofs" "$WORK/layer.fifo" 2>"$WORK/go-fifo.err" >/dev/null
wait
"$MKFS" --quiet --all-root -Enoinline_data "$WORK/go-fifo-ref.erofs" "$tree" 2>/dev/null
rm -rf "$WORK/allroot"
"$FSCK" --extract="$WORK/allroot" "$WORK/go-fifo-ref.erofs" >/dev/null
verify go-fifo "$WORK/go-fifo.erofs" 5.4 "$WORK/allroot"

# systemd/systemd src/shared/mkfs-util.c (systemd-repart, mkosi Format=erofs):
# options after the positionals
"$MKFS" -U "$UUID" "$WORK/repart.erofs" "$tree" --quiet 2>"$WORK/repart.err"
verify systemd-repart "$WORK/repart.erofs" 5.4 "$tree"

# archlinux/archiso archiso/mkarchiso: the profile default, then a variant,
# options before "--"
"$MKFS" -U "$UUID" -zlzma,109 -E ztailpacking -- "$WORK/archiso.erofs" "$tree" \
	>/dev/null 2>"$WORK/archiso.err"
verify archiso "$WORK/archiso.erofs" 5.17 "$tree"
"$MKFS" -U "$UUID" -zlzma -C1048576 -Eall-fragments,fragdedupe=inode -- \
	"$WORK/archiso-frag.erofs" "$tree" >/dev/null 2>"$WORK/archiso-frag.err"
verify archiso-frag "$WORK/archiso-frag.erofs" 6.1 "$tree"

# osbuild/osbuild stages/org.osbuild.erofs: TARGET TREE, then -z and each
# value of its -E enum
for e in all-fragments dedupe force-inode-compact force-inode-extended force-inode-blockmap \
	 force-chunk-indexes fragments noinline_data ztailpacking; do
	case $e in
	*fragments) needs=6.1 ;;
	ztailpacking) needs=5.17 ;;
	dedupe) needs=5.4 ;;	# shares pclusters only when two are alike: none here
	*) needs=5.4 ;;
	esac
	"$MKFS" "$WORK/osbuild-$e.erofs" "$tree" -z lz4hc -E "$e" >/dev/null 2>"$WORK/osbuild-$e.err"
	verify "osbuild-$e" "$WORK/osbuild-$e.erofs" "$needs" "$tree"
done

# OSInside/kiwi kiwi/filesystem/erofs.py: -z, -L, --exclude-regex
cp -a "$tree" "$WORK/kiwi-want"
rm -rf "$WORK/kiwi-want/var/empty"
touch -h -d @1700000000 "$WORK/kiwi-want/var"
"$MKFS" -z lz4hc -L kiwi-root --exclude-regex='^var/empty$' "$WORK/kiwi.erofs" "$tree" \
	>/dev/null 2>"$WORK/kiwi.err"
verify kiwi "$WORK/kiwi.erofs" 5.4 "$WORK/kiwi-want"

# openembedded-core meta/classes-recipe/image_types.bbclass (Yocto)
for z in lz4 lz4hc; do
	"$MKFS" -z$z "$WORK/yocto-$z.erofs" "$tree" >/dev/null 2>"$WORK/yocto-$z.err"
	verify "yocto-$z" "$WORK/yocto-$z.erofs" 5.4 "$tree"
done

# buildroot/buildroot fs/erofs/erofs.mk: reproducible builds
"$MKFS" -zlz4hc,9 -T 1700000000 -U 00000000-0000-0000-0000-000000000000 -C 65536 \
	"$WORK/buildroot.erofs" "$tree" >/dev/null 2>"$WORK/buildroot.err"
verify buildroot "$WORK/buildroot.erofs" 5.13 "$tree"

# openwrt/openwrt include/image.mk: the squashfs replacement; -T with
# --ignore-mtime and --all-root, so the extracted tree is root's at -T's time
"$MKFS" -z lz4hc,12 -C 65536 -Efragments,dedupe,ztailpacking -Uclear --all-root -T1700000000 \
	--ignore-mtime -x-1 "$WORK/openwrt.erofs" "$tree" >/dev/null 2>"$WORK/openwrt.err"
"$MKFS" --quiet --all-root -x-1 -T1700000000 "$WORK/openwrt-ref.erofs" "$tree"
rm -rf "$WORK/openwrt-want"
"$FSCK" --extract="$WORK/openwrt-want" "$WORK/openwrt-ref.erofs" >/dev/null
verify openwrt "$WORK/openwrt.erofs" 6.1 "$WORK/openwrt-want"

# dracut's squash module (code index): --exclude-path, -x -1, -U clear
cp -a "$tree" "$WORK/dracut-want"
rm -rf "$WORK/dracut-want/usr/share/doc/more.txt"
touch -h -d @1700000000 "$WORK/dracut-want/usr/share/doc"
"$MKFS" --exclude-path=usr/share/doc/more.txt -C 65536 -E fragments -x -1 -U clear -z lz4hc \
	"$WORK/dracut.erofs" "$tree" >/dev/null 2>"$WORK/dracut.err"
"$MKFS" --quiet -x -1 "$WORK/dracut-ref.erofs" "$WORK/dracut-want"
rm -rf "$WORK/dracut-want"
"$FSCK" --extract="$WORK/dracut-want" "$WORK/dracut-ref.erofs" >/dev/null
verify dracut "$WORK/dracut.erofs" 6.1 "$WORK/dracut-want"

# Android ROM repackers (many scripts): -E legacy-compress, -T, --mount-point,
# --fs-config-file (a canned fs_config naming every path, as the build's
# fs_config tool writes it); owners and modes come from it
. "$top_srcdir/tests/android-common.sh"
vendor_rules() { # PATH TYPE: directories root:2000 0755, the rest root:root 0644
	if [ "$2" = d ]; then echo "0 2000 755 0"; else echo "0 0 644 0"; fi
}
canned_fs_config "$tree" vendor/ vendor_rules >"$WORK/fs_config"
"$MKFS" -E legacy-compress -zlz4hc,9 -T 1700000000 --mount-point=/vendor \
	--fs-config-file="$WORK/fs_config" "$WORK/android.erofs" "$tree" >/dev/null 2>"$WORK/android.err"
# the tree with the fs_config's owners and modes (a symlink keeps 0777)
"$MANIFEST" "$tree" | sed -E '/ type=dir /s/mode=[0-7]+ uid=[0-9]+ gid=[0-9]+/mode=0755 uid=0 gid=2000/
	/ type=(dir|lnk) /!s/mode=[0-7]+ uid=[0-9]+ gid=[0-9]+/mode=0644 uid=0 gid=0/' >"$WORK/android.want"
rm -rf "$WORK/android-x"
if "$FSCK" --extract="$WORK/android-x" "$WORK/android.erofs" >/dev/null 2>"$WORK/android.err" &&
   "$MANIFEST" "$WORK/android-x" | diff -u "$WORK/android.want" - >"$WORK/android.diff"; then
	pass "android-repack: the tree, owners and modes from --fs-config-file"
else
	fail "android-repack: $(tail -1 "$WORK/android.err") $(sed -n 4p "$WORK/android.diff")"
fi
finish
