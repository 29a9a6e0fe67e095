# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with the callers
# qemu-tests/lib.sh: what run.sh and fuzz.sh share (sourced; bash): the
# guest kernel and module setup, the initramfs, starting QEMU and watching
# the guest.
#
# The caller defines msg and die and sets here, top_srcdir, top_builddir,
# OUT (logs), QEMU and QEMU_ACCEL; KVER once detect_kver has run.

# what the guest needs besides erofs.ko: the virtio disk and loop drivers,
# and overlayfs for the container layer lines (EXPECT overlay).
# The modules to insmod (these, erofs.ko's and our module's dependencies,
# softdeps such as libcrc32c's crc32c) come from the kernel's modules.dep,
# modules.softdep and modules.alias (guest_module_order).
GUEST_MODULES="virtio_pci virtio_blk loop overlay erofs"

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
	make -s -j"$(nproc)" -C "$top_srcdir/kmod" KVER="$KVER" KMOD_BUILD="$kbuild" > "$OUT/kmod-build.log" 2>&1 ||
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
		     if [ "$opt" = -z ]; then	# and every algorithm of -z ALG[,..][:ALG..]
			     local z=${1:2} alg
			     [ -n "$z" ] || z=${2:-}
			     for alg in $(tr ':' ' ' <<< "$z"); do
				     alg=${alg%%,*}
				     grep -qiE -- "(^|[^a-z0-9])$alg([^a-z0-9]|\$)" <<< "$help" ||
					     { echo "-z $alg"; return 0; }
			     done
		     fi
		     [ ${#1} -eq 2 ] && shift ;;	# "-x -1": the value is the next word
		esac
		shift
	done
	return 1
}

# ---------------------------------------------------------- guest side ---

# The guest kernel: KROOT/boot/vmlinuz-KVER with its modules in
# KROOT/lib/modules/KVER.  KROOT is empty for the host's installed kernels,
# the unpacked package of fetch-kernel.sh for the others.
moddir() { echo "${KROOT:-}/lib/modules/$KVER"; }

find_module() { # NAME -> path of NAME.ko[.xz|.zst] under the kernel's modules
	find "$(moddir)/kernel" -regextype posix-extended \
		-regex ".*/$1\.ko(\.xz|\.zst|\.gz)?" -print -quit
}

# guest_module_order NAME...: the module files (relative to moddir) that
# loading NAME... needs, dependencies first, each once; a name built into
# the kernel adds nothing.  A softdep "pre:" module is loaded first when it
# exists (an alias resolves to its *_generic module when there is one: TCG's
# CPU lacks the accelerated variants).  Fails naming a module it cannot find.
guest_module_order() {
	local dir
	dir=$(moddir)
	awk -v roots="$*" '
	function norm(n) { sub(/.*\//, "", n); sub(/\.ko(\.[a-z]+)?$/, "", n); gsub(/-/, "_", n); return n }
	FILENAME ~ /modules\.dep$/ {
		sub(/:$/, "", $1); n = norm($1); path[n] = $1; deps[n] = ""
		for (i = 2; i <= NF; i++) deps[n] = deps[n] " " norm($i)
		next
	}
	FILENAME ~ /modules\.builtin$/ { builtin[norm($1)] = 1; next }
	FILENAME ~ /modules\.softdep$/ && $1 == "softdep" {
		n = norm($2); pre = 0
		for (i = 3; i <= NF; i++) {
			if ($i == "pre:") pre = 1
			else if ($i == "post:") pre = 0
			else if (pre) soft[n] = soft[n] " " $i
		}
		next
	}
	FILENAME ~ /modules\.alias$/ && $1 == "alias" {
		a = $2; m = norm($3)
		if (!(a in alias) || (m ~ /_generic$/ && alias[a] !~ /_generic$/)) alias[a] = m
		next
	}
	function resolve(n) {
		n2 = n; gsub(/-/, "_", n2)
		if (n2 in path || n2 in builtin) return n2
		if (n in alias) return alias[n]
		return ""
	}
	function visit(n, optional,    m, k, i, list) {
		m = resolve(n)
		if (m == "") { if (!optional) { print "unknown module " n > "/dev/stderr"; bad = 1 } return }
		if (m in seen) return
		seen[m] = 1
		k = split(soft[m], list, " ")
		for (i = 1; i <= k; i++) visit(list[i], 1)
		k = split(deps[m], list, " ")
		for (i = 1; i <= k; i++) visit(list[i], 0)
		if (m in path) print path[m]
	}
	END {
		k = split(roots, r, " ")
		for (i = 1; i <= k; i++) visit(r[i], 0)
		exit bad
	}' "$dir/modules.dep" "$dir/modules.builtin" "$dir/modules.softdep" "$dir/modules.alias"
}

copy_module() { # SRC DEST.ko  (decompressing if needed)
	case $1 in
	*.ko.xz) xz -dc "$1" > "$2" ;;
	*.ko.zst) zstd -qdc "$1" > "$2" ;;
	*.ko.gz) gzip -dc "$1" > "$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# initramfs_base ROOT: busybox with its applets, the stock modules the guest
# needs (their insmod order in ROOT/forge/modules), our erofs.ko (when
# OUR_KO is set) and Debian's as lib/forge/erofs-ours.ko and erofs-stock.ko, and guest-init.sh
# as /init.  The caller adds its tools, /forge/conf and whatever else.
initramfs_base() {
	local root=$1 m src applet
	mkdir -p "$root"/{bin,lib/forge,forge,proc,sys,dev,tmp,mnt}
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
	done
	: > "$root/forge/modules"
	local order ours_deps=
	# our module may need more of the kernel than Debian's (e.g. a codec)
	[ -z "${OUR_KO:-}" ] || ours_deps=$(modinfo -F depends "$OUR_KO" 2>/dev/null | tr ',' ' ')
	order=$(guest_module_order $GUEST_MODULES $ours_deps) ||
		die "kernel $KVER lacks a module the guest needs (see above)"
	for src in $order; do
		m=$(basename "$src")
		m=${m%%.ko*}
		if [ "$m" = erofs ]; then
			copy_module "$(moddir)/$src" "$root/lib/forge/erofs-stock.ko"
			continue
		fi
		copy_module "$(moddir)/$src" "$root/lib/forge/$m.ko"
		echo "$m.ko" >> "$root/forge/modules"
	done
	[ -f "$root/lib/forge/erofs-stock.ko" ] || die "Debian's erofs.ko not found under $(moddir)"
	[ -z "${OUR_KO:-}" ] || cp "$OUR_KO" "$root/lib/forge/erofs-ours.ko"
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
		-kernel "${KROOT:-}/boot/vmlinuz-$KVER" -initrd "$INITRAMFS" \
		-append "$append" "$@" \
		< /dev/null > "$log" 2>&1 &
	QEMU_PID=$!
}

# watch_guest LOG T0 LIMIT QUIET STUCK_END: waits for the guest QEMU_PID
# started at T0 ($SECONDS) and kills it once LIMIT s have passed since T0
# (BOOT_END=timeout), QUIET s went by without a new "forge: " line of LOG
# (hang), or the guest said "forge: STUCK" (STUCK_END: a walk outlived
# SIGKILL).  BOOT_END stays empty when the guest stopped on its own; the
# caller tells how from LOG.  Sets BOOT_SECONDS.
watch_guest() {
	local log=$1 t0=$2 limit=$3 quiet=$4 stuck_end=$5 last=$SECONDS marks=0 m
	BOOT_END=
	while kill -0 "$QEMU_PID" 2>/dev/null; do
		sleep 1
		m=$(grep -ac '^forge: ' "$log" 2>/dev/null || true)
		if [ "$m" != "$marks" ]; then
			marks=$m
			last=$SECONDS
		fi
		if grep -aq '^forge: STUCK' "$log"; then
			BOOT_END=$stuck_end
		elif [ $((SECONDS - t0)) -ge "$limit" ]; then
			BOOT_END=timeout
		elif [ $((SECONDS - last)) -ge "$quiet" ]; then
			BOOT_END=hang
		fi
		if [ -n "$BOOT_END" ]; then
			kill "$QEMU_PID" 2>/dev/null || true
			break
		fi
	done
	wait "$QEMU_PID" 2>/dev/null || true
	QEMU_PID=
	BOOT_SECONDS=$((SECONDS - t0))
}
