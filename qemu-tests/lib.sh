# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with the callers
# qemu-tests/lib.sh: what run.sh and fuzz.sh share (sourced; bash): the
# guest kernel and module setup, the initramfs, and starting QEMU.
#
# The caller defines msg and die and sets here, top_srcdir, top_builddir,
# OUT (logs), QEMU and QEMU_ACCEL; KVER once detect_kver has run.

# stock modules loaded before erofs.ko, in this order
GUEST_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
	virtio_pci virtio_blk crc32c_generic libcrc32c loop overlay"

# kernel log patterns that fail any test, whatever the image
OOPS_RE='BUG:|Oops|general protection fault|kernel BUG at|WARNING:|Kernel panic|Call Trace|soft lockup|hard LOCKUP|blocked for more than|list_(add|del) corruption|Bad page state|UBSAN:|KASAN:|Out of memory|stack-protector|double fault'

# ---------------------------------------------------------------- setup ---

detect_kver() {
	local v best=
	for v in $(printf '%s\n' /usr/src/linux-headers-*-amd64 | sed 's|.*/linux-headers-||' | sort -V); do
		[ -d "/lib/modules/$v" ] && [ -e "/boot/vmlinuz-$v" ] && best=$v
	done
	[ -n "$best" ] || die "no Debian kernel (headers + modules + vmlinuz) found; set KVER="
	echo "$best"
}

build_kmod() {
	local t0=$SECONDS kbuild=$top_srcdir/kmod/build
	[ -w "$top_srcdir/kmod" ] || kbuild=$top_builddir/kmod/build	# read-only source tree
	msg "building the module (kmod/, KVER=$KVER)"
	make -s -C "$top_srcdir/kmod" KVER="$KVER" KMOD_BUILD="$kbuild" > "$OUT/kmod-build.log" 2>&1 ||
		{ tail -n 20 "$OUT/kmod-build.log" >&2; die "kmod build failed (log: $OUT/kmod-build.log)"; }
	OUR_KO=$kbuild/$KVER/erofs.ko
	OUR_VERSION=$(cat "$kbuild/$KVER/version")
	msg "module $OUR_VERSION ready ($((SECONDS - t0)) s)"
}

# Does $MKFS --help mention every option used in ARGS?  Prints the first
# missing one.
mkfs_lacks_option() {
	local help opt
	help=$("$MKFS" --help 2>&1 || true)
	while [ $# -gt 0 ]; do
		case $1 in
		--*) opt=${1%%=*}
		     grep -qE -- "(^|[ ,])$opt([ =#[,]|\$)" <<< "$help" || { echo "$opt"; return 0; } ;;
		-?*) opt=${1:0:2}
		     grep -qE -- "(^|[ ,])$opt" <<< "$help" || { echo "$opt"; return 0; }
		     [ ${#1} -eq 2 ] && shift ;;	# "-x -1": the value is the next word
		esac
		shift
	done
	return 1
}

# ---------------------------------------------------------- guest side ---

find_module() { # NAME -> path of NAME.ko[.xz|.zst] under /lib/modules/$KVER
	find "/lib/modules/$KVER/kernel" -regextype posix-extended \
		-regex ".*/$1\.ko(\.xz|\.zst|\.gz)?" -print -quit
}

copy_module() { # SRC DEST.ko  (decompressing if needed)
	case $1 in
	*.ko.xz) xz -dc "$1" > "$2" ;;
	*.ko.zst) zstd -qdc "$1" > "$2" ;;
	*.ko.gz) gzip -dc "$1" > "$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# initramfs_base ROOT: busybox with its applets, the stock modules of
# GUEST_MODULES (their insmod order in ROOT/forge/modules), our erofs.ko and
# Debian's as lib/forge/erofs-ours.ko and erofs-stock.ko, and guest-init.sh
# as /init.  The caller adds its tools, /forge/conf and whatever else.
initramfs_base() {
	local root=$1 m src applet
	mkdir -p "$root"/{bin,lib/forge,forge,proc,sys,dev,tmp,mnt}
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
	done
	: > "$root/forge/modules"
	for m in $GUEST_MODULES; do
		src=$(find_module "$m")
		if [ -z "$src" ]; then
			grep -q "/$m.ko" "/lib/modules/$KVER/modules.builtin" ||
				die "module $m not found for $KVER"
			continue	# built into the kernel
		fi
		copy_module "$src" "$root/lib/forge/$m.ko"
		echo "$m.ko" >> "$root/forge/modules"
	done
	cp "$OUR_KO" "$root/lib/forge/erofs-ours.ko"
	src=$(find_module erofs)
	[ -n "$src" ] || die "Debian's erofs.ko not found under /lib/modules/$KVER"
	copy_module "$src" "$root/lib/forge/erofs-stock.ko"
	install -m 0755 "$here/guest-init.sh" "$root/init"
}

pack_initramfs() { # ROOT CPIO.GZ
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$2"
}

# ------------------------------------------------------------------ boot ---

# qemu_start LOG APPEND QEMU-ARGS...: boot Debian's kernel with $INITRAMFS
# and the kernel command line APPEND (1 CPU, 1 GiB, no reboot: a panic
# ends QEMU) in the background, console to LOG; sets QEMU_PID.
qemu_start() {
	local log=$1 append=$2 accel_args=(-accel tcg)
	shift 2
	[ "$QEMU_ACCEL" = kvm ] && accel_args=(-accel kvm -cpu host)
	"$QEMU" "${accel_args[@]}" -m 1024 -smp 1 -nographic -no-reboot \
		-kernel "/boot/vmlinuz-$KVER" -initrd "$INITRAMFS" \
		-append "$append" "$@" \
		< /dev/null > "$log" 2>&1 &
	QEMU_PID=$!
}
