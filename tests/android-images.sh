#!/bin/bash
# The images the Android build makes, with its argv: system-as-root from a
# target-files repack (canned fs_config merged from root + system, compiled
# file_contexts, -T 1230768000, uuid5, block map, big pclusters, compress
# hints), a vendor image from an `m` build (--product-out rule files), its
# share-dup-blocks and legacy variants, and an APEX payload (-T 0, no mount
# point).  Each passes ours and a second fsck.erofs (tests/second-reader.sh);
# owners, modes, capabilities and labels read back as getfattr/getcap show
# them (extracted, and mounted by the running kernel when it can); builds are
# byte-identical across runs, --opt=value spellings, worker counts and a
# tmpfs staging copy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/android-common.sh"
require_root
grep -q '^#define HAVE_LIBSELINUX 1' "$top_builddir/config.h" 2>/dev/null ||
	{ echo "$test_name: built without libselinux; skipped"; exit 77; }
command -v sefcontext_compile >/dev/null ||
	{ echo "$test_name: needs sefcontext_compile (selinux-utils); skipped"; exit 77; }

FIXED_FILE_TIMESTAMP=1230768000
uuid5() { python3 -c 'import sys, uuid; print(uuid.uuid5(uuid.NAMESPACE_URL, sys.argv[1]))' "$1"; }

# ---------------------------------------------------------------- trees ---
root=$WORK/root		# ROOT + system/ as SetUpInDirAndFsConfig stages it
mkdir -p "$root"/{acct,apex,config,system/bin,system/etc/init/hw,system/lib64,system/framework}
mkdir -p "$root"/system/{app/Foo,apex,xbin}
ln -s /system/bin "$root/bin"
ln -s /system/etc "$root/etc"
ln -s /system/bin/init "$root/init"
text_bytes init 200000 >"$root/system/bin/init"
fixed_bytes sh 30000 >"$root/system/bin/sh"
text_bytes toybox 120000 >"$root/system/bin/toybox"
ln -s toybox "$root/system/bin/ls"
text_bytes run-as 10000 >"$root/system/bin/run-as"
text_bytes inputflinger 50000 >"$root/system/bin/inputflinger"
text_bytes initrc 3000 >"$root/system/etc/init/hw/init.rc"
echo "127.0.0.1 localhost" >"$root/system/etc/hosts"
{ fixed_bytes libc 100000; text_bytes libc 200000; } >"$root/system/lib64/libc.so"
fixed_bytes libz 90000 >"$root/system/lib64/libz.so"
text_bytes framework 2000000 >"$root/system/framework/framework.jar"
fixed_bytes foo-apk 100000 >"$root/system/app/Foo/Foo.apk"
text_bytes apex 400000 >"$root/system/apex/com.android.foo.apex"
echo "ro.build.fingerprint=forge/test" >"$root/system/build.prop"
: >"$root/system/etc/empty"
setfattr -n security.selinux -v unconfined_u:object_r:user_tmp_t:s0 "$root/system/bin/sh"
setcap cap_net_raw=ep "$root/system/bin/toybox"	# the host's: fs_config says none
touch -d @1700000000 "$root"/system/bin/*

# fs_config as the build's tables would give it (written out by fs_config -C)
android_rules() { # PATH TYPE -> UID GID MODE CAPS
	case $2:$1 in
	d:system/bin) echo 0 2000 751 0x0 ;;
	d:system/xbin) echo 0 2000 750 0x0 ;;
	d:acct|d:config) echo 0 0 555 0x0 ;;
	d:*) echo 0 0 755 0x0 ;;
	f:system/bin/run-as) echo 0 2000 750 0xc0 ;;
	f:system/bin/inputflinger) echo 1000 2000 700 0x1000000000 ;;
	f:system/bin/*) echo 0 2000 755 0x0 ;;
	f:system/build.prop) echo 0 0 600 0x0 ;;
	*) echo 0 0 644 0x0 ;;
	esac
}
# META/root_filesystem_config.txt (the ROOT tree) + META/filesystem_config.txt
# (system, with "system/" before every path), merged as build_image does, and
# a user line appended at the end that overrides an earlier one
mkdir -p "$WORK/rootonly"
(cd "$root" && cp -a acct apex config bin etc init "$WORK/rootonly/")
mkdir "$WORK/rootonly/system"
canned_fs_config "$WORK/rootonly" "" android_rules >"$WORK/root_filesystem_config.txt"
canned_fs_config "$root/system" "system/" android_rules | tail -n +2 >"$WORK/filesystem_config.txt"
cat "$WORK/root_filesystem_config.txt" "$WORK/filesystem_config.txt" >"$WORK/merged_fs_config.txt"
echo "system/etc/hosts 0 0 640 capabilities=0x0" >>"$WORK/merged_fs_config.txt"

cat >"$WORK/file_contexts" <<'EOF'
/                       u:object_r:rootfs:s0
/acct                   u:object_r:cgroup:s0
/config                 u:object_r:rootfs:s0
/apex                   u:object_r:apex_mnt_dir:s0
/(bin|etc|init)         -l u:object_r:rootfs:s0
/system(/.*)?           u:object_r:system_file:s0
/system/bin/init    --  u:object_r:init_exec:s0
/system/bin/sh      --  u:object_r:shell_exec:s0
/system/bin/toybox  --  u:object_r:toolbox_exec:s0
/system/bin/run-as  --  u:object_r:runas_exec:s0
/system/bin/inputflinger -- u:object_r:inputflinger_exec:s0
/system/etc(/.*)?       u:object_r:system_etc_file:s0
/system/lib64(/.*)?     u:object_r:system_lib_file:s0
/system/apex(/.*)?      u:object_r:system_apex_file:s0
/vendor(/.*)?           u:object_r:vendor_file:s0
/vendor/bin/hw/android\.hardware\.foo-service  -- u:object_r:hal_foo_default_exec:s0
/vendor/etc(/.*)?       u:object_r:vendor_configs_file:s0
/vendor/etc/fs_config_(dirs|files) <<none>>
EOF
sefcontext_compile -o "$WORK/file_contexts.bin" "$WORK/file_contexts"
echo "0 .*\.apex$" >"$WORK/erofs_compress_hints.txt"

# expected "path uid gid mode type" from a canned file (last line wins)
expected_from_canned() { # TREE CANNED PREFIX
	entries "$1" | awk -v prefix="$3" -v canned="$2" '
		BEGIN {
			while ((getline line < canned) > 0) {
				if (substr(line, 1, 1) == " ") { key = ""; rest = substr(line, 2) }
				else { key = line; sub(/ .*/, "", key); rest = substr(line, length(key) + 2) }
				sub(/^\//, "", key)
				split(rest, f, " ")
				m = f[3]; sub(/^0+/, "", m); if (m == "") m = "0"
				own[key] = f[1] " " f[2] " " m
			}
		}
		{
			key = ($1 == "/") ? "" : prefix substr($1, 2)
			if (!(key in own)) { print "MISSING " key; next }
			split(own[key], o, " ")
			print $1, o[1], o[2], ($5 == "l" ? "-" : o[3]), $5
		}'
}

check_tree() { # LABEL DIR EXPECTED-ENTRIES
	entries "$2" >"$WORK/got"
	if diff -u "$3" "$WORK/got" >"$WORK/d"; then
		pass "$1: every owner and mode as fs_config says"
	else
		fail "$1: owners or modes differ:"; head -30 "$WORK/d" >&2
	fi
}

# --------------------------------------------------- system-as-root ---
sysuuid=$(uuid5 "/-forge/test")
system_argv=(-z lz4hc,9 --compress-hints "$WORK/erofs_compress_hints.txt" -b 4096
	--mount-point / --fs-config-file "$WORK/merged_fs_config.txt"
	--file-contexts "$WORK/file_contexts.bin" -T "$FIXED_FILE_TIMESTAMP" -U "$sysuuid"
	--block-list-file "$WORK/system.map" -C 262144)
if "$MKFS" "${system_argv[@]}" "$WORK/system.img" "$root" >"$WORK/mkfs.out" 2>&1; then
	pass "system: build_image.py's argv (target-files repack) builds"
else
	fail "system: mkfs failed:"; tail -5 "$WORK/mkfs.out" >&2
fi
grep -q ' 0 extended$' "$WORK/mkfs.out" && pass "system: -T makes every inode compact" ||
	fail "system: extended inodes under -T: $(head -1 "$WORK/mkfs.out")"
check_eq "system: the build time is -T's" "$(printf '%016x' "$FIXED_FILE_TIMESTAMP" | fold -w2 | tac | tr -d '\n')" \
	"$(od -An -tx1 -j $((1024 + 24)) -N 8 "$WORK/system.img" | tr -d ' \n')"
expected_from_canned "$root" "$WORK/merged_fs_config.txt" "" >"$WORK/system.want"
grep -q MISSING "$WORK/system.want" && fail "test bug: $(grep MISSING "$WORK/system.want" | head -3)"
check_eq "system: the appended duplicate wins" "/system/etc/hosts 0 0 640 f" \
	"$(grep '^/system/etc/hosts ' "$WORK/system.want")"
extract_ours "$WORK/system.img" "$WORK/x"
check_tree "system (our fsck --extract)" "$WORK/x" "$WORK/system.want"
diff -r --no-dereference "$root" "$WORK/x" >/dev/null && pass "system: same contents" ||
	fail "system: contents differ"
check_eq "system: getcap run-as" "cap_setgid,cap_setuid=ep" "$(caps "$WORK/x/system/bin/run-as")"
check_eq "system: getcap inputflinger" "cap_block_suspend=ep" "$(caps "$WORK/x/system/bin/inputflinger")"
check_eq "system: the host's capability on toybox is dropped" "-" "$(caps "$WORK/x/system/bin/toybox")"
while read -r path want; do
	check_eq "system: getfattr $path" "$want" "$(label "$WORK/x$path")"
done <<'EOF'
/ u:object_r:rootfs:s0
/acct u:object_r:cgroup:s0
/bin u:object_r:rootfs:s0
/system u:object_r:system_file:s0
/system/bin u:object_r:system_file:s0
/system/bin/sh u:object_r:shell_exec:s0
/system/bin/ls u:object_r:system_file:s0
/system/etc/hosts u:object_r:system_etc_file:s0
/system/lib64/libc.so u:object_r:system_lib_file:s0
/system/apex/com.android.foo.apex u:object_r:system_apex_file:s0
EOF
reader2_fsck "system" "$WORK/system.img" "$root"

# the block map: names, ranges, and the blocks of files stored plain
if block_list_check system "$WORK/system.img" "$WORK/system.map" "$root" "" 4096 >"$WORK/map.kinds"; then
	pass "system: the block map is well formed ($(wc -l <"$WORK/system.map") files)"
else
	fail "system: block map problems"
fi
grep -q '^plain /system/apex/com.android.foo.apex 97$' "$WORK/map.kinds" &&
	pass "system: the .apex (hint 0: stored plain) is mapped to its 97 blocks in order" ||
	fail "system: the .apex is not mapped as a plain file: $(grep apex "$WORK/map.kinds")"
grep -q '^packed /system/framework/framework.jar ' "$WORK/map.kinds" &&
	pass "system: framework.jar lists its compressed blocks" ||
	fail "system: framework.jar: $(grep framework "$WORK/map.kinds")"
grep -q '^/system/etc/empty' "$WORK/system.map" && fail "system: an empty file is in the map" ||
	pass "system: files without blocks have no line"
[ "$(awk '{print $1}' "$WORK/system.map" | grep -vc '^/system/')" = 0 ] &&
	pass "system: every name starts with /system/ (mount point /)" ||
	fail "system: names outside /system/: $(grep -v '^/system/' "$WORK/system.map" | head -2)"

# reproducible: again, --opt=value forms, one worker, SOURCE_DATE_EPOCH set
cp "$WORK/system.map" "$WORK/system.map.1"
"$MKFS" --quiet -zlz4hc,9 --compress-hints="$WORK/erofs_compress_hints.txt" -b4096 \
	--mount-point=/ --fs-config-file="$WORK/merged_fs_config.txt" \
	--file-contexts="$WORK/file_contexts.bin" -T"$FIXED_FILE_TIMESTAMP" -U"$sysuuid" \
	--block-list-file="$WORK/system.map" -C262144 --workers=1 "$WORK/system2.img" "$root" 2>/dev/null
cmp -s "$WORK/system.img" "$WORK/system2.img" && cmp -s "$WORK/system.map" "$WORK/system.map.1" &&
	pass "system: a second build (--opt=value forms, --workers=1) is byte-identical, map too" ||
	fail "system: the second build differs"
SOURCE_DATE_EPOCH=1500000000 "$MKFS" --quiet "${system_argv[@]}" "$WORK/system3.img" "$root" 2>/dev/null
cmp -s "$WORK/system.img" "$WORK/system3.img" && pass "system: -T wins over SOURCE_DATE_EPOCH" ||
	fail "system: SOURCE_DATE_EPOCH changed a -T build"
staging=$WORK/tmpfs
mkdir "$staging"
if mount -t tmpfs -o size=256m,mode=0755 tmpfs "$staging" 2>/dev/null; then
	mkdir "$staging/root"
	(cd "$root" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | sort -r |
		while IFS= read -r name; do cp -a -- "$name" "$staging/root/"; done)
	chmod --reference="$root" "$staging/root"
	"$MKFS" --quiet "${system_argv[@]}" "$WORK/system4.img" "$staging/root" 2>/dev/null
	cmp -s "$WORK/system.img" "$WORK/system4.img" &&
		pass "system: a tmpfs copy made in reverse order gives the identical image" ||
		fail "system: the tmpfs staging copy gives another image"
	umount "$staging"
else
	echo "note: cannot mount a tmpfs here; staging-filesystem case not run"
fi

# a block list sent to /dev/null leaves the device as it is
"$MKFS" --quiet "${system_argv[@]}" --block-list-file /dev/null "$WORK/system5.img" "$root" 2>/dev/null
[ -c /dev/null ] && cmp -s "$WORK/system.img" "$WORK/system5.img" &&
	pass "system: --block-list-file /dev/null is written through" ||
	fail "system: --block-list-file /dev/null: $(ls -l /dev/null)"

# (the kernel's view of these owners, modes, labels and capabilities is
# checked in QEMU: qemu-tests/matrix, lines fsconfig-*; images are never
# mounted on the build host)

# ------------------------------------------------------------- vendor ---
out=$WORK/out		# $OUT: $OUT/system and $OUT/vendor
mkdir -p "$out/system/etc" "$out"/vendor/{bin/hw,etc/init,lib64,firmware}
text_bytes service 70000 >"$out/vendor/bin/hw/android.hardware.foo-service"
text_bytes vndsm 30000 >"$out/vendor/bin/vndservicemanager"
text_bytes foorc 500 >"$out/vendor/etc/init/foo.rc"
{ fixed_bytes libbar 40000; text_bytes libbar 100000; } >"$out/vendor/lib64/libbar.so"
cp "$out/vendor/lib64/libbar.so" "$out/vendor/lib64/libbar-copy.so"	# shared blocks
fixed_bytes fw 50000 >"$out/vendor/firmware/x.bin"
fs_config_bin "$out/vendor/etc/fs_config_files" \
	"0755 1000 1003 0x1000 vendor/bin/hw/android.hardware.foo-service" \
	"0755 0 2000 0 vendor/bin/*" \
	"0444 0 0 0 vendor/etc/fs_config_*"
fs_config_bin "$out/vendor/etc/fs_config_dirs" "0751 0 2000 0 vendor/bin" "0751 0 2000 0 vendor/bin/hw"
fs_config_bin "$out/system/etc/fs_config_files" "0755 0 2000 0 system/bin/*"
fs_config_bin "$out/system/etc/fs_config_dirs" "0751 0 2000 0 system/bin"
# (directories no rule file names get libcutils' "vendor" rule: root:shell)
cat >"$WORK/vendor.want" <<'EOF'
/ 0 2000 755 d
/bin 0 2000 751 d
/bin/hw 0 2000 751 d
/bin/hw/android.hardware.foo-service 1000 1003 755 f
/bin/vndservicemanager 0 2000 755 f
/etc 0 2000 755 d
/etc/fs_config_dirs 0 0 444 f
/etc/fs_config_files 0 0 444 f
/etc/init 0 2000 755 d
/etc/init/foo.rc 0 0 644 f
/firmware 0 2000 755 d
/firmware/x.bin 0 0 644 f
/lib64 0 2000 755 d
/lib64/libbar-copy.so 0 0 644 f
/lib64/libbar.so 0 0 644 f
EOF
venuuid=$(uuid5 "vendor-forge/test")
for variant in "lz4hc:-z lz4hc,9" "legacy:-z lz4 -E legacy-compress" \
	"sharedup:--chunksize 4096" "none:"; do
	name=${variant%%:*}
	# shellcheck disable=SC2206 # the compressor words
	extra=(${variant#*:})
	img=$WORK/vendor-$name.img
	args=("${extra[@]}" -b 4096 --mount-point vendor --product-out "$out/system"
		--file-contexts "$WORK/file_contexts.bin" -U "$venuuid" --block-list-file "$WORK/vendor-$name.map")
	if ! "$MKFS" --quiet "${args[@]}" "$img" "$out/vendor" 2>"$WORK/err"; then
		fail "vendor $name: mkfs failed: $(cat "$WORK/err")"
		continue
	fi
	"$MKFS" --quiet "${args[@]}" "$WORK/again.img" "$out/vendor" 2>/dev/null
	cmp -s "$img" "$WORK/again.img" && pass "vendor $name: two builds are byte-identical" ||
		fail "vendor $name: two builds differ"
	extract_ours "$img" "$WORK/x"
	check_tree "vendor $name" "$WORK/x" "$WORK/vendor.want"
	check_eq "vendor $name: getcap foo-service" "cap_net_admin=ep" \
		"$(caps "$WORK/x/bin/hw/android.hardware.foo-service")"
	check_eq "vendor $name: getfattr foo-service" "u:object_r:hal_foo_default_exec:s0" \
		"$(label "$WORK/x/bin/hw/android.hardware.foo-service")"
	check_eq "vendor $name: getfattr of the root (/vendor/)" "u:object_r:vendor_file:s0" "$(label "$WORK/x")"
	check_eq "vendor $name: <<none>> leaves fs_config_files unlabelled" "-" \
		"$(label "$WORK/x/etc/fs_config_files")"
	reader2_fsck "vendor $name" "$img" "$out/vendor"
	if block_list_check "vendor $name" "$img" "$WORK/vendor-$name.map" "$out/vendor" /vendor 4096 \
		>"$WORK/map.kinds"; then
		pass "vendor $name: the block map is well formed"
	else
		fail "vendor $name: block map problems"
	fi
	case $name in
	sharedup|none)
		[ "$(grep -c '^packed' "$WORK/map.kinds")" = 0 ] &&
			pass "vendor $name: every mapped file's blocks hold its bytes in order" ||
			fail "vendor $name: $(grep '^packed' "$WORK/map.kinds" | head -3)" ;;
	esac
	a=$(grep '^/vendor/lib64/libbar.so ' "$WORK/vendor-$name.map" | cut -d' ' -f2-)
	b=$(grep '^/vendor/lib64/libbar-copy.so ' "$WORK/vendor-$name.map" | cut -d' ' -f2-)
	if [ "$name" = sharedup ]; then
		[ -n "$a" ] && [ "$a" = "$b" ] &&
			pass "vendor sharedup: the copy lists the same chunk blocks ($a)" ||
			fail "vendor sharedup: copies map to '$a' and '$b'"
	else
		# no --chunksize (BOARD_EROFS_SHARE_DUP_BLOCKS): no shared block
		[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] &&
			pass "vendor $name: the copy has blocks of its own ($b, not $a)" ||
			fail "vendor $name: copies map to '$a' and '$b'"
	fi
done

# ------------------------------------------------------- APEX payload ---
apex=$WORK/apex		# apexer merges the manifest and the payload first
mkdir -p "$apex"/{bin,lib64,etc}
printf '\x0a\x0fcom.android.foo\x10\x01' >"$apex/apex_manifest.pb"
text_bytes foo 40000 >"$apex/bin/foo"
{ fixed_bytes libfoo 5000; text_bytes libfoo 60000; } >"$apex/lib64/libfoo.so"
echo "foo config" >"$apex/etc/foo.conf"
cat >"$WORK/apex_canned_fs_config" <<'EOF'
/ 1000 1000 0755
/apex_manifest.pb 1000 1000 0644
/bin 0 2000 0755
/bin/foo 1000 1000 0755 capabilities=0x400
/etc 0 0 0755
/etc/foo.conf 1000 1000 0644
/lib64 0 0 0755
/lib64/libfoo.so 1000 1000 0644
EOF
cat >"$WORK/apex_file_contexts" <<'EOF'
(/.*)?                u:object_r:system_file:s0
/bin/foo              u:object_r:foo_exec:s0
/apex_manifest\.pb    u:object_r:system_file:s0
EOF
apexuuid=$(uuid5 www.android.com)
apex_argv=(-z lz4hc --fs-config-file "$WORK/apex_canned_fs_config"
	--file-contexts "$WORK/apex_file_contexts" -U "$apexuuid" -T 0)
if "$MKFS" --quiet "${apex_argv[@]}" "$WORK/apex.img" "$apex" 2>"$WORK/err"; then
	pass "apex: apexer's argv builds"
else
	fail "apex: mkfs failed: $(cat "$WORK/err")"
fi
"$MKFS" --quiet "${apex_argv[@]}" "$WORK/apex2.img" "$apex" 2>/dev/null
cmp -s "$WORK/apex.img" "$WORK/apex2.img" && pass "apex: two builds are byte-identical" ||
	fail "apex: two builds differ"
extract_ours "$WORK/apex.img" "$WORK/x"
expected_from_canned "$apex" "$WORK/apex_canned_fs_config" "" >"$WORK/apex.want"
check_tree "apex" "$WORK/x" "$WORK/apex.want"
check_eq "apex: getcap bin/foo (CAP_NET_BIND_SERVICE)" "cap_net_bind_service=ep" "$(caps "$WORK/x/bin/foo")"
check_eq "apex: getfattr bin/foo" "u:object_r:foo_exec:s0" "$(label "$WORK/x/bin/foo")"
check_eq "apex: getfattr lib64/libfoo.so" "u:object_r:system_file:s0" "$(label "$WORK/x/lib64/libfoo.so")"
check_eq "apex: every mtime is 0" "0" "$(find "$WORK/x" -printf '%T@\n' | sed 's/\..*//' | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_eq "apex: the UUID is uuid5(URL, www.android.com)" "$(echo "$apexuuid" | tr -d -)" \
	"$(od -An -tx1 -j $((1024 + 48)) -N 16 "$WORK/apex.img" | tr -d ' \n')"
reader2_fsck "apex" "$WORK/apex.img" "$apex"
finish
