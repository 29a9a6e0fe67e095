#!/bin/bash
# kmod/build-612.sh: the EROFS module of Debian's 6.12 kernel (the one
# qemu-tests/fetch-kernel.sh 6.12 delivers) with kmod/patches-612 applied,
# for the QEMU fuzz campaign (qemu-tests/fuzz.sh --kernel 6.12 --module KO).
#
#   bash kmod/build-612.sh [WORKDIR]    (default: $top_builddir/kmod-612, top_builddir=$PWD)
#
# Prints the path of the built erofs.ko.  Unlike 7.x (build-7x.sh), Debian
# builds 6.12 for bookworm with gcc-12, so its own headers and kbuild
# packages work here: linux-source-6.12 (only fs/erofs is unpacked),
# linux-headers-KVER, linux-headers-*-common and linux-kbuild-* are fetched
# privately with fetch-kernel.sh --debs (nothing installed, no apt source
# added) and unpacked under WORKDIR; fs/erofs is built out of tree against
# them with the patches applied (modversions from Debian's Module.symvers).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/newer-lib.sh"
newer_kernel build-612.sh 6.12
work=${1:-$top_builddir/kmod-612}
mkdir -p "$work"
work=$(cd "$work" && pwd)	# make -C needs M= absolute
abi=${kver%-amd64}
mapfile -t debs < <(bash "$fetch" --debs 6.12 linux-source-6.12 "linux-headers-$kver" \
	"linux-headers-$abi-common" "linux-kbuild-$abi")
[ ${#debs[@]} = 4 ] || die "cannot fetch the source, headers and kbuild packages of $kver"

root=$work/root hdr=$work/root/usr/src/linux-headers-$kver
mkdir -p "$work"
if [ ! -f "$work/.unpacked-$kver" ]; then
	rm -rf "$root" "$work/linux-source-6.12"
	for deb in "${debs[@]:1}"; do dpkg-deb -x "$deb" "$root"; done
	dpkg-deb --fsys-tarfile "${debs[0]}" | tar -xO ./usr/src/linux-source-6.12.tar.xz |
		tar -xJ -C "$work" linux-source-6.12/fs/erofs
	touch "$work/.unpacked-$kver"
fi
# the headers' Makefile includes the common tree by its installed path:
# point it into this WORKDIR (again, should the folder have moved)
sed -i "1s|^include .*/usr/src/|include $root/usr/src/|" "$hdr/Makefile"

ko=$(newer_module "$work/linux-source-6.12/fs/erofs" "$here/patches-612" "$hdr" "$work/erofs-$kver")
strip --strip-debug "$ko"	# 4.6 MB -> ~0.4 MB in the guest's initramfs
echo "$ko"
