#!/bin/bash
# Android fs_config: canned files (--fs-config-file) with the root written
# both ways, duplicates, capabilities, stray tokens and missing paths; the rule
# files of --product-out (first match, nested partitions, defaults) and
# libcutils' built-in tables after them (an `m` build of system-as-root); the
# mount point spellings; and the owner options on top.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/android-common.sh"
require_root

uuid=6b1c3f2e-8d4a-4b5e-9f60-1a2b3c4d5e6f
mk() { "$MKFS" --quiet -U "$uuid" -T 1230768000 "$@"; }

# a vendor partition as the build stages it
src=$WORK/vendor
mkdir -p "$src"/{bin/hw,etc/init,lib64,firmware}
text_bytes service 70000 >"$src/bin/hw/android.hardware.foo-service"
fixed_bytes vndservice 9000 >"$src/bin/vndservicemanager"
text_bytes rc 300 >"$src/etc/init/foo.rc"
fixed_bytes libbar 150000 >"$src/lib64/libbar.so"
fixed_bytes fw 5000 >"$src/firmware/x.bin"
ln -s /vendor/bin/vndservicemanager "$src/bin/vndsm"
: >"$src/etc/empty"
setcap cap_sys_admin=ep "$src/firmware/x.bin"	# host capabilities must not leak

cat >"$WORK/vendor_fs_config.txt" <<'EOF'
 0 2000 755 selabel=u:object_r:vendor_file:s0 capabilities=0x0
vendor/bin 0 2000 751 capabilities=0x0
vendor/bin/hw 0 2000 751 capabilities=0x0
vendor/bin/hw/android.hardware.foo-service 1000 1003 750 capabilities=0x0
vendor/bin/vndservicemanager 0 2000 755 capabilities=0xc0
vendor/bin/vndsm 0 2000 755 capabilities=0x0
vendor/etc 0 0 755 capabilities=0x0
vendor/etc/empty 0 0 600 capabilities=0x0
vendor/etc/init 0 0 755 capabilities=0x0
vendor/etc/init/foo.rc 0 0 644 capabilities=0x0
vendor/firmware 0 0 755 capabilities=0x0
vendor/firmware/x.bin 0 0 444 capabilities=0x0
vendor/lib64 0 0 755 capabilities=0x0
vendor/lib64/libbar.so 0 0 644 capabilities=0x0
vendor/bin/hw/android.hardware.foo-service 1041 1005 4750 capabilities=0x1000000000
EOF

# ---- canned: owners, modes, capabilities; the last duplicate wins ----
if mk --mount-point vendor --fs-config-file "$WORK/vendor_fs_config.txt" "$WORK/c.img" "$src" \
	2>"$WORK/c.err"; then
	pass "canned fs_config: the image builds"
else
	fail "canned fs_config: mkfs failed: $(cat "$WORK/c.err")"
fi
grep -q "ignoring 'selabel=' on 1 line" "$WORK/c.err" &&
	pass "selabel= tokens are ignored with a note" ||
	fail "no note about the ignored selabel= token: $(cat "$WORK/c.err")"
extract_ours "$WORK/c.img" "$WORK/x"
same_entries "canned: every owner and mode as the file says, the last duplicate winning" "$WORK/x" <<'EOF'
/ 0 2000 755 d
/bin 0 2000 751 d
/bin/hw 0 2000 751 d
/bin/hw/android.hardware.foo-service 1041 1005 4750 f
/bin/vndservicemanager 0 2000 755 f
/bin/vndsm 0 2000 - l
/etc 0 0 755 d
/etc/empty 0 0 600 f
/etc/init 0 0 755 d
/etc/init/foo.rc 0 0 644 f
/firmware 0 0 755 d
/firmware/x.bin 0 0 444 f
/lib64 0 0 755 d
/lib64/libbar.so 0 0 644 f
EOF
check_eq "capabilities=0xc0 (getcap)" "cap_setgid,cap_setuid=ep" "$(caps "$WORK/x/bin/vndservicemanager")"
check_eq "capabilities=0x1000000000, the high word (getcap)" "cap_block_suspend=ep" \
	"$(caps "$WORK/x/bin/hw/android.hardware.foo-service")"
check_eq "security.capability is the 20-byte v2 record" \
	"01000002c0000000000000000000000000000000" "$(xattr_hex "$WORK/x/bin/vndservicemanager" security.capability)"
check_eq "capabilities=0x0: no xattr, the host's capability is dropped" "-" "$(caps "$WORK/x/firmware/x.bin")"
diff -r --no-dereference "$src" "$WORK/x" >/dev/null && pass "canned: contents unchanged" ||
	fail "canned: contents differ"
reader2_fsck "canned" "$WORK/c.img" "$src"

# ---- the root as "/" instead of a leading space; paths with a leading "/";
# ---- the same file with decimal capabilities: the same image ----
sed -e 's|^ |/ |' -e 's|^vendor/|/vendor/|' -e 's|capabilities=0xc0|capabilities=192|' \
	"$WORK/vendor_fs_config.txt" >"$WORK/slash.txt"
mk --mount-point vendor --fs-config-file="$WORK/slash.txt" "$WORK/slash.img" "$src" 2>/dev/null
cmp -s "$WORK/c.img" "$WORK/slash.img" &&
	pass "root as '/', leading slashes and decimal capabilities give the same image" ||
	fail "root written as '/' gives another image"

# ---- the mount point spellings: vendor, /vendor, /vendor/, --opt=value ----
for mp in /vendor /vendor/ vendor/; do
	mk --mount-point "$mp" --fs-config-file "$WORK/vendor_fs_config.txt" "$WORK/mp.img" "$src" 2>/dev/null
	cmp -s "$WORK/c.img" "$WORK/mp.img" && pass "--mount-point $mp is vendor" ||
		fail "--mount-point $mp gives another image"
done
mk --mount-point=/vendor --fs-config-file="$WORK/vendor_fs_config.txt" "$WORK/mp.img" "$src" 2>/dev/null
cmp -s "$WORK/c.img" "$WORK/mp.img" && pass "--mount-point=/vendor --fs-config-file=F (= forms)" ||
	fail "the --opt=value forms give another image"

# ---- a path of the tree missing from the file: fatal, named, no image ----
grep -v '^vendor/etc/init/foo.rc ' "$WORK/vendor_fs_config.txt" >"$WORK/missing.txt"
rm -f "$WORK/m.img"
expect_failure "a missing path is fatal" "failed to find 'vendor/etc/init/foo.rc'" \
	mk --mount-point vendor --fs-config-file "$WORK/missing.txt" "$WORK/m.img" "$src"
[ ! -e "$WORK/m.img" ] && pass "no image is left behind" || fail "an image was left behind"
# without the mount point, the same file names nothing of the tree
expect_failure "without --mount-point the keys have no vendor/ prefix" "failed to find 'bin'" \
	mk --fs-config-file "$WORK/vendor_fs_config.txt" "$WORK/m.img" "$src"

# ---- malformed files ----
printf 'vendor/bin 0 2000\n' >"$WORK/short.txt"
expect_failure "fewer than 4 fields" "short.txt:1: expected 'PATH UID GID MODE" \
	mk --mount-point vendor --fs-config-file "$WORK/short.txt" "$WORK/m.img" "$src"
printf ' 0 0 755\nvendor/bin 0 x 751\n' >"$WORK/bad.txt"
expect_failure "a bad gid" "bad.txt:2: bad uid, gid or mode" \
	mk --mount-point vendor --fs-config-file "$WORK/bad.txt" "$WORK/m.img" "$src"
printf ' 0 0 758\n' >"$WORK/bad.txt"
expect_failure "a mode that is not octal" "bad.txt:1: bad uid, gid or mode" \
	mk --mount-point vendor --fs-config-file "$WORK/bad.txt" "$WORK/m.img" "$src"
printf ' 0 0 755 capabilities=zz\n' >"$WORK/bad.txt"
expect_failure "bad capabilities" "bad.txt:1: bad capability mask 'zz'" \
	mk --mount-point vendor --fs-config-file "$WORK/bad.txt" "$WORK/m.img" "$src"
expect_failure "a missing file" "nonexistent.txt: cannot open the fs_config file" \
	mk --mount-point vendor --fs-config-file "$WORK/nonexistent.txt" "$WORK/m.img" "$src"

# ---- the owner options still apply on top ----
mk --mount-point vendor --fs-config-file "$WORK/vendor_fs_config.txt" --force-uid=7 \
	"$WORK/f.img" "$src" 2>/dev/null
extract_ours "$WORK/f.img" "$WORK/x"
check_eq "--force-uid on top of fs_config" "7 2000 751" "$(stat -c '%u %g %a' "$WORK/x/bin")"

# ---- -x -1: no xattrs at all, said once ----
mk -x -1 --mount-point vendor --fs-config-file "$WORK/vendor_fs_config.txt" "$WORK/nx.img" "$src" \
	2>"$WORK/nx.err"
extract_ours "$WORK/nx.img" "$WORK/x"
grep -q "no SELinux labels and no capabilities" "$WORK/nx.err" && [ "$(caps "$WORK/x/bin/vndservicemanager")" = - ] &&
	pass "-x -1: owners and modes applied, no capability xattr, with a warning" ||
	fail "-x -1 with fs_config: $(cat "$WORK/nx.err")"

# ---- rule files of --product-out ($OUT/system and its sibling partitions) ----
out=$WORK/out
mkdir -p "$out/system/etc" "$out/vendor"
cp -a "$src/." "$out/vendor/"
# the vendor partition's own rules live inside it, as the build installs them
fs_config_bin "$out/vendor/etc/fs_config_files" \
	"0750 1000 1003 0x400 vendor/bin/hw/android.hardware.foo-service" \
	"0755 0 2000 0 vendor/bin/*" \
	"0600 0 0 0 vendor/etc/empty" \
	"0444 0 0 0 vendor/etc/fs_config_*"
fs_config_bin "$out/vendor/etc/fs_config_dirs" \
	"0751 0 2000 0 vendor/bin"
fs_config_bin "$out/system/etc/fs_config_files" \
	"0640 1000 1000 0 vendor/bin/vndservicemanager" \
	"0755 1036 1036 0 vendor/lib64/*"
fs_config_bin "$out/system/etc/fs_config_dirs" \
	"0700 1000 1000 0 vendor/firmware" \
	"0711 0 2000 0 vendor/bin/hw"
mk -b 4096 --mount-point vendor --product-out "$out/system" "$WORK/r.img" "$out/vendor" 2>"$WORK/r.err" ||
	fail "--product-out: mkfs failed: $(cat "$WORK/r.err")"
extract_ours "$WORK/r.img" "$WORK/x"
same_entries "--product-out: system's rules first, then vendor's, then libcutils' tables, first match wins" "$WORK/x" <<'EOF'
/ 0 2000 755 d
/bin 0 2000 751 d
/bin/hw 0 2000 711 d
/bin/hw/android.hardware.foo-service 1000 1003 750 f
/bin/vndservicemanager 1000 1000 640 f
/bin/vndsm 0 2000 - l
/etc 0 2000 755 d
/etc/empty 0 0 600 f
/etc/fs_config_dirs 0 0 444 f
/etc/fs_config_files 0 0 444 f
/etc/init 0 2000 755 d
/etc/init/foo.rc 0 0 644 f
/firmware 1000 1000 700 d
/firmware/x.bin 0 0 644 f
/lib64 0 2000 755 d
/lib64/libbar.so 1036 1036 755 f
EOF
check_eq "rule capabilities (CAP_NET_BIND_SERVICE)" "cap_net_bind_service=ep" \
	"$(caps "$WORK/x/bin/hw/android.hardware.foo-service")"
check_eq "no rule capability: the host's is dropped" "-" "$(caps "$WORK/x/firmware/x.bin")"
# --product-out given as $OUT/system/ (trailing slash) or the = form: same
mk -b 4096 --mount-point=vendor --product-out="$out/system/" "$WORK/r2.img" "$out/vendor" 2>/dev/null
cmp -s "$WORK/r.img" "$WORK/r2.img" && pass "--product-out=DIR/ is the same" ||
	fail "--product-out with a trailing slash differs"

# nested partitions: system/vendor/... answers to vendor/... rules (system-as-root)
sar=$WORK/sar
mkdir -p "$sar/system/vendor/bin" "$sar/system/bin"
echo x >"$sar/system/vendor/bin/tool"
echo y >"$sar/system/bin/sh"
mkdir -p "$WORK/out2/system/etc"
fs_config_bin "$WORK/out2/system/etc/fs_config_files" "0700 0 2000 0 vendor/bin/*" "0755 0 2000 0 system/bin/*"
mk --mount-point / --product-out "$WORK/out2/system" "$WORK/n.img" "$sar" 2>/dev/null
extract_ours "$WORK/n.img" "$WORK/x"
check_eq "system/vendor/bin/tool matches the vendor/bin/* rule" "0 2000 700" \
	"$(stat -c '%u %g %a' "$WORK/x/system/vendor/bin/tool")"
check_eq "system/bin/sh matches system/bin/*" "0 2000 755" "$(stat -c '%u %g %a' "$WORK/x/system/bin/sh")"
check_eq "no rule file names system/vendor: libcutils' table does" "0 2000 755" \
	"$(stat -c '%u %g %a' "$WORK/x/system/vendor")"
check_eq "no rule at all: directories root:root 0755" "0 0 755" "$(stat -c '%u %g %a' "$WORK/x/system")"

# no rule files at all: libcutils' tables alone, said once
mkdir -p "$WORK/empty-out/system"
mk --mount-point vendor --product-out "$WORK/empty-out/system" "$WORK/e.img" "$src" 2>"$WORK/e.err"
grep -q "no etc/fs_config_dirs or etc/fs_config_files found: only libcutils' built-in tables" \
	"$WORK/e.err" && pass "no rule files: said once" || fail "no rule files: $(cat "$WORK/e.err")"
extract_ours "$WORK/e.img" "$WORK/x"
# what libcutils' fs_config() answers for vendor/... (android-15.0.0_r30)
same_entries "no rule files: vendor/bin/* root:shell 0755, vendor/ and its directories root:shell" "$WORK/x" <<'EOF'
/ 0 2000 755 d
/bin 0 2000 751 d
/bin/hw 0 2000 751 d
/bin/hw/android.hardware.foo-service 0 2000 755 f
/bin/vndservicemanager 0 2000 755 f
/bin/vndsm 0 2000 - l
/etc 0 2000 755 d
/etc/empty 0 0 644 f
/etc/init 0 2000 755 d
/etc/init/foo.rc 0 0 644 f
/firmware 0 2000 755 d
/firmware/x.bin 0 0 644 f
/lib64 0 2000 755 d
/lib64/libbar.so 0 0 644 f
EOF

expect_failure "a --product-out that does not exist" "nonexistent/system: No such file or directory" \
	mk --mount-point vendor --product-out "$WORK/nonexistent/system" "$WORK/m.img" "$src"

# a corrupt rule file is an error naming it
mkdir -p "$WORK/empty-out/vendor/etc"
head -c 20 /dev/zero >"$WORK/empty-out/vendor/etc/fs_config_files"
expect_failure "a corrupt rule file" "vendor/etc/fs_config_files: record at byte 0 has a bad length" \
	mk --mount-point vendor --product-out "$WORK/empty-out/system" "$WORK/m.img" "$src"

# ---- an `m` build of system (system-as-root): --product-out and no canned
# ---- file, so every path config.fs does not name gets what libcutils'
# ---- built-in tables give it (fs_config(), android-15.0.0_r30) ----
sar=$WORK/sar-m
mkdir -p "$sar"/{data/local/tmp,vendor,acct} "$sar"/system/{bin/hw,xbin,etc/init/hw,app/Foo,lib64}
ln -s /system/bin/init "$sar/init"
ln -s /system/bin "$sar/bin"
ln -s /vendor "$sar/system/vendor"
for f in init sh toybox run-as inputflinger logd; do text_bytes "$f" 3000 >"$sar/system/bin/$f"; done
ln -s toybox "$sar/system/bin/ls"
text_bytes hal 5000 >"$sar/system/bin/hw/android.hardware.foo"
text_bytes su 2000 >"$sar/system/xbin/su"
echo "ro.build.fingerprint=forge/test" >"$sar/system/build.prop"
text_bytes initrc 900 >"$sar/system/etc/init/hw/init.rc"
echo "127.0.0.1 localhost" >"$sar/system/etc/hosts"
fixed_bytes apk 6000 >"$sar/system/app/Foo/Foo.apk"
fixed_bytes libc 9000 >"$sar/system/lib64/libc.so"
# the host's modes and capabilities must not show through
find "$sar" -type d -exec chmod 0755 {} + && find "$sar" -type f -exec chmod 0644 {} +
setcap cap_net_raw=ep "$sar/system/bin/toybox"
# system's config.fs: its records come before the built-in tables
fs_config_bin "$sar/system/etc/fs_config_dirs" "0750 1000 2000 0 system/bin/hw"
fs_config_bin "$sar/system/etc/fs_config_files" \
	"0750 1000 1003 0x400 system/bin/hw/*" \
	"0555 0 2000 0 system/bin/toybox"
mk --mount-point / --product-out "$sar/system" "$WORK/sar.img" "$sar" 2>"$WORK/sar.err" &&
	pass "m systemimage: --mount-point / --product-out \$OUT/system builds" ||
	fail "m systemimage: mkfs failed: $(cat "$WORK/sar.err")"
extract_ours "$WORK/sar.img" "$WORK/x"
same_entries "m systemimage: every owner and mode is libcutils' fs_config() answer" "$WORK/x" <<'EOF'
/ 0 0 755 d
/acct 0 0 755 d
/bin 0 0 - l
/data 1000 1000 771 d
/data/local 2000 2000 771 d
/data/local/tmp 2000 2000 771 d
/init 0 2000 - l
/system 0 0 755 d
/system/app 0 0 755 d
/system/app/Foo 0 0 755 d
/system/app/Foo/Foo.apk 0 0 644 f
/system/bin 0 2000 751 d
/system/bin/hw 1000 2000 750 d
/system/bin/hw/android.hardware.foo 1000 1003 750 f
/system/bin/init 0 2000 755 f
/system/bin/inputflinger 1000 2000 700 f
/system/bin/logd 1036 1036 550 f
/system/bin/ls 0 2000 - l
/system/bin/run-as 0 2000 750 f
/system/bin/sh 0 2000 755 f
/system/bin/toybox 0 2000 555 f
/system/build.prop 0 0 600 f
/system/etc 0 0 755 d
/system/etc/fs_config_dirs 0 0 444 f
/system/etc/fs_config_files 0 0 444 f
/system/etc/hosts 0 0 644 f
/system/etc/init 0 0 755 d
/system/etc/init/hw 0 0 755 d
/system/etc/init/hw/init.rc 0 0 644 f
/system/lib64 0 0 755 d
/system/lib64/libc.so 0 0 644 f
/system/vendor 0 0 - l
/system/xbin 0 2000 750 d
/system/xbin/su 0 2000 4750 f
/vendor 0 2000 755 d
EOF
check_eq "m systemimage: getcap system/bin/run-as (built-in table)" "cap_setgid,cap_setuid=ep" \
	"$(caps "$WORK/x/system/bin/run-as")"
check_eq "m systemimage: getcap system/bin/inputflinger (built-in table)" "cap_block_suspend=ep" \
	"$(caps "$WORK/x/system/bin/inputflinger")"
check_eq "m systemimage: getcap from system's config.fs" "cap_net_bind_service=ep" \
	"$(caps "$WORK/x/system/bin/hw/android.hardware.foo")"
check_eq "m systemimage: no capability for toybox (the host's is dropped)" "-" \
	"$(caps "$WORK/x/system/bin/toybox")"
diff -r --no-dereference "$sar" "$WORK/x" >/dev/null && pass "m systemimage: contents unchanged" ||
	fail "m systemimage: contents differ"

# --fs-config-file wins over --product-out (the target-files repack passes both)
mk --mount-point vendor --product-out "$out/system" --fs-config-file "$WORK/vendor_fs_config.txt" \
	"$WORK/both.img" "$src" 2>/dev/null
cmp -s "$WORK/c.img" "$WORK/both.img" && pass "a canned file wins over --product-out" ||
	fail "--fs-config-file with --product-out differs from the canned-only image"
finish
