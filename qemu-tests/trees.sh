# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with run.sh
# qemu-tests/trees.sh: the source trees of run.sh's matrix lines (sourced
# by run.sh; bash): the runner's small tree, the Android trees, the
# duplicate-data tree and the big root directory, made once each into
# $SCRATCH by prepare_tree.  The shared tree of tests/gen-tree.sh is
# "gen".

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
