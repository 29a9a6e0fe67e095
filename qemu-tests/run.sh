#!/bin/bash
# qemu-tests/run.sh: prove EROFS images against real Debian kernels.
#
# Builds every image of qemu-tests/matrix with $MKFS, boots the stock Debian
# 6.1 kernel under QEMU once per module mode (ours = kmod/ build, stock =
# Debian's erofs.ko), and each newer Debian kernel of KERNELS (fetched by
# fetch-kernel.sh) with its own packaged erofs.ko; mounts each image
# read-only in the guest, runs erofs-manifest on it, and compares the result
# with the host manifest of the source tree.  See qemu-tests/README.md.
#
# Output: "PASS: <target>/<name>", "FAIL: <target>/<name> (reason; log:
# path)", "SKIP: ...", then "N passed, N failed[, N skipped]"; exit 1 on any
# failure.  A target is "ours" or "stock" on the 6.1 kernel, "X.Y/stock" on
# a fetched one ("SKIP: 6.12 (reason)" when it cannot be fetched), and
# "X.Y/ours" with our module for it (findings.sh).
#
# Knobs (environment):
#   MKFS        mkfs binary (default: $top_builddir/mkfs/mkfs.erofs)
#   KVER        Debian kernel version (default: newest installed *-amd64)
#   QEMU_ACCEL  tcg (default) or kvm
#   MODES       "ours stock" (default), or one of them
#   MATRIX      matrix file (default: qemu-tests/matrix)
#   ONLY        extended regex: run only matrix lines whose NAME matches
#   KEEP_OUT    1: keep qemu-tests/out/<run>/ even when everything passed
#   IMAGE_LIMIT seconds per image in the guest (default 60)
#   KERNEL_IMAGE_LIMIT  the same on the fetched kernels (default 180: 7.x
#               reads some all-fragments images 10-30x slower than 6.1)
#   BOOT_LIMIT  seconds per QEMU boot (default 120 + 8 per image, + 60 per fuse line; on the
#               fetched kernels twice KERNEL_IMAGE_LIMIT - IMAGE_LIMIT more)
#   QEMU_PARALLEL 1 (default): boot the modes side by side; 0: one after another
#   IMAGE_JOBS  images made at a time (default: online CPUs)
#   MANIFEST    host erofs-manifest (default: $top_builddir/tools/erofs-manifest,
#               else compiled from tools/manifest.c)
#   KERNELS     newer kernels to boot in stock mode, as fetch-kernel.sh
#               series (default "6.12 7"; empty: only KVER)
#   KERNEL_DIR  where they are unpacked (default $top_builddir/qemu-tests/kernels)
#   OURS_KERNELS, OURS_LINES, FINDINGS_LIST  the newer kernels' ours
#               targets and fuzz findings (findings.sh)
#   EROFSFUSE   erofsfuse for the matrix lines with EXPECT "fuse" (default:
#               $top_builddir/fuse/erofsfuse; those lines SKIP without it)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
top_builddir=${top_builddir:-$PWD}

MKFS=${MKFS:-$top_builddir/mkfs/mkfs.erofs}
QEMU_ACCEL=${QEMU_ACCEL:-tcg}
MODES=${MODES:-ours stock}
MATRIX=${MATRIX:-$here/matrix}
ONLY=${ONLY:-}
KEEP_OUT=${KEEP_OUT:-0}
IMAGE_LIMIT=${IMAGE_LIMIT:-60}
KERNEL_IMAGE_LIMIT=${KERNEL_IMAGE_LIMIT:-180}
BOOT_LIMIT=${BOOT_LIMIT:-}	# default set once the image count is known
QEMU_PARALLEL=${QEMU_PARALLEL:-1}
QEMU=${QEMU:-qemu-system-x86_64}
KERNELS=${KERNELS-6.12 7}
KERNEL_DIR=${KERNEL_DIR:-$top_builddir/qemu-tests/kernels}
QEMU_JOBS=2	# QEMU boots side by side (one per core of the CI host)
IMAGE_JOBS=${IMAGE_JOBS:-$(nproc)}

CANARY_MARKER=EROFS-FORGE-CANARY-BLOCK-1000
# the kernel message that proves a crafted image was refused for the intended reason
declare -A REFUSE_RE=(
	[badmagic]='cannot find valid erofs superblock'
	[badcsum]='invalid checksum'
	[incompat]='unidentified incompatible feature'
	# not crafted: a layout older kernels misread, refused without a message
	[unread]='Structure needs cleaning'
)
ALIGN=$((1024 * 1024))	# image alignment on the data disk

# EXPECT item ours61: an algorithm only our 6.1 module reads (kmod/README,
# "Algorithms"): ours must mount the line, Debian's 6.1 module must refuse
# it at mount with its usual message for an algorithm it lacks (a newer
# stock kernel must mount it like any line)
declare -A OURS61=()
STOCK61_REFUSE_RE="algorithm [0-9]+ isn't enabled on this kernel|unidentified algorithms [0-9a-f]+, please upgrade kernel"

# kernel log lines that fail a valid image whatever their level
IOERR_RE='beyond end of device|I/O error|Buffer I/O'
# kernel log lines that are expected noise (module taint, experimental notices,
# a TCG timer-routing complaint that a loaded host can provoke at boot)
NOISE_RE='EXPERIMENTAL|taints kernel|tainting kernel|erofs-forge-test:|MP-BIOS bug: 8254 timer not connected'

msg() { echo "run.sh: $*" >&2; }
die() { msg "error: $*"; exit 2; }

# the pieces fuzz.sh shares: kernel and module setup, initramfs, QEMU
. "$here/lib.sh"

# hostile-image regression cases (qemu-tests/hostile.list, HOSTILE_LIST=)
. "$here/hostile.sh"

# the newer kernels' fuzz findings and our modules for those kernels
# (fuzz-findings.list, FINDINGS_LIST=, OURS_KERNELS=, OURS_LINES=)
. "$here/findings.sh"

# ---------------------------------------------------------------- setup ---

setup_dirs() {
	RUN_ID=$(date +%Y%m%d-%H%M%S)-$$
	local root=$here/out
	[ -w "$here" ] || root=$top_builddir/qemu-tests/out	# read-only source tree
	OUT=$root/$RUN_ID
	mkdir -p "$OUT"
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/erofs-forge-qemu.XXXXXX")
	trap cleanup EXIT
}

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local rc=$?
	local pid
	for pid in ${BOOT_PIDS:-}; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$SCRATCH"
	if [ "$rc" -eq 0 ] && [ "$KEEP_OUT" != 1 ]; then
		rm -rf "$OUT"
	else
		msg "logs and manifests kept in $OUT"
	fi
}

build_tools() {
	local cflags=(-O2 -Wall "-I$top_srcdir/include")
	mkdir -p "$SCRATCH/bin"
	if [ -z "${MANIFEST:-}" ]; then
		MANIFEST=$top_builddir/tools/erofs-manifest
		if [ ! -x "$MANIFEST" ] || [ "$MANIFEST" -ot "$top_srcdir/tools/manifest.c" ]; then
			MANIFEST=$SCRATCH/bin/erofs-manifest-host
			gcc "${cflags[@]}" -o "$MANIFEST" "$top_srcdir/tools/manifest.c"
		fi
	fi
	FSCK=${FSCK:-$top_builddir/fsck/fsck.erofs}
	EROFSFUSE=${EROFSFUSE:-$top_builddir/fuse/erofsfuse}
	[ -x "$FSCK" ] || die "no fsck.erofs at $FSCK (set FSCK=)"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/erofs-manifest" "$top_srcdir/tools/manifest.c"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/guest-loop" "$here/guest-loop.c"
	gcc "${cflags[@]}" -o "$SCRATCH/bin/craft" "$here/craft.c"
	gcc "${cflags[@]}" -static -o "$SCRATCH/bin/hostile-walk" "$here/hostile-walk.c"
}

# The runner's own small tree: one of each file type, xattrs, a hard-link
# pair, odd names, and a 64 KiB canary file whose data the self-test corrupts.
make_small_tree() {
	local t=$1 i
	mkdir -p "$t/dir/sub" "$t/empty"
	printf 'hello\n' > "$t/hello"
	head -c 5000 /dev/zero | tr '\0' 'z' > "$t/dir/five-k"
	for i in $(seq 0 2047); do printf 'EROFS-FORGE-CANARY-BLOCK-%04d:\n' "$i"; done > "$t/canary"
	ln "$t/hello" "$t/dir/hello-link"
	ln -s ../hello "$t/dir/sub/rel-link"
	ln -s /nowhere "$t/dangling"
	mkfifo "$t/fifo"
	mknod "$t/null" c 1 3
	mknod "$t/disk" b 8 1
	printf 'odd\n' > "$t/with space=%;"
	printf 'utf8\n' > "$t/$(printf 'caf\303\251')"
	chmod 4755 "$t/hello"
	chmod 1777 "$t/empty"
	chown 1000:100 "$t/dir/five-k"
	setfattr -n user.colour -v blue "$t/hello"
	setfattr -n trusted.forge -v 0x00ff "$t/dir"
	setfattr -n security.forge -v label "$t/canary"
	touch -d '2001-02-03 04:05:06.123456789' "$t/dir/five-k"
	find "$t" -type d -exec touch -d '2020-01-01 00:00:00.5' {} +
}

# a tree whose every path the canned fs_config beside the matrix names
# (android-small.fs_config): owners, modes and labels come from those files
make_android_tree() {
	local t=$1
	mkdir -p "$t/bin" "$t/etc/init" "$t/lib"
	printf '#!/bin/sh\necho hi\n' > "$t/bin/sh"
	printf 'binary\n' > "$t/bin/netd"
	head -c 20000 /dev/zero | tr '\0' 'a' > "$t/lib/libfoo.so"
	printf 'service foo /bin/netd\n' > "$t/etc/init/foo.rc"
	printf 'ro.build=forge\n' > "$t/etc/build.prop"
	ln -s /bin/sh "$t/bin/ash"
	find "$t" -exec touch -h -d '2009-01-01 00:00:00' {} +
}

# fs_config_record MODE UID GID CAPS PATH: one record of a binary
# etc/fs_config_{dirs,files} (little-endian u16 length, mode, uid, gid, u64
# capabilities, then the NUL-terminated path padded to 8 bytes)
fs_config_record() {
	local mode=$((8#$1)) uid=$2 gid=$3 caps=$(($4)) path=$5 pad v i esc=
	pad=$(( (${#path} + 8) / 8 * 8 - ${#path} ))
	for v in $((16 + ${#path} + pad)) "$mode" "$uid" "$gid"; do
		esc+=$(printf '\\x%02x\\x%02x' $((v & 255)) $((v >> 8 & 255)))
	done
	for i in 0 8 16 24 32 40 48 56; do esc+=$(printf '\\x%02x' $((caps >> i & 255))); done
	# shellcheck disable=SC2059 # the format is the escaped bytes
	printf "$esc"
	printf '%s' "$path"
	head -c "$pad" /dev/zero
}

# an `m` build's system-as-root tree: the paths libcutils' built-in
# fs_config tables name (set-id, capabilities, shell-group binaries, data
# directories, the root's init link) and system's own rule files, which
# --product-out @tree@/system reads before those tables
make_android_sar_tree() {
	local t=$1 f
	mkdir -p "$t"/data/local/tmp "$t"/vendor "$t"/acct "$t"/system/bin/hw "$t"/system/xbin \
		"$t"/system/etc/init/hw "$t"/system/app/Foo "$t"/system/lib64
	ln -s /system/bin/init "$t/init"
	ln -s /system/bin "$t/bin"
	ln -s /vendor "$t/system/vendor"
	for f in init sh toybox run-as inputflinger logd hw/android.hardware.foo; do
		printf '#!/system/bin/sh\n# %s\n' "$f" > "$t/system/bin/$f"
	done
	ln -s toybox "$t/system/bin/ls"
	printf 'su\n' > "$t/system/xbin/su"
	printf 'ro.build.fingerprint=forge/test\n' > "$t/system/build.prop"
	printf 'on init\n' > "$t/system/etc/init/hw/init.rc"
	head -c 20000 /dev/zero | tr '\0' 'p' > "$t/system/app/Foo/Foo.apk"
	head -c 30000 /dev/zero | tr '\0' 'l' > "$t/system/lib64/libc.so"
	fs_config_record 0750 1000 2000 0 system/bin/hw > "$t/system/etc/fs_config_dirs"
	{ fs_config_record 0750 1000 1003 0x400 'system/bin/hw/*'
	  fs_config_record 0555 0 2000 0 system/bin/toybox; } > "$t/system/etc/fs_config_files"
	find "$t" -type d -exec chmod 0755 {} + && find "$t" -type f -exec chmod 0644 {} +
	find "$t" -exec touch -h -d '2009-01-01 00:00:00' {} +
}

# duplicates for the dedup layouts: whole copies across folders, a near copy
# (one byte differs), files sharing a prefix, a run repeated inside a file,
# and incompressible and compressible data of each kind
make_dup_tree() {
	local t=$1 i
	mkdir -p "$t/a/b" "$t/c" "$t/d"
	head -c 1000000 /dev/urandom > "$t/random"
	for i in 1 2 3 4 5 6; do cp "$t/random" "$t/$([ $((i % 2)) = 0 ] && echo a/b || echo c)/copy-$i"; done
	cp "$t/random" "$t/near"
	printf 'X' | dd of="$t/near" bs=1 seek=500000 conv=notrunc status=none
	head -c 8192 /dev/urandom > "$t/prefix.bin"
	for i in $(seq 1 12); do { cat "$t/prefix.bin"; printf 'tail %02d' "$i"; } > "$t/d/prefix-$i"; done
	find /usr/share/common-licenses -type f | sort | xargs cat > "$t/text"
	cp "$t/text" "$t/a/text-copy"
	{ cat "$t/text"; printf 'appended\n'; } > "$t/c/text-longer"
	{ head -c 777 /dev/urandom; cat "$t/text" "$t/text"; } > "$t/d/text-shifted-twice"
	# shared pclusters at the same offset within a page (G7's setting)
	{ head -c 8192 /dev/urandom; cat "$t/text" "$t/text"; } > "$t/d/text-shifted-8k"
	head -c 65536 /dev/urandom > "$t/block.bin"
	for i in 1 2 3 4 5 6 7 8; do cat "$t/block.bin"; done > "$t/repeated"
	{ head -c 4096 /dev/zero; cat "$t/random"; } > "$t/d/random-after-4k"
	chmod 0600 "$t/a/b/copy-2"
	setfattr -n user.note -v differs "$t/c/copy-3"
}

# bigroot: a root whose record (two 1,500-byte xattrs) does not fit beside the
# superblock, over 3 MB of data: nid 0 then starts the metadata area after
# the data (meta_blkaddr > 0), the layout's fallback
make_bigroot_tree() {
	local t=$1
	mkdir -p "$t/sub"
	head -c 3000000 /dev/urandom > "$t/data"
	seq 1 200000 > "$t/sub/numbers"
	echo small > "$t/sub/small"
	setfattr -n user.first -v "$(head -c 1500 /dev/zero | tr '\0' a)" "$t"
	setfattr -n user.second -v "$(head -c 1500 /dev/zero | tr '\0' b)" "$t"
}

prepare_tree() { # NAME -> sets TREE_DIR
	local name=$1
	case $name in
	small)
		TREE_DIR=$SCRATCH/trees/small
		[ -d "$TREE_DIR" ] || make_small_tree "$TREE_DIR" ;;
	gen)
		if [ ! -x "$top_srcdir/tests/gen-tree.sh" ] && [ ! -f "$top_srcdir/tests/gen-tree.sh" ]; then
			prepare_tree small
			return
		fi
		TREE_DIR=$SCRATCH/trees/gen
		if [ ! -d "$TREE_DIR" ]; then
			bash "$top_srcdir/tests/gen-tree.sh" "$TREE_DIR" > "$OUT/gen-tree.log" 2>&1 ||
				die "tests/gen-tree.sh failed (log: $OUT/gen-tree.log)"
		fi ;;
	doc)
		TREE_DIR=/usr/share/doc ;;
	android)
		TREE_DIR=$SCRATCH/trees/android
		[ -d "$TREE_DIR" ] || make_android_tree "$TREE_DIR" ;;
	android-sar)
		TREE_DIR=$SCRATCH/trees/android-sar
		[ -d "$TREE_DIR" ] || make_android_sar_tree "$TREE_DIR" ;;
	dup)
		TREE_DIR=$SCRATCH/trees/dup
		[ -d "$TREE_DIR" ] || make_dup_tree "$TREE_DIR" ;;
	bigroot)
		TREE_DIR=$SCRATCH/trees/bigroot
		[ -d "$TREE_DIR" ] || make_bigroot_tree "$TREE_DIR" ;;
	layer)	# a container layer over a lower tree (tests/tar-layer.py)
		TREE_DIR=$SCRATCH/trees/layer/lower
		[ -d "$TREE_DIR" ] || python3 "$top_srcdir/tests/tar-layer.py" "$SCRATCH/trees/layer" ||
			die "tests/tar-layer.py failed" ;;
	*)
		die "matrix: unknown tree '$name'" ;;
	esac
}

# ------------------------------------------------------------- matrix ---

# expected manifest for TREE_DIR with EXPECT edits -> file $2; with
# "extract", the tree our fsck.erofs extracts from image $3 instead (for
# options that change owners, modes and labels on purpose)
expected_manifest() {
	local expect=$1 out=$2 image=${3:-} flags=() sed_prog=() tok key
	IFS=, read -ra toks <<< "$expect"
	for tok in "${toks[@]}"; do
		case $tok in
		noxattrs) flags+=(--no-xattrs) ;;
		esac
	done
	if [[ ,$expect, == *,extract,* ]]; then
		local dir=$SCRATCH/extract/$(basename "$image" .img)
		rm -rf "$dir"
		mkdir -p "$SCRATCH/extract"
		"$FSCK" --extract="$dir" --preserve \
			${BLOB[$(basename "$image" .img)]:+--device=${BLOB[$(basename "$image" .img)]}} \
			"$image" > "$dir.log" 2>&1 ||
			die "fsck.erofs --extract of $image failed (log: $dir.log)"
		"$MANIFEST" "${flags[@]}" "$dir" > "$out.full" || die "manifest of $dir failed"
		# an extracted symlink cannot keep the mode the image gives it (fs_config:
		# init* 0750), so symlink modes are not compared for these lines
		drop_symlink_modes < "$out.full" > "$out" && rm -f "$out.full"
		return
	fi
	key=$(echo "$TREE_DIR ${flags[*]}" | md5sum | cut -c1-12)
	if [ ! -f "$SCRATCH/manifests/$key" ]; then
		# written whole, then renamed: image jobs side by side may both make it
		local part=$SCRATCH/manifests/$key.$BASHPID
		mkdir -p "$SCRATCH/manifests"
		"$MANIFEST" "${flags[@]}" "$TREE_DIR" > "$part" || die "host manifest of $TREE_DIR failed"
		mv -f "$part" "$SCRATCH/manifests/$key"
	fi
	for tok in "${toks[@]}"; do
		case $tok in
		same|noxattrs|extract|overlay|fuse|refuse=*|corrupt=*|kernel=*|digest=*) ;;
		ours61) ;;
		uid=*) sed_prog+=(-e "s/ uid=[0-9]+ / uid=${tok#uid=} /") ;;
		gid=*) sed_prog+=(-e "s/ gid=[0-9]+ / gid=${tok#gid=} /") ;;
		mtime=*) sed_prog+=(-e "s/ mtime=-?[0-9]+\.[0-9]+/ mtime=${tok#mtime=}.000000000/") ;;
		*) die "matrix: unknown EXPECT token '$tok'" ;;
		esac
	done
	if [ ${#sed_prog[@]} -gt 0 ]; then
		sed -E "${sed_prog[@]}" "$SCRATCH/manifests/$key" > "$out"
	else
		cp "$SCRATCH/manifests/$key" "$out"
	fi
	for tok in "${toks[@]}"; do
		if [[ $tok == digest=* ]]; then
			add_digests "${tok#digest=}" "$out"
		fi
	done
}

# EXPECT digest=NAME (mkfs --xattr-inode-digest=NAME): every non-empty
# regular file of TREE_DIR shows NAME = "sha256:" + the SHA-256 of its bytes
add_digests() { # NAME MANIFEST
	python3 - "$1" "$2" "$TREE_DIR" <<'PY' || die "digest manifest edit failed"
import hashlib, os, re, sys
name, path, tree = sys.argv[1], sys.argv[2], sys.argv[3]
unesc = lambda t: re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), t)
esc = lambda b: "".join(chr(c) if 33 <= c < 127 and chr(c) not in "\\%=;" else "%%%02X" % c for c in b)
lines = []
for line in open(path, "rb").read().decode("latin-1").splitlines():
    toks = line.split(" ")
    if "type=reg" in toks and "size=0" not in toks:
        rel = unesc(toks[0].encode("latin-1"))
        with open(os.path.join(tree.encode(), rel), "rb") as f:
            value = b"sha256:" + hashlib.sha256(f.read()).digest()
        pairs = []
        for i, t in enumerate(toks):
            if t.startswith("xattrs="):
                pairs = t[len("xattrs="):].split(";")
                del toks[i]
                break
        pairs.append(esc(name.encode()) + "=" + value.hex())
        pairs.sort(key=lambda p: unesc(p.split("=")[0].encode("latin-1")))
        toks.append("xattrs=" + ";".join(pairs))
    lines.append(" ".join(toks))
open(path, "w", encoding="latin-1").write("\n".join(lines) + "\n")
PY
}

# --tar=f lines: TAR_SOURCE is what mkfs images instead of the tree, and
# TREE_DIR becomes what the guest must show: what tar -x makes of a pax tar
# of the tree; for the layer tree, its layer, and (EXPECT overlay) the tree
# a container runtime shows, the layer mounted over the lower tree's image
tar_source() { # TREE EXPECT
	if [ "$1" = layer ]; then
		TAR_SOURCE=$SCRATCH/trees/layer/upper.tar
		TREE_DIR=$SCRATCH/trees/layer/merged
		return
	fi
	TAR_SOURCE=$SCRATCH/trees/$1.tar
	[ -f "$TAR_SOURCE" ] || tar --format=pax --xattrs --xattrs-include='*' -cf "$TAR_SOURCE" \
		-C "$TREE_DIR" . 2>/dev/null || die "cannot make a tar of $TREE_DIR"
	TREE_DIR=$SCRATCH/trees/$1-tar-x
	[ -d "$TREE_DIR" ] || { mkdir -p "$TREE_DIR" && tar --xattrs --xattrs-include='*' \
		--numeric-owner -xpf "$TAR_SOURCE" -C "$TREE_DIR" 2>/dev/null; } ||
		die "cannot extract $TAR_SOURCE"
}

# EXPECT overlay: the lower layer's image, NAME-lower, made and checked on its own too
add_lower_image() { # NAME
	local lower=$1-lower
	prepare_tree layer
	"$MKFS" "$SCRATCH/img/$lower.img" "$TREE_DIR" > "$OUT/mkfs-$lower.log" 2>&1 ||
		die "mkfs of the lower layer failed (log: $OUT/mkfs-$lower.log)"
	expected_manifest same "$OUT/expected/$lower"
	NAMES+=("$lower")
	KIND[$lower]=mount
	IMG[$lower]=$SCRATCH/img/$lower.img
	# it boots wherever its layer does: the guest mounts it under the overlay
	KMIN[$lower]=${KMIN[$1]}
	KMAX[$lower]=${KMAX[$1]}
	ALGS[$lower]=0
	GUEST_KIND[$1]=overlay=$lower
}

# rebuild mode (@layers@, @zlayers@): the layer tree's lower directory and
# upper tar as two EROFS layer images, made by the mkfs under test
# (@layers@: uncompressed without inline tails, which a metadata-only merge
# can point into; @zlayers@: compressed with tails and fragments, for
# --clean=data).  plan_layer_images NAME: LAYER_IMAGES lists them bottom
# first, and TREE_DIR becomes what a container runtime shows of the two
plan_layer_images() {
	prepare_tree layer
	LAYER_IMAGES="$SCRATCH/img/$1.l1 $SCRATCH/img/$1.l2"
	TREE_DIR=$SCRATCH/trees/layer/merged
}

# make_layer_images NAME ARGS LOG: makes them (in make_image's job)
make_layer_images() {
	local base=$SCRATCH/img/$1 z=(-Enoinline_data) zu=(-Enoinline_data)
	[[ $2 != *@zlayers@* ]] || { z=(-zlz4hc); zu=(-zlz4hc -Eztailpacking,fragments); }
	"$MKFS" --quiet "${z[@]}" "$base.l1" "$SCRATCH/trees/layer/lower" > "$3" 2>&1 &&
		"$MKFS" --quiet "${zu[@]}" --tar=f --aufs "$base.l2" "$SCRATCH/trees/layer/upper.tar" >> "$3" 2>&1
}

drop_symlink_modes() { sed -E '/^[^ ]* type=lnk /s/ mode=[0-7]+//'; }

# last non-empty line of a log, without progress-bar escapes, shortened
last_line() {
	tr '\r' '\n' < "$1" | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e '/^[[:space:]]*$/d' |
		tail -n 1 | cut -c1-120
}

# --tar=i,MAPFILE: copies the tar's bytes the map file names into the
# image's blocks (what a device-mapper table over the tar would show)
apply_mapfile() {
	local img=$1 map=$2 tar=$3 blksz blk n off zeroed
	blksz=$((1 << $(od -An -tu1 -j 1036 -N 1 "$img")))
	while read -r blk n off zeroed; do
		dd if="$tar" of="$img" bs=1M iflag=skip_bytes,count_bytes oflag=seek_bytes \
			skip=$((16#$off)) seek=$((16#$blk * blksz)) \
			count=$((16#$n * blksz - 10#${zeroed:-0})) conv=notrunc status=none || return 1
	done < "$map"
}

# split_kernel_token NAME EXPECT: takes "kernel=MIN[-MAX]" (the oldest, and
# for refusals of a feature later kernels know, the newest, stock kernel the
# line runs on; default 6.1) out of EXPECT into KMIN[NAME] and KMAX[NAME];
# the rest of EXPECT (default "same") -> EXPECT_REST
split_kernel_token() {
	local name=$1 tok range=6.1 toks
	EXPECT_REST=
	IFS=, read -ra toks <<< "$2"
	for tok in "${toks[@]}"; do
		case $tok in
		kernel=*) range=${tok#kernel=} ;;
		*) EXPECT_REST+=${EXPECT_REST:+,}$tok ;;
		esac
	done
	[ -n "$EXPECT_REST" ] || EXPECT_REST=same
	[[ $range =~ ^[0-9]+\.[0-9]+(-[0-9]+\.[0-9]+)?$ ]] ||
		die "matrix: '$name': kernel=$range is not X.Y or X.Y-X.Y"
	KMIN[$name]=${range%-*}
	KMAX[$name]=
	[[ $range != *-* ]] || KMAX[$name]=${range#*-}
}

# version_ge A B: A >= B, comparing dotted numbers field by field (a missing
# field counts 0).  In bash alone: the initramfs step asks it thousands of
# times, and a fork costs milliseconds on some CI hosts.
version_ge() {
	local IFS=. a b i x y
	read -ra a <<< "$1"
	read -ra b <<< "$2"
	for ((i = 0; i < ${#a[@]} || i < ${#b[@]}; i++)); do
		x=${a[i]:-0} y=${b[i]:-0}
		[[ $x =~ ^[0-9]+$ && $y =~ ^[0-9]+$ ]] || die "version_ge: '$1' or '$2' is not a dotted version"
		((10#$x == 10#$y)) || return $((10#$x < 10#$y))
	done
	return 0
}
# kver_short KVER VAR: VAR = the series, 6.12.95+deb12-amd64 -> 6.12; set,
# not printed, as kernel_series: runs_on_kernel asks once per image and target
kver_short() {
	if [[ $1 =~ ^([0-9]+\.[0-9]+) ]]; then printf -v "$2" %s "${BASH_REMATCH[1]}"; else printf -v "$2" %s "$1"; fi
}

# runs_on_kernel KVER NAME: is image NAME given to kernel KVER?  Its
# version must lie within the line's kernel= range; the hostile cases
# (regressions of kmod/'s 6.1 patches) run on the 6.1 kernel only, and
# ours61 lines (codecs our 6.1 module adds) run there whatever their range.
runs_on_kernel() {
	local v
	# ours61 lines: our 6.1 module reads them, Debian's must refuse them
	[ -z "${OURS61[$2]:-}" ] || [ "$1" != "$HOST_KVER" ] || return 0
	# the newer kernels' findings: where fuzz-findings.list has a column
	[ "${KIND[$2]}" != finding ] || finding_runs_on "$1" "$2" || return 1
	kver_short "$1" v
	version_ge "$v" "${KMIN[$2]}" || return 1
	[ -z "${KMAX[$2]}" ] || version_ge "${KMAX[$2]}" "$v" || return 1
	[ "${KIND[$2]}" != hostile ] || [ "$1" = "$HOST_KVER" ]
}

# check_line_kernel NAME MKFS-LOG: our mkfs's summary names the oldest Linux
# that mounts the image ("needs Linux 6.4 (...; 6.1.113 and later 6.1 too)"):
# the line's kernel= must not be older (an LTS series that backported the
# feature counts).  erofs-utils' mkfs prints no such line: nothing to check.
check_line_kernel() {
	local name=$1 log=$2 needs lts
	needs=$(sed -n 's/.*: needs Linux \([0-9]*\.[0-9]*\) .*/\1/p' "$log" | tail -n 1)
	[ -n "$needs" ] || return 0
	if [ "${REFUSE[$name]:-}" = unread ]; then
		# the line's kernels must all be older than the one mkfs names
		[ -n "${KMAX[$name]}" ] && ! version_ge "${KMAX[$name]}" "$needs" && return 0
		report_fail "matrix/$name" "refuse=unread on kernel=${KMIN[$name]}-${KMAX[$name]}, but mkfs: $(grep -m1 'needs Linux' "$log" | sed 's/^[^:]*: //')" "$MATRIX"
		return
	fi
	lts=$(sed -n 's/.*; \([0-9]*\.[0-9]*\)\.[0-9]* and later .*/\1/p' "$log" | tail -n 1)
	version_ge "${KMIN[$name]}" "$needs" && return 0
	[ "${KMIN[$name]}" = "$lts" ] && return 0
	report_fail "matrix/$name" "the line says kernel=${KMIN[$name]}, mkfs: $(grep -m1 'needs Linux' "$log" | sed 's/^[^:]*: //')" "$MATRIX"
}

# image_algs IMG: the superblock's compression algorithm bitmap (bit 1 LZMA,
# 2 DEFLATE, 3 ZSTD), 0 without COMPR_CFGS (LZ4 or nothing)
image_algs() {
	local incompat
	incompat=$(od -An -tu4 -j $((1024 + 80)) -N 4 "$1" | tr -d ' ')
	if (( ${incompat:-0} & 2 )); then
		od -An -tu2 -j $((1024 + 84)) -N 2 "$1" | tr -d ' '
	else
		echo 0
	fi
}

# kernel_lacks_codec KVER NAME: prints the CONFIG_EROFS_FS_ZIP_* option that
# image NAME needs and kernel KVER was built without (Debian's 6.1 has no
# LZMA, for one); false when it lacks none
kernel_lacks_codec() {
	local algs=${ALGS[$2]:-0} config=${KROOT_OF[$1]:-}/boot/config-$1 bit codec
	[ "$algs" -gt 1 ] && [ -f "$config" ] || return 1
	# on 6.1 our module has every codec, and Debian's must refuse (evaluate)
	[ -z "${OURS61[$2]:-}" ] || [ "$1" != "$HOST_KVER" ] || return 1
	for bit in 1:LZMA 2:DEFLATE 3:ZSTD; do
		codec=${bit#*:}
		(( algs >> ${bit%%:*} & 1 )) || continue
		grep -q "^CONFIG_EROFS_FS_ZIP_$codec=y" "$config" ||
			{ echo "CONFIG_EROFS_FS_ZIP_$codec"; return 0; }
	done
	return 1
}

# Builds every matrix image.  Fills NAMES[], KIND[] (mount|refuse|corrupt),
# IMG[]; prints SKIP lines and counts mkfs failures as FAILs up front.
# The lines are read and planned here, in order (trees, tars of trees and
# every array are made in this shell); each image's own work (its mkfs
# runs, craft, expected manifest) is make_image's, IMAGE_JOBS at a time;
# collect_image then takes the results in matrix order.
build_images() {
	local line name tree expect args lacking kind t0=$SECONDS planned=() running=0
	NAMES=()
	mkdir -p "$SCRATCH/img" "$OUT/expected" "$SCRATCH/status"
	declare -gA J_KIND J_EXPECT
	while read -r line; do
		line=${line%%#*}
		[ -n "${line//[[:space:]]/}" ] || continue
		read -r name tree expect args <<< "$line"
		[ -n "$expect" ] || die "matrix: line for '$name' has no EXPECT"
		[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "matrix: bad name '$name'"
		[ -z "$ONLY" ] || [[ $name =~ $ONLY ]] || continue
		split_kernel_token "$name" "$expect"
		expect=$EXPECT_REST
		# files the matrix names live beside it
		args=${args//@srcdir@/$top_srcdir/qemu-tests}
		# shellcheck disable=SC2086 # ARGS are words by design
		set -- $args
		if lacking=$(mkfs_lacks_option "$@"); then
			report_skip "$name" "mkfs does not offer $lacking"
			continue
		fi
		case $expect in
		refuse=*) kind=refuse
			REFUSE[$name]=${expect#refuse=}
			REFUSE[$name]=${REFUSE[$name]%%:*}
			[ -n "${REFUSE_RE[${REFUSE[$name]}]:-}" ] || die "matrix: unknown refusal '$expect'" ;;
		corrupt=*) kind=corrupt ;;
		hostile=*) kind=hostile
			hostile_plan "$name" "$expect" ;;
		*) kind=mount ;;
		esac
		if [[ ,$expect, == *,fuse,* ]]; then
			# mounted by erofsfuse in the guest instead of the kernel's erofs
			if [ ! -x "$EROFSFUSE" ]; then
				report_skip "$name" "no erofsfuse at $EROFSFUSE (not built: configure found no libfuse3, or EROFSFUSE unset)"
				continue
			fi
			GUEST_KIND[$name]=fuse
		fi
		prepare_tree "$tree"
		# @tree@ stands for the tree's own folder (rule files inside it)
		args=${args//@tree@/$TREE_DIR}
		# @blob@: a second device (--blobdev), attached beside the image
		[[ $args != *@blob@* ]] || BLOB[$name]=$SCRATCH/img/$name.blob
		args=${args//@blob@/$SCRATCH/img/$name.blob}
		local source=$TREE_DIR map= base_args=() layers=
		LAYER_IMAGES=
		if [[ $args =~ @[a-z]*incremental@ ]]; then
			# --incremental: the image starts as the layer tree's lower
			# directory (@zincremental@: LZ4HC in 64 KiB pclusters, which
			# stay in place; @fincremental@: with tails and fragments, which
			# are read back), the tar layer is added
			base_args=(--quiet)
			[[ $args != *@zincremental@* ]] || base_args+=(-zlz4hc -C65536)
			[[ $args != *@fincremental@* ]] || base_args+=(-zlz4hc -Eztailpacking,fragments)
			[[ $args != *@lzmaincremental@* ]] || base_args+=(-zlzma -C65536)
			args=${args//@incremental@/}
			args=${args//@zincremental@/}
			args=${args//@fincremental@/}
			args=${args//@lzmaincremental@/}
		fi
		if [[ $args == *@layers@* || $args == *@zlayers@* ]]; then
			# rebuild mode: the layer tree's two layers as EROFS images
			layers=$args
			plan_layer_images "$name"
			[[ $args == *--clean* ]] || BLOB[$name]=$LAYER_IMAGES	# metadata only
			args=${args//@layers@/}
			args=${args//@zlayers@/}
			source=$LAYER_IMAGES
		fi
		local tar_of=
		if [[ $args == *@tar@* ]]; then	# the source: a tar of the tree
			tar_of=$TREE_DIR
			source=$SCRATCH/img/$name.tar
			args=${args//@tar@/}
			[[ " $args " != *" --tar=i "* ]] || BLOB[$name]=$source	# its extra device
			[[ " $args " != *" --tar=headerball "* ]] || source=$source.hb	# its headers only
			[[ $args != *@map@* ]] || map=$SCRATCH/img/$name.map
			args=${args//@map@/$map}
		fi
		if [[ " $args " == *" --tar=f "* ]]; then
			tar_source "$tree" "$expect"
			source=$TAR_SOURCE
		fi
		local sources=("$source")
		# shellcheck disable=SC2206 # two layer files, words by design
		[ "$source" != "${LAYER_IMAGES:-}" ] || sources=($source)
		J_KIND[$name]=$kind J_EXPECT[$name]=$expect
		planned+=("$name")
		# (wait -n returns at once for a job that has already ended)
		while [ "$running" -ge "$IMAGE_JOBS" ]; do
			wait -n || true
			running=$((running - 1))
		done
		make_image "$name" "$expect" "${base_args[*]}" "$layers" "$tar_of" "$map" "$args" "${sources[@]}" < /dev/null &
		running=$((running + 1))
	done < <(cat "$MATRIX" ${HOSTILE_LIST:+"$HOSTILE_LIST"})
	wait || true
	for name in "${planned[@]}"; do
		collect_image "$name"
	done
	msg "${#NAMES[@]} image(s) built in $((SECONDS - t0)) s with $MKFS ($IMAGE_JOBS at a time)"
	add_findings
}

# make_image NAME EXPECT BASE-ARGS LAYERS TAR-OF MAP ARGS SOURCE...: one
# image's work, in a background job: the --incremental base (made with
# BASE-ARGS, when given), the rebuild layers (LAYERS: the line's ARGS, when
# they name @layers@ or @zlayers@), the tar of folder TAR-OF, the mkfs, the
# map file, the craft and the expected manifest.  Ends by writing
# $SCRATCH/status/NAME: "ok", or "fail" with the reason and the log on
# the next two lines, for collect_image.
make_image() {
	local name=$1 expect=$2 base_args=$3 layers=$4 tar_of=$5 map=$6 args=$7
	shift 7
	local sources=("$@") img=$SCRATCH/img/$name.img log=$OUT/mkfs-$name.log status=$SCRATCH/status/$name
	image_fail() { printf 'fail\n%s\n%s\n' "$1" "$2" > "$status"; exit 0; }
	# shellcheck disable=SC2086 # BASE-ARGS are words by design
	if [ -n "$base_args" ] &&
	   ! "$MKFS" $base_args "$img" "$SCRATCH/trees/layer/lower" > "$log" 2>&1; then
		image_fail "mkfs of the base failed: $(last_line "$log")" "$log"
	fi
	if [ -n "$layers" ] && ! make_layer_images "$name" "$layers" "$log"; then
		image_fail "mkfs of a layer failed: $(last_line "$log")" "$log"
	fi
	if [ -n "$tar_of" ]; then
		local tarball=$SCRATCH/img/$name.tar
		tar --format=pax --xattrs --xattrs-include='*' -C "$tar_of" -cf "$tarball" . ||
			image_fail "cannot make $tarball" "$log"
		if [ "${sources[0]}" = "$tarball.hb" ]; then
			python3 "$top_srcdir/tests/tar-headerball.py" "$tarball" "$tarball.hb" ||
				image_fail "cannot make the headerball of $tarball" "$log"
		fi
	fi
	# shellcheck disable=SC2086 # ARGS are words by design
	set -- $args
	if ! "$MKFS" "$@" "$img" "${sources[@]}" > "$log" 2>&1 ||
	   { [ -n "$map" ] && ! apply_mapfile "$img" "$map" "${sources[0]}" >> "$log" 2>&1; }; then
		image_fail "mkfs failed: $(last_line "$log")" "$log"
	fi
	local craft=()
	case $expect in
	refuse=incompat:*) craft=(incompat "$img" "${expect#refuse=incompat:}") ;;
	refuse=unread) ;;
	refuse=*) craft=("${expect#refuse=}" "$img") ;;
	corrupt=flip) craft=(flip "$img" "$CANARY_MARKER") ;;
	hostile=*) craft=(hostile "$expect" "$img") ;;
	esac
	if [ ${#craft[@]} -gt 0 ] &&
	   ! run_craft "${craft[@]}" > "$OUT/craft-$name.log" 2>&1; then
		image_fail "cannot craft the image: $(last_line "$OUT/craft-$name.log")" "$OUT/craft-$name.log"
	fi
	rm -f "$OUT/craft-$name.log"
	case $expect in
	refuse=*|hostile=*) ;;
	*) expected_manifest "$expect" "$OUT/expected/$name" "$img" ;;
	esac
	echo ok > "$status"
}

# collect_image NAME: a finished make_image, in matrix order: its failure
# reported for every mode, or the image listed (NAMES[] and the rest)
collect_image() {
	local name=$1 status=$SCRATCH/status/$1 result why log mode
	[ -f "$status" ] || die "building image $name stopped (see the messages above)"
	{ read -r result; IFS= read -r why; IFS= read -r log; } < "$status" || true	# "ok" is one line
	if [ "$result" != ok ]; then
		for mode in $MODES; do
			report_fail "$mode/$name" "$why" "$log"
		done
		return
	fi
	check_line_kernel "$name" "$OUT/mkfs-$name.log"
	rm -f "$OUT/mkfs-$name.log"
	[ "${J_EXPECT[$name]}" != overlay ] || add_lower_image "$name"
	NAMES+=("$name")
	KIND[$name]=${J_KIND[$name]}
	ALGS[$name]=$(image_algs "$SCRATCH/img/$name.img")
	[[ ,${J_EXPECT[$name]}, != *,extract,* ]] || NO_SYMLINK_MODE[$name]=1
	[[ ,${J_EXPECT[$name]}, != *,ours61,* ]] || OURS61[$name]=1
	IMG[$name]=$SCRATCH/img/$name.img
}

# ---------------------------------------------------------- guest side ---

build_data_disk() {
	local name off=0 size i=0
	DATA_DISK=$SCRATCH/data.img
	: > "$DATA_DISK"
	: > "$SCRATCH/images"
	for name in "${NAMES[@]}"; do
		size=$(stat -c %s "${IMG[$name]}")
		dd if="${IMG[$name]}" of="$DATA_DISK" bs=1M seek=$((off / ALIGN)) \
			conv=sparse,notrunc status=none
		local blob='' end=$((off + size)) dev dev_off dev_size
		# extra devices (space-separated files) right after the image: OFFSET SIZE each
		for dev in ${BLOB[$name]:-}; do
			dev_off=$(( (end + ALIGN - 1) / ALIGN * ALIGN ))
			dev_size=$(stat -c %s "$dev")
			dd if="$dev" of="$DATA_DISK" bs=1M seek=$((dev_off / ALIGN)) \
				conv=sparse,notrunc status=none
			blob="${blob:+$blob }$dev_off $dev_size"
			end=$((dev_off + dev_size))
		done
		echo "$i $name $off $size ${GUEST_KIND[$name]:-manifest}${blob:+ $blob}" >> "$SCRATCH/images"
		INDEX[$name]=$i
		off=$(( (end + ALIGN - 1) / ALIGN * ALIGN ))
		i=$((i + 1))
	done
	truncate -s "$off" "$DATA_DISK"
	# results slot: big enough for the largest manifest twice over
	local biggest=0 f
	for f in "$OUT"/expected/*; do
		[ -f "$f" ] || continue
		size=$(stat -c %s "$f")
		[ "$size" -gt "$biggest" ] && biggest=$size
	done
	SLOT_BYTES=$(( (2 * biggest + 2 * 1024 * 1024 + ALIGN - 1) / ALIGN * ALIGN ))
}

# build_initramfs KVER KROOT: the initramfs for one kernel (with our
# module for it: kmod/'s on the host's 6.1, OURKO_OF[] on a newer one)
# -> INITRAMFS_OF[KVER]; for each target of the kernel the images it runs
# in /forge/images-MODE (the guest's forge.mode), their number in
# IMAGES_OF[TARGET]
build_initramfs() {
	local KVER=$1 KROOT=$2 OUR_KO=$OUR_KO
	local root=$SCRATCH/initramfs-$1 idx name rest n t list=
	[ "$1" = "$HOST_KVER" ] || OUR_KO=${OURKO_OF[$1]:-}
	initramfs_base "$root"
	cp "$SCRATCH/bin/erofs-manifest" "$SCRATCH/bin/guest-loop" "$SCRATCH/bin/hostile-walk" "$root/bin/"
	guest_erofsfuse "$root"
	for t in "${TARGETS[@]}"; do
		[ "${T_KVER[$t]}" = "$KVER" ] || continue
		n=0
		: > "$root/forge/images-${T_MODE[$t]}"
		while read -r idx name rest; do
			runs_on_target "$t" "$name" || continue
			! kernel_lacks_codec "$KVER" "$name" > /dev/null || continue
			echo "$idx $name $rest" >> "$root/forge/images-${T_MODE[$t]}"
			n=$((n + 1))
		done < "$SCRATCH/images"
		IMAGES_OF[$t]=$n
		list="$list, $t $n"
	done
	cat > "$root/forge/conf" <<-EOF
		SLOT_BYTES=$SLOT_BYTES
		IMAGE_LIMIT=${LIMIT_OF[$KVER]}
		OUR_VERSION=$OUR_VERSION
		FINDING_WALK=$FINDING_WALK
		FINDING_KILL=$FINDING_KILL
		FINDING_CAP=$FINDING_CAP
	EOF
	INITRAMFS_OF[$KVER]=$SCRATCH/initramfs-$KVER.cpio.gz
	pack_initramfs "$root" "${INITRAMFS_OF[$KVER]}"
	msg "initramfs for $KVER: $(( $(stat -c %s "${INITRAMFS_OF[$KVER]}") / 1024 )) KiB; image(s): ${list#, }"
}

# The boot targets: "ours" and "stock" of MODES on KVER, and "X.Y/stock"
# for each kernel of KERNELS that fetch-kernel.sh delivers (a SKIP verdict
# naming the reason for one it cannot), and "X.Y/ours" for those of
# OURS_KERNELS (findings.sh).  Fills TARGETS[], T_KVER[], T_KROOT[], T_MODE[].
setup_targets() {
	local mode series line kver kroot target
	TARGETS=()
	for mode in $MODES; do
		case $mode in ours|stock) ;; *) die "MODES: unknown mode '$mode'" ;; esac
		TARGETS+=("$mode")
		T_KVER[$mode]=$KVER T_KROOT[$mode]= T_MODE[$mode]=$mode
	done
	KROOT_OF[$KVER]= LIMIT_OF[$KVER]=$IMAGE_LIMIT
	# the newer kernels run Debian's own module (stock), and ours (built
	# by kmod/build-612.sh or build-7x.sh) for the series of OURS_KERNELS
	for series in $KERNELS; do
		[[ " $MODES " == *" stock "* ]] || { [[ " $MODES " == *" ours "* ]] &&
			[[ " $OURS_KERNELS " == *" $series "* ]]; } || continue
		if ! line=$(top_builddir=$top_builddir bash "$here/fetch-kernel.sh" "$series" "$KERNEL_DIR" \
			2> "$OUT/fetch-$series.log"); then
			report_skip "$series" "no kernel: $(tail -n 1 "$OUT/fetch-$series.log" | sed 's/^fetch-kernel.sh: //')"
			continue
		fi
		read -r kver kroot <<< "$line"
		KROOT_OF[$kver]=$kroot LIMIT_OF[$kver]=$KERNEL_IMAGE_LIMIT
		if [[ " $MODES " == *" stock "* ]]; then
			kver_short "$kver" target
			target=$target/stock
			TARGETS+=("$target")
			T_KVER[$target]=$kver T_KROOT[$target]=$kroot T_MODE[$target]=stock
			msg "kernel $kver for $target: $kroot"
		fi
		if [[ " $MODES " == *" ours "* && " $OURS_KERNELS " == *" $series "* ]]; then
			ours_target "$series" "$kver" "$kroot"
		fi
	done
}

# erofsfuse, the shared libraries it needs (as ldd lists them) and the
# fuse module into the initramfs, when a matrix line uses it
guest_erofsfuse() { # ROOT
	local root=$1 name lib src
	for name in "${NAMES[@]}"; do
		[ "${GUEST_KIND[$name]:-}" = fuse ] || continue
		install -m 0755 "$EROFSFUSE" "$root/bin/erofsfuse"
		for lib in $(ldd "$EROFSFUSE" | grep -oE '/[^ ]+'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
		src=$(find_module fuse)
		if [ -n "$src" ]; then
			copy_module "$src" "$root/lib/forge/fuse.ko"
		else
			grep -q '/fuse.ko' "$(moddir)/modules.builtin" ||
				die "no fuse module for $KVER"
		fi
		return
	done
}

# a FUSE walk of the gen tree takes 30-50 s under TCG: more time per boot
fuse_boot_seconds() {
	local name n=0
	for name in "${NAMES[@]}"; do
		[ "${GUEST_KIND[$name]:-}" = fuse ] && n=$((n + 1))
	done
	echo $((60 * n))
}

# ------------------------------------------------------------------ boot ---

# boot MODE START BOOTNO: runs QEMU until poweroff, crash, or watchdog.
# Sets BOOT_END (alldone|crash|timeout|hang) and BOOT_LAST (index running
# when it ended, -1 if none).
boot() {
	local mode=$1 start=$2 n=$3
	local dir=$OUT/$mode
	local log=$dir/serial-$n.log results=$dir/results-$n.img
	local nimg=${#NAMES[@]} t0=$SECONDS last_marker=$SECONDS markers=0 now m
	local KVER=${T_KVER[$mode]} KROOT=${T_KROOT[$mode]} limit=${LIMIT_OF[${T_KVER[$mode]}]}
	# a longer image limit leaves room for two such slow images per boot
	local boot_limit=$((BOOT_LIMIT + 2 * (limit - IMAGE_LIMIT)))
	local INITRAMFS=${INITRAMFS_OF[${T_KVER[$mode]}]}
	mkdir -p "$dir"
	rm -f "$results"
	truncate -s $(( (nimg + 1) * SLOT_BYTES )) "$results"
	# A loaded TCG host starves the guest: no_timer_check, or 6.12+ panics
	# in its IO-APIC timer check ("IO-APIC + timer doesn't work!") where 6.1
	# only complained; RCU stall reports only past 300 s (the host watchdog
	# catches real hangs), or 6.12 logs stalls of a 21 s host hiccup
	qemu_start "$log" \
		"console=ttyS0 panic=-1 oops=panic panic_on_warn=0 quiet no_timer_check rcupdate.rcu_cpu_stall_timeout=300 forge.mode=${T_MODE[$mode]} forge.start=$start${BOOT_APPEND:+ $BOOT_APPEND}" \
		-drive "file=$DATA_DISK,format=raw,if=none,id=data,readonly=on" \
		-device virtio-blk-pci,drive=data,serial=forgedata \
		-drive "file=$results,format=raw,if=none,id=out" \
		-device virtio-blk-pci,drive=out,serial=forgeout
	BOOT_END=
	while kill -0 "$QEMU_PID" 2>/dev/null; do
		sleep 1
		now=$SECONDS
		m=$(grep -c '^forge: ' "$log" 2>/dev/null || true)
		if [ "$m" != "$markers" ]; then
			markers=$m
			last_marker=$now
		fi
		if [ $((now - t0)) -ge "$boot_limit" ]; then
			BOOT_END=timeout
		elif grep -aq '^forge: STUCK' "$log"; then
			BOOT_END=hang	# a finding's walk outlived SIGKILL
		elif [ $((now - last_marker)) -ge $((limit + 30)) ]; then
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
	if grep -q '^forge: ALLDONE' "$log"; then
		BOOT_END=alldone
	elif [ -z "$BOOT_END" ]; then
		BOOT_END=crash
	fi
	# the image that was running when the guest stopped
	BOOT_LAST=-1
	local last_run last_done
	last_run=$(sed -n 's/^forge: RUN \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
	last_done=$(sed -n 's/^forge: DONE \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
	if [ -n "$last_run" ] && [ "$last_run" != "$last_done" ]; then
		BOOT_LAST=$last_run
	fi
	# unpack every slot that was written, in one pass: each holds a tar
	# archive and the rest of the disk is zeros, which --ignore-zeros reads
	# past (a dd and a tar per slot took 8 s a boot, findings' boots of
	# one image included); an archive the guest did not finish ends in
	# zeros inside its own slot, as a slot holds its whole archive
	mkdir -p "$dir/slots"
	tar -x --ignore-zeros -f "$results" -C "$dir/slots" 2>/dev/null || true
	[ -d "$dir/slots/boot" ] && rm -rf "$dir/boot-$n" && mv "$dir/slots/boot" "$dir/boot-$n"
	rm -f "$results"
	msg "$mode boot $n: $BOOT_END after ${BOOT_SECONDS} s"
}

# --------------------------------------------------------------- verdicts ---

PASSED=0 FAILED=0 SKIPPED=0
verdict() { echo "$1"; echo "$1" >> "$OUT/verdicts"; }
report_pass() { verdict "PASS: $1${2:+ ($2)}"; PASSED=$((PASSED + 1)); }
report_fail() { verdict "FAIL: $1 ($2; log: $3)"; FAILED=$((FAILED + 1)); }
report_skip() { verdict "SKIP: $1 ($2)"; SKIPPED=$((SKIPPED + 1)); }

# kernel_line_class: an awk function over $0, shared by the two readers
# below: 2 an oops (bad whatever the mode), 1 bad in strict mode (any
# error, any erofs warning, any I/O error, noise aside), else 0
KERNEL_LINE_AWK='
function kernel_line_class(  lvl) {
	lvl = -1
	if (match($0, /^<[0-9]+>/)) lvl = substr($0, 2, RLENGTH - 2) % 8
	if ($0 ~ oops) return 2
	if ($0 ~ noise) return 0
	if ($0 ~ ioerr || (lvl >= 0 && lvl <= 3) || (lvl == 4 && $0 ~ /erofs/)) return 1
	return 0
}'

# Kernel log lines of concern in file $1; $2 = strict (1: any error, any
# erofs warning or any I/O error counts) or 0 (only oopses).
bad_kernel_lines() {
	awk -v strict="$2" -v oops="$OOPS_RE" -v noise="$NOISE_RE" -v ioerr="$IOERR_RE" "$KERNEL_LINE_AWK"'
	{ c = kernel_line_class(); if (c == 2 || (strict && c == 1)) print }' "$1"
}

# kernel_verdict DMESG: bad_kernel_lines' two answers from one awk run, for
# evaluate's ~770 images: KBAD_OOPS, the first line of the non-strict
# check (an oops), KBAD_ANY the first of the strict one; both empty when
# there is none (or no file)
kernel_verdict() {
	KBAD_OOPS= KBAD_ANY=
	[ -f "$1" ] || return 0
	{ IFS= read -r KBAD_OOPS; IFS= read -r KBAD_ANY; } < <(awk -v oops="$OOPS_RE" -v noise="$NOISE_RE" \
		-v ioerr="$IOERR_RE" "$KERNEL_LINE_AWK"'
	{
		c = kernel_line_class()
		if (c == 2 && !seen_oops) { first_oops = $0; seen_oops = 1 }
		if (c >= 1 && !seen_any) { first_any = $0; seen_any = 1 }
	}
	END { print first_oops; print first_any }' "$1")
}

# file_line FILE VAR: VAR = the first line of FILE, '' when it is missing;
# no fork (evaluate reads four small files per image)
file_line() {
	printf -v "$2" '%s' ''
	[ -r "$1" ] && IFS= read -r "$2" < "$1" || true
}

# span_seconds START END VAR: VAR = "N.N s" between two /proc/uptime
# readings ("? s" without both), in bash
span_seconds() {
	local a=$1 b=$2 ai af bi bf cs
	[[ $a =~ ^[0-9]+(\.[0-9]*)?$ && $b =~ ^[0-9]+(\.[0-9]*)?$ ]] || { printf -v "$3" '? s'; return; }
	ai=${a%%.*} bi=${b%%.*}
	af=${a#"$ai"} bf=${b#"$bi"}
	af=${af#.}00 bf=${bf#.}00
	cs=$(( (10#$bi * 100 + 10#${bf:0:2}) - (10#$ai * 100 + 10#${af:0:2}) + 5 ))
	printf -v "$3" '%d.%d s' $((cs / 100)) $((cs / 10 % 10))
}

# dmesg -r lines without the "<level>[time] " prefix, test markers dropped;
# 6.15+'s "erofs (device X): " spelled as the older "erofs: (device X): "
kernel_text() {
	sed -e '/erofs-forge-test:/d' -e 's/^<[0-9]*>\[[^]]*\] *//' \
		-e 's/^erofs (device /erofs: (device /' "$1"
}

check_boot_record() { # MODE DIR HOW-THE-BOOT-ENDED WALL-SECONDS
	local mode=$1 rec=$2 how=$3 secs=$4 version bad
	if [ ! -d "$rec" ]; then
		report_fail "$mode/boot" "no boot record from the guest ($how): $(grep -v '^$' "$OUT/$mode/serial-1.log" | tail -n 1 | cut -c1-120)" "$OUT/$mode/serial-1.log"
		return
	fi
	version=$(cat "$rec/version")
	if [ -f "$rec/insmod.failed" ]; then
		report_fail "$mode/boot" "insmod failed: $(tr '\n' ' ' < "$rec/insmod.failed")" "$rec/insmod.err"
	elif [ "${T_MODE[$mode]}" = ours ] && [ "$version" != "$(our_version_of "$mode")" ]; then
		report_fail "$mode/boot" "module version '$version', expected $(our_version_of "$mode")" "$rec/dmesg"
	elif [ "${T_MODE[$mode]}" = stock ] && [[ $version == erofs-forge* ]]; then
		report_fail "$mode/boot" "stock mode loaded our module ($version)" "$rec/dmesg"
	elif bad=$(bad_kernel_lines "$rec/dmesg" 1) && [ -n "$bad" ]; then
		report_fail "$mode/boot" "kernel: $(head -n 1 <<< "$bad")" "$rec/dmesg"
	else
		report_pass "$mode/boot" "erofs.ko version: $version; images start at $(cat "$rec/uptime") s guest time; whole boot $secs s"
	fi
}

# evaluate MODE NAME: one verdict line for this image
evaluate() {
	local mode=$1 name=$2
	local dir=$OUT/$mode r=$OUT/$mode/slots/$name
	local kind=${KIND[$name]} bad why
	local idx=${INDEX[$name]}
	if [ "$kind" = hostile ]; then
		evaluate_hostile "$mode" "$name"
		return
	fi
	if [ "$kind" = finding ]; then
		evaluate_finding "$mode" "$name"
		return
	fi
	if [ ! -d "$r" ]; then
		why=${ENDED[$mode:$idx]:-}
		if [ -n "$why" ]; then
			report_fail "$mode/$name" "guest $why while this image was running" "$dir/${ENDLOG[$mode:$idx]}"
		else
			report_fail "$mode/$name" "no result from the guest" "$dir"
		fi
		return
	fi
	kernel_verdict "$r/dmesg"
	if [ -n "$KBAD_OOPS" ]; then
		report_fail "$mode/$name" "kernel: ${KBAD_OOPS:0:150}" "$r/dmesg"
		return
	fi
	if [ -f "$r/loop.rc" ]; then
		report_fail "$mode/$name" "loop setup failed: $(head -n 1 "$r/loop.err")" "$r/loop.err"
		return
	fi
	local mrc
	file_line "$r/mount.rc" mrc
	if [ "$kind" = refuse ] || { [ "$mode" = stock ] && [[ $KVER == 6.1.* ]] &&
	   [ -n "${OURS61[$name]:-}" ]; }; then
		local reason want=$STOCK61_REFUSE_RE
		[ "$kind" != refuse ] || want=${REFUSE_RE[${REFUSE[$name]}]}
		# no erofs message (a refusal deep in mount): what mount(8) says
		reason=$(kernel_text "$r/dmesg" | grep -m1 -E 'erofs: ' || head -n 1 "$r/mount.err")
		if [ "$mrc" = 0 ]; then
			report_fail "$mode/$name" "the kernel mounted an image it must refuse" "$r/dmesg"
		elif ! grep -qE -- "$want" <<< "$reason"; then
			report_fail "$mode/$name" "refused, but not with '$want': ${reason:-no kernel message}" "$r/dmesg"
		else
			report_pass "$mode/$name" "refused: ${reason#erofs: }"
		fi
		return
	fi
	if [ "$mrc" != 0 ]; then
		why=$(kernel_text "$r/dmesg" | grep -m1 -E 'erofs: ' || head -n 1 "$r/mount.err")
		report_fail "$mode/$name" "mount failed: $why" "$r/dmesg"
		return
	fi
	local version rc
	file_line "$r/version" version
	if [ "${GUEST_KIND[$name]:-}" = fuse ]; then
		[ "$version" = erofsfuse ] ||
			{ report_fail "$mode/$name" "not mounted by erofsfuse ('$version')" "$r/dmesg"; return; }
	elif [ "${T_MODE[$mode]}" = ours ] && [ "$version" != "${OURVER_OF[${T_KVER[$mode]}]:-$OUR_VERSION}" ]; then
		report_fail "$mode/$name" "mounted by module '$version', not $(our_version_of "$mode")" "$r/dmesg"
		return
	fi
	file_line "$r/manifest.rc" rc
	if [ "$rc" != 0 ]; then
		why="erofs-manifest failed (rc $rc): $(head -n 1 "$r/manifest.err")"
		[ "$rc" = 143 ] &&
			why="erofs-manifest timed out after ${LIMIT_OF[${T_KVER[$mode]}]} s"
		report_fail "$mode/$name" "$why" "$r/manifest.err"
		return
	fi
	file_line "$r/umount.rc" rc
	if [ "$rc" != 0 ]; then
		report_fail "$mode/$name" "umount failed: $(head -n 1 "$r/umount.err")" "$r/umount.err"
		return
	fi
	if [ -f "$r/overflow" ]; then
		report_fail "$mode/$name" "$(cat "$r/overflow")" "$r/overflow"
		return
	fi
	local diff=$r/manifest.diff guest=$r/manifest
	if [ -n "${NO_SYMLINK_MODE[$name]:-}" ]; then
		guest=$r/manifest.compared
		drop_symlink_modes < "$r/manifest" > "$guest"
	fi
	# one cmp where the manifests agree, as nearly all do; the diff only
	# where they do not
	cmp -s "$OUT/expected/$name" "$guest" ||
		diff -u --label "expected/$name" --label "guest/$name" \
			"$OUT/expected/$name" "$guest" > "$diff" || true
	if [ "$kind" = corrupt ]; then
		if [ ! -f "$diff" ]; then
			report_fail "$mode/$name" "corrupted data went undetected" "$r/manifest"
		elif grep -q '^[-+]canary ' "$diff" && [ "$(grep -c '^[-+][^-+]' "$diff")" = 2 ]; then
			report_pass "$mode/$name" "runner detected the flipped byte"
			sed 's/^/    /' "$diff" | cut -c1-160
		else
			report_fail "$mode/$name" "corruption detected but the diff is not the expected one-line change" "$diff"
		fi
		return
	fi
	if [ -f "$diff" ]; then
		report_fail "$mode/$name" "manifest differs: $(grep -c '^[-+][^-+]' "$diff") line(s)" "$diff"
		head -n 20 "$diff" | sed 's/^/    /' | cut -c1-200
		return
	fi
	if [ -n "$KBAD_ANY" ]; then
		report_fail "$mode/$name" "kernel: ${KBAD_ANY:0:150}" "$r/dmesg"
		return
	fi
	local t0= t1= took
	[ -r "$r/time" ] && read -r t0 t1 < "$r/time" || true
	span_seconds "$t0" "$t1" took
	report_pass "$mode/$name" "$took"
}

# All boots of one mode (run in the background, one QEMU per mode at a
# time).  Records in $OUT/MODE/: "boots" ("N END SECONDS" per boot) and
# "ended" ("INDEX END serial-N.log" for each image a guest died on).
run_boots() { # MODE
	local mode=$1 start=0 n=1
	trap 'if [ -n "${QEMU_PID:-}" ]; then kill "$QEMU_PID" 2>/dev/null; fi' EXIT
	trap 'exit 1' TERM INT
	mkdir -p "$OUT/$mode"
	: > "$OUT/$mode/boots"
	: > "$OUT/$mode/ended"
	# the findings' boots come last; no other boot when there is nothing
	# else; a newer kernel's ours target has all its images in such boots
	if [ "${T_MODE[$mode]}" = ours ] && [ "${T_KVER[$mode]}" != "$HOST_KVER" ]; then
		findings_boots "$mode" all
		return
	fi
	has_other_images "$mode" || { findings_boots "$mode"; return; }
	while :; do
		boot "$mode" "$start" "$n"
		echo "$n $BOOT_END $BOOT_SECONDS" >> "$OUT/$mode/boots"
		[ "$BOOT_END" = alldone ] && break
		[ "$BOOT_LAST" -ge 0 ] || break	# died outside any image
		echo "$BOOT_LAST $BOOT_END serial-$n.log" >> "$OUT/$mode/ended"
		msg "$mode: guest $BOOT_END during image $BOOT_LAST; rebooting for the rest"
		start=$((BOOT_LAST + 1))
		[ "$start" -lt "${#NAMES[@]}" ] || break
		n=$((n + 1))
	done
	hostile_solo_boots "$mode" "$n"
	findings_boots "$mode"
}

judge_mode() { # MODE
	local mode=$1 n end secs idx log name codec
	while read -r idx end log; do
		ENDED[$mode:$idx]=$end
		ENDLOG[$mode:$idx]=$log
	done < "$OUT/$mode/ended"
	while read -r n end secs; do
		[ "$n" = 1 ] && check_boot_record "$mode" "$OUT/$mode/boot-1" "$end" "$secs"
		if [ "$end" != alldone ] && [ -d "$OUT/$mode/boot-$n" ] &&
		   ! grep -q " serial-$n.log\$" "$OUT/$mode/ended"; then
			report_fail "$mode/boot-$n" "guest $end outside any image" "$OUT/$mode/serial-$n.log"
		fi
	done < "$OUT/$mode/boots"
	for name in "${NAMES[@]}"; do
		runs_on_target "$mode" "$name" || continue
		if codec=$(kernel_lacks_codec "${T_KVER[$mode]}" "$name"); then
			report_skip "$mode/$name" "kernel ${T_KVER[$mode]} is built without $codec"
		else
			evaluate "$mode" "$name"
		fi
	done
}

running_count() { local p n=0; for p; do ! kill -0 "$p" 2>/dev/null || n=$((n + 1)); done; echo "$n"; }

run_qemu_stage() {
	local mode pids=() t0=$SECONDS ran=()
	for mode in "${TARGETS[@]}"; do
		[ "${IMAGES_OF[$mode]}" -gt 0 ] || continue	# no line for this target
		ran+=("$mode")
		if [ "$QEMU_PARALLEL" = 1 ]; then
			while [ "$(running_count "${pids[@]}")" -ge "$QEMU_JOBS" ]; do wait -n || true; done
			run_boots "$mode" &
			pids+=($!)
			BOOT_PIDS=${pids[*]}
		else
			(run_boots "$mode")
		fi
	done
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" || true
	BOOT_PIDS=
	msg "QEMU stage: $((SECONDS - t0)) s for ${#NAMES[@]} image(s) on: ${ran[*]}"
	for mode in "${ran[@]}"; do
		judge_mode "$mode"
	done
}

main() {
	local t0=$SECONDS mode
	command -v "$QEMU" > /dev/null || die "$QEMU not found (apt-get install qemu-system-x86)"
	[ -x "$MKFS" ] || die "mkfs not found: $MKFS (build it, or set MKFS=)"
	KVER=${KVER:-$(detect_kver)}
	[ -e "/boot/vmlinuz-$KVER" ] || die "/boot/vmlinuz-$KVER missing"
	[ -x /bin/busybox ] || die "busybox missing (apt-get install busybox-static)"
	declare -gA KIND IMG INDEX ENDED ENDLOG REFUSE HOSTILE_CASE GUEST_KIND NO_SYMLINK_MODE
	declare -gA KMIN KMAX T_KVER T_KROOT T_MODE INITRAMFS_OF IMAGES_OF KROOT_OF ALGS LIMIT_OF
	declare -gA BLOB	# @blob@ lines: the extra device's file
	declare -gA FEXPECT OURKO_OF OURVER_OF	# findings.sh
	HOST_KVER=$KVER
	setup_dirs
	msg "run $RUN_ID: kernel $KVER, accel $QEMU_ACCEL, mkfs $MKFS"
	build_kmod
	build_tools
	setup_targets
	build_images
	if [ ${#NAMES[@]} -gt 0 ]; then
		build_data_disk
		for mode in "${TARGETS[@]}"; do
			[ -n "${INITRAMFS_OF[${T_KVER[$mode]}]:-}" ] ||
				build_initramfs "${T_KVER[$mode]}" "${T_KROOT[$mode]}"
		done
		BOOT_LIMIT=${BOOT_LIMIT:-$((120 + 8 * ${#NAMES[@]} + $(fuse_boot_seconds)))}
		msg "data disk $(( $(stat -c %s "$DATA_DISK") / 1048576 )) MiB"
		run_qemu_stage
	fi
	echo "$PASSED passed, $FAILED failed$([ "$SKIPPED" -gt 0 ] && echo ", $SKIPPED skipped")"
	msg "total $((SECONDS - t0)) s"
	if [ "$FAILED" -gt 0 ]; then
		keep_failed_images
		exit 1
	fi
	exit 0
}

keep_failed_images() {
	local name
	for name in "${NAMES[@]}"; do
		if grep -qE "^FAIL: ([0-9.]+/)?[a-z]+/$name " "$OUT/verdicts" 2>/dev/null; then
			cp --sparse=always "${IMG[$name]}" "$OUT/" 2>/dev/null || true
		fi
	done
}

main "$@"
