#!/bin/bash
# kmod/build-7x.sh: the EROFS module of Debian's 7.x kernel (the one
# qemu-tests/fetch-kernel.sh 7 delivers) with kmod/patches-7x applied, for
# the QEMU fuzz campaign (qemu-tests/fuzz.sh --kernel 7 --module KO).
#
#   bash kmod/build-7x.sh [WORKDIR]     (default: $top_builddir/kmod-7x, top_builddir=$PWD)
#
# Prints the path of the built erofs.ko.  Fetches linux-source-7.N and
# linux-headers-KVER (for Module.symvers) with fetch-kernel.sh --debs, the
# private apt way (nothing installed, no apt source added), unpacks the
# source once, configures it with the kernel's own config (release string
# KVER) and runs modules_prepare, then builds fs/erofs with
# the patches out of tree.  Debian builds 7.x with gcc-14; Debian 12 has
# gcc-12, which the 7.x tree accepts (olddefconfig re-derives the
# compiler-dependent options); the kernel has no MODVERSIONS, so the
# module loads when its vermagic (release, SMP preempt mod_unload) matches.
# Needs gcc, make, bison, flex, libelf-dev, libssl-dev, bc, xz-utils and
# pahole (dwarves).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/newer-lib.sh"
newer_kernel build-7x.sh 7
work=${1:-$top_builddir/kmod-7x}
mkdir -p "$work"
work=$(cd "$work" && pwd)	# make -C needs M= absolute
short=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<< "$kver")
mapfile -t debs < <(bash "$fetch" --debs 7 "linux-source-$short" "linux-headers-$kver")
[ ${#debs[@]} = 2 ] || die "cannot fetch linux-source-$short and linux-headers-$kver"

src=$work/linux-source-$short
mkdir -p "$work"
if [ ! -f "$src/.prepared-$kver" ]; then
	echo "build-7x.sh: unpacking and preparing linux-source-$short for $kver (a few minutes)" >&2
	rm -rf "$src"
	dpkg-deb --fsys-tarfile "${debs[0]}" | tar -xO "./usr/src/linux-source-$short.tar.xz" |
		tar -xJ -C "$work"
	dpkg-deb --fsys-tarfile "${debs[1]}" |
		tar -xO "./usr/src/linux-headers-$kver/Module.symvers" > "$src/Module.symvers"
	cp "$kroot/boot/config-$kver" "$src/.config"
	# the release string of Debian's build, no signing; everything else as
	# Debian's, debug info and BTF included: without pahole, olddefconfig
	# drops DEBUG_INFO_BTF and with it SCHED_CLASS_EXT (task_struct) and
	# the BTF fields of struct module, and the loader then refuses the
	# module ("Invalid relocation target" in .gnu.linkonce.this_module)
	command -v pahole > /dev/null || die "pahole missing (apt-get install dwarves)"
	"$src/scripts/config" --file "$src/.config" --set-str LOCALVERSION "${kver#"$(make -s -C "$src" kernelversion)"}" \
		--disable LOCALVERSION_AUTO \
		--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" --disable MODULE_SIG_ALL
	make -s -C "$src" olddefconfig > "$work/prepare.log" 2>&1
	[ "$(make -s -C "$src" kernelrelease)" = "$kver" ] || die "kernelrelease is not $kver"
	for opt in SCHED_CLASS_EXT DEBUG_INFO_BTF_MODULES; do	# layouts the module shares
		[ "$(grep -c "^CONFIG_$opt=y" "$kroot/boot/config-$kver")" = "$(grep -c "^CONFIG_$opt=y" "$src/.config")" ] ||
			die "CONFIG_$opt differs from $kver's after olddefconfig"
	done
	make -C "$src" -j"$(nproc)" modules_prepare >> "$work/prepare.log" 2>&1 ||
		die "modules_prepare failed (log: $work/prepare.log)"
	touch "$src/.prepared-$kver"
fi

ko=$(newer_module "$src/fs/erofs" "$here/patches-7x" "$src" "$work/erofs-$kver")
strip --strip-debug "$ko"
echo "$ko"
