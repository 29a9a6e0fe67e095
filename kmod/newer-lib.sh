# shellcheck shell=bash disable=SC2034 # variables for the sourcing script
# kmod/newer-lib.sh: what build-612.sh and build-7x.sh share (sourced):
# the kernel of a series, and building its fs/erofs with a patch series.

# newer_kernel NAME SERIES: sets here, top_srcdir, top_builddir, fetch,
# kver and kroot (the kernel fetch-kernel.sh SERIES delivers); die() names NAME
newer_kernel() {
	NEWER_NAME=$1
	here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
	top_srcdir=$(dirname "$here")
	top_builddir=${top_builddir:-$PWD}
	fetch=$top_srcdir/qemu-tests/fetch-kernel.sh
	local kdir=${KERNEL_DIR:-$top_builddir/qemu-tests/kernels}
	read -r kver kroot < <(top_builddir=$top_builddir bash "$fetch" "$2" "$kdir") ||
		die "no $2 kernel (fetch-kernel.sh $2)"
}

die() { echo "$NEWER_NAME: $*" >&2; exit 1; }

# newer_module ERofs_SRC PATCHDIR KBUILD_DIR OUT: a copy of ERofs_SRC at
# OUT with PATCHDIR/*.patch applied, built against KBUILD_DIR; prints
# OUT/erofs.ko once its vermagic names kver.  A module built before from
# the same patches (OUT/.forge-patches holds their checksum) is reused.
newer_module() {
	local src=$1 patches=$2 kbuild=$3 mod=$4 p sum
	sum=$(cat "$patches"/*.patch | md5sum | cut -d' ' -f1)
	if [ -f "$mod/erofs.ko" ] && [ "$(cat "$mod/.forge-patches" 2>/dev/null)" = "$sum" ]; then
		echo "$mod/erofs.ko"
		return
	fi
	rm -rf "$mod"
	cp -r "$src" "$mod"
	for p in "$patches"/*.patch; do
		patch -s -d "$mod" -p3 < "$p" || die "$(basename "$p") does not apply to $kver's fs/erofs"
	done
	make -C "$kbuild" -j"$(nproc)" M="$mod" modules > "$mod.log" 2>&1 ||
		{ tail -n 20 "$mod.log" >&2; die "module build failed (log: $mod.log)"; }
	[ "$(modinfo -F vermagic "$mod/erofs.ko" | cut -d' ' -f1)" = "$kver" ] || die "vermagic is not $kver"
	echo "$sum" > "$mod/.forge-patches"
	echo "$mod/erofs.ko"
}
