#!/bin/bash
# SELinux labels (--file-contexts): text and compiled file_contexts, the
# lookup key for each --mount-point spelling (/, system, /vendor, none),
# typed specs, <<none>>, host labels replaced, values without a NUL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/android-common.sh"
require_root
grep -q '^#define HAVE_LIBSELINUX 1' "$top_builddir/config.h" 2>/dev/null || {
	echo "$test_name: built without libselinux; checking the error only"
	mkdir "$WORK/t"
	expect_failure "--file-contexts without libselinux" "built without libselinux" \
		"$MKFS" --file-contexts /dev/null "$WORK/t.img" "$WORK/t"
	finish
}

uuid=0f0e0d0c-0b0a-0908-0706-050403020100
mk() { "$MKFS" --quiet -U "$uuid" -T 1230768000 "$@"; }

cat >"$WORK/file_contexts" <<'EOF'
# the root and the system partition
/                       u:object_r:rootfs:s0
/acct                   u:object_r:cgroup:s0
/system(/.*)?           u:object_r:system_file:s0
/system/bin/sh      --  u:object_r:shell_exec:s0
/system/bin/toybox  --  u:object_r:toolbox_exec:s0
/system/bin(/.*)?   -l  u:object_r:system_link_file:s0
# vendor
/vendor(/.*)?           u:object_r:vendor_file:s0
/vendor/bin         -d  u:object_r:vendor_bin_dir:s0
/vendor/bin/hw/android\.hardware\.foo-service  u:object_r:hal_foo_default_exec:s0
/vendor/etc/empty       <<none>>
/vendor/firmware(/.*)?  u:object_r:vendor_firmware_file:s0
EOF

# ---- vendor ----
src=$WORK/vendor
mkdir -p "$src"/{bin/hw,etc,firmware}
echo service >"$src/bin/hw/android.hardware.foo-service"
echo tool >"$src/bin/tool"
: >"$src/etc/empty"
echo fw >"$src/firmware/x.bin"
ln -s tool "$src/bin/link"
setfattr -n security.selinux -v unconfined_u:object_r:user_home_t:s0 "$src/etc/empty"
setfattr -n security.selinux -v unconfined_u:object_r:user_home_t:s0 "$src/bin/tool"
setfattr -n user.kept -v yes "$src/bin/tool"

if mk --mount-point vendor --file-contexts "$WORK/file_contexts" "$WORK/v.img" "$src" 2>"$WORK/err"; then
	pass "vendor: the image builds from a text file_contexts"
else
	fail "vendor: mkfs failed: $(cat "$WORK/err")"
fi
extract_ours "$WORK/v.img" "$WORK/x"
while read -r path want; do
	check_eq "vendor: getfattr $path" "$want" "$(label "$WORK/x$path")"
done <<'EOF'
/ u:object_r:vendor_file:s0
/bin u:object_r:vendor_bin_dir:s0
/bin/hw u:object_r:vendor_file:s0
/bin/hw/android.hardware.foo-service u:object_r:hal_foo_default_exec:s0
/bin/tool u:object_r:vendor_file:s0
/bin/link u:object_r:vendor_file:s0
/etc/empty -
/firmware u:object_r:vendor_firmware_file:s0
/firmware/x.bin u:object_r:vendor_firmware_file:s0
EOF
check_eq "the label is stored without a trailing NUL" \
	"$(printf 'u:object_r:vendor_file:s0' | xxd -p)" "$(xattr_hex "$WORK/x/bin/tool" security.selinux)"
check_eq "other host xattrs stay" "yes" "$(getfattr -h --absolute-names --only-values -n user.kept "$WORK/x/bin/tool")"
reader2_fsck "vendor labels" "$WORK/v.img" "$src"

# the same labels from file_contexts.bin (sefcontext_compile, as the build does)
if command -v sefcontext_compile >/dev/null; then
	sefcontext_compile -o "$WORK/file_contexts.bin" "$WORK/file_contexts"
	mk --mount-point vendor --file-contexts "$WORK/file_contexts.bin" "$WORK/vbin.img" "$src"
	cmp -s "$WORK/v.img" "$WORK/vbin.img" &&
		pass "file_contexts.bin from sefcontext_compile gives the same image" ||
		fail "the compiled file_contexts gives another image"
else
	echo "note: sefcontext_compile (selinux-utils) missing: compiled contexts not tested"
fi
for mp in /vendor /vendor/; do
	mk --mount-point="$mp" --file-contexts="$WORK/file_contexts" "$WORK/mp.img" "$src"
	cmp -s "$WORK/v.img" "$WORK/mp.img" && pass "--mount-point=$mp labels as vendor" ||
		fail "--mount-point=$mp gives other labels"
done

# ---- system-as-root: --mount-point /, the tree holds system/ ----
sar=$WORK/sar
mkdir -p "$sar"/{acct,system/bin,system/etc}
echo sh >"$sar/system/bin/sh"
echo toybox >"$sar/system/bin/toybox"
ln -s toybox "$sar/system/bin/ls"
echo prop >"$sar/system/build.prop"
ln -s /system/etc "$sar/etc"
mk --mount-point / --file-contexts "$WORK/file_contexts" "$WORK/s.img" "$sar"
extract_ours "$WORK/s.img" "$WORK/x"
while read -r path want; do
	check_eq "system-as-root: getfattr $path" "$want" "$(label "$WORK/x$path")"
done <<'EOF'
/ u:object_r:rootfs:s0
/acct u:object_r:cgroup:s0
/system u:object_r:system_file:s0
/system/bin/sh u:object_r:shell_exec:s0
/system/bin/toybox u:object_r:toolbox_exec:s0
/system/bin/ls u:object_r:system_link_file:s0
/system/build.prop u:object_r:system_file:s0
/etc -
EOF

# ---- system_other: --mount-point system, the tree is the partition ----
mk --mount-point system --file-contexts "$WORK/file_contexts" "$WORK/so.img" "$sar/system"
extract_ours "$WORK/so.img" "$WORK/x"
check_eq "--mount-point system: /system/bin/sh" "u:object_r:shell_exec:s0" "$(label "$WORK/x/bin/sh")"
check_eq "--mount-point system: the root is /system/" "u:object_r:system_file:s0" "$(label "$WORK/x")"

# ---- APEX payload: no mount point, keys are "/" + path ----
apex=$WORK/apex
mkdir -p "$apex/bin" "$apex/lib64"
echo manifest >"$apex/apex_manifest.pb"
echo foo >"$apex/bin/foo"
echo lib >"$apex/lib64/libfoo.so"
cat >"$WORK/apex_file_contexts" <<'EOF'
(/.*)?                u:object_r:system_file:s0
/bin/foo              u:object_r:foo_exec:s0
/apex_manifest\.pb    u:object_r:apex_manifest_file:s0
EOF
mk -z lz4hc --file-contexts "$WORK/apex_file_contexts" -T 0 "$WORK/a.img" "$apex"
extract_ours "$WORK/a.img" "$WORK/x"
check_eq "apex: /bin/foo" "u:object_r:foo_exec:s0" "$(label "$WORK/x/bin/foo")"
check_eq "apex: /apex_manifest.pb" "u:object_r:apex_manifest_file:s0" "$(label "$WORK/x/apex_manifest.pb")"
check_eq "apex: the root" "u:object_r:system_file:s0" "$(label "$WORK/x")"

# ---- without --file-contexts the host labels are kept as they are ----
mk "$WORK/h.img" "$src"
extract_ours "$WORK/h.img" "$WORK/x"
check_eq "no --file-contexts: the host label stays" "unconfined_u:object_r:user_home_t:s0" \
	"$(label "$WORK/x/etc/empty")"

# ---- errors ----
expect_failure "a missing file_contexts" "nonexistent: cannot open the file contexts" \
	mk --file-contexts "$WORK/nonexistent" "$WORK/e.img" "$src"
# libselinux compiles a spec's regex when a lookup first needs it: the error
# then comes from the lookup, and names the path
printf '/vendor(  u:object_r:vendor_file:s0\n' >"$WORK/broken"
expect_failure "a lookup error is fatal and names the path" "/: SELinux label lookup of '/' failed" \
	mk --file-contexts "$WORK/broken" "$WORK/e.img" "$src"
[ ! -e "$WORK/e.img" ] && pass "no image is left behind" || fail "an image was left behind"
finish
