// SPDX-License-Identifier: MIT
/*
 * libcutils' built-in fs_config tables (see include/erofs/source/fsconfig_tables.h):
 * the owners, modes and capabilities Android gives well-known paths of
 * every partition and mount point when its config.fs says nothing.  Rules
 * are tried in order and the first match wins, so the more specific ones
 * come first.
 */
#include "erofs/source/fsconfig_tables.h"

/* Android ids (system/core/libcutils/include/private/android_filesystem_config.h) */
enum android_id {
	ID_ROOT = 0,
	ID_SYSTEM = 1000,
	ID_DHCP = 1014,
	ID_MEDIA_RW = 1023,
	ID_SDCARD_R = 1028,
	ID_CLAT = 1029,
	ID_LOGD = 1036,
	ID_SHARED_RELRO = 1037,
	ID_SHELL = 2000,
	ID_CACHE = 2001,
	ID_MISC = 9998,
	ID_APP = 10000,
};

/* capability bits (linux/capability.h) */
#define CAP(n)			(1ull << (n))
#define CAP_SETGID_BIT		6
#define CAP_SETUID_BIT		7
#define CAP_BLOCK_SUSPEND_BIT	36

#define OWNED(path, owner, group, perm, caps) \
	{ path, { .uid = (owner), .gid = (group), .mode = (perm), .capabilities = (caps) } }
#define ENTRY(path, owner, group, perm)	OWNED(path, owner, group, perm, 0)

static const struct erofs_fsconfig_builtin dirs[] = {
	ENTRY("cache",				ID_SYSTEM, ID_CACHE, 0770),
	ENTRY("config",				ID_ROOT, ID_ROOT, 0555),
	ENTRY("data/app",			ID_SYSTEM, ID_SYSTEM, 0771),
	ENTRY("data/app-private",		ID_SYSTEM, ID_SYSTEM, 0771),
	ENTRY("data/app-ephemeral",		ID_SYSTEM, ID_SYSTEM, 0771),
	ENTRY("data/dalvik-cache",		ID_ROOT, ID_ROOT, 0771),
	ENTRY("data/data",			ID_SYSTEM, ID_SYSTEM, 0771),
	ENTRY("data/local/tmp",			ID_SHELL, ID_SHELL, 0771),
	ENTRY("data/local",			ID_SHELL, ID_SHELL, 0771),
	ENTRY("data/misc/dhcp",			ID_DHCP, ID_DHCP, 0770),
	ENTRY("data/misc/shared_relro",		ID_SHARED_RELRO, ID_SHARED_RELRO, 0771),
	ENTRY("data/misc",			ID_SYSTEM, ID_MISC, 01771),
	ENTRY("data/media/Music",		ID_MEDIA_RW, ID_MEDIA_RW, 0775),
	ENTRY("data/media",			ID_MEDIA_RW, ID_MEDIA_RW, 0775),
	ENTRY("data/preloads",			ID_ROOT, ID_ROOT, 0775),
	ENTRY("data",				ID_SYSTEM, ID_SYSTEM, 0771),
	ENTRY("mnt",				ID_ROOT, ID_SYSTEM, 0755),
	ENTRY("product/bin",			ID_ROOT, ID_SHELL, 0751),
	ENTRY("product/apex/*/bin",		ID_ROOT, ID_SHELL, 0751),
	ENTRY("sdcard",				ID_ROOT, ID_ROOT, 0777),
	ENTRY("storage",			ID_ROOT, ID_SDCARD_R, 0751),
	ENTRY("system/apex/com.android.tethering/bin/for-system", ID_ROOT, ID_SYSTEM, 0750),
	ENTRY("system/bin",			ID_ROOT, ID_SHELL, 0751),
	ENTRY("system/etc/ppp",			ID_ROOT, ID_ROOT, 0755),
	ENTRY("system/vendor",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/xbin",			ID_ROOT, ID_SHELL, 0750),
	ENTRY("system/apex/*/bin",		ID_ROOT, ID_SHELL, 0751),
	ENTRY("system_ext/apex/com.android.tethering/bin/for-system", ID_ROOT, ID_SYSTEM, 0750),
	ENTRY("system_ext/bin",			ID_ROOT, ID_SHELL, 0751),
	ENTRY("system_ext/apex/*/bin",		ID_ROOT, ID_SHELL, 0751),
	ENTRY("vendor/bin",			ID_ROOT, ID_SHELL, 0751),
	ENTRY("vendor/apex/*/bin",		ID_ROOT, ID_SHELL, 0751),
	ENTRY("vendor",				ID_ROOT, ID_SHELL, 0755),
};

static const struct erofs_fsconfig_builtin files[] = {
	ENTRY("data/app/*",			ID_SYSTEM, ID_SYSTEM, 0644),
	ENTRY("data/app-ephemeral/*",		ID_SYSTEM, ID_SYSTEM, 0644),
	ENTRY("data/app-private/*",		ID_SYSTEM, ID_SYSTEM, 0644),
	ENTRY("data/data/*",			ID_APP, ID_APP, 0644),
	ENTRY("data/media/*",			ID_MEDIA_RW, ID_MEDIA_RW, 0644),
	/* property files and the partitions' own rule files */
	ENTRY("default.prop",			ID_ROOT, ID_ROOT, 0600),
	ENTRY("system/etc/prop.default",	ID_ROOT, ID_ROOT, 0600),
	ENTRY("odm/build.prop",			ID_ROOT, ID_ROOT, 0600),
	ENTRY("odm/default.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("odm/etc/build.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("odm/etc/fs_config_dirs",		ID_ROOT, ID_ROOT, 0444),
	ENTRY("odm/etc/fs_config_files",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("oem/etc/fs_config_dirs",		ID_ROOT, ID_ROOT, 0444),
	ENTRY("oem/etc/fs_config_files",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("product/build.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("product/etc/fs_config_dirs",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("product/etc/fs_config_files",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("system_ext/build.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("system_ext/etc/fs_config_dirs",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("system_ext/etc/fs_config_files",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("system/bin/crash_dump32",	ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/bin/crash_dump64",	ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/bin/debuggerd",		ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/bin/logd",		ID_LOGD, ID_LOGD, 0550),
	ENTRY("system/bin/secilc",		ID_ROOT, ID_ROOT, 0700),
	ENTRY("system/bin/uncrypt",		ID_ROOT, ID_ROOT, 0750),
	ENTRY("system/build.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("system/etc/fs_config_dirs",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("system/etc/fs_config_files",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("system/etc/init.goldfish.rc",	ID_ROOT, ID_SHELL, 0440),
	ENTRY("system/etc/init.goldfish.sh",	ID_ROOT, ID_SHELL, 0550),
	ENTRY("system/etc/init.ril",		ID_ROOT, ID_SHELL, 0550),
	ENTRY("system/etc/ppp/*",		ID_ROOT, ID_ROOT, 0555),
	ENTRY("system/etc/rc.*",		ID_ROOT, ID_ROOT, 0555),
	ENTRY("vendor/bin/install-recovery.sh",	ID_ROOT, ID_ROOT, 0750),
	ENTRY("vendor/build.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("vendor/default.prop",		ID_ROOT, ID_ROOT, 0600),
	ENTRY("vendor/etc/recovery.img",	ID_ROOT, ID_ROOT, 0440),
	ENTRY("vendor/etc/fs_config_dirs",	ID_ROOT, ID_ROOT, 0444),
	ENTRY("vendor/etc/fs_config_files",	ID_ROOT, ID_ROOT, 0444),
	/* set-id on purpose (userdebug and eng builds only ship them) */
	ENTRY("system/xbin/procmem",		ID_ROOT, ID_ROOT, 06755),
	ENTRY("system/xbin/su",			ID_ROOT, ID_SHELL, 04750),
	/* set-id or file capabilities, in user builds too */
	ENTRY("system/apex/com.android.tethering/bin/for-system/clatd", ID_CLAT, ID_CLAT, 06755),
	ENTRY("system_ext/apex/com.android.tethering/bin/for-system/clatd", ID_CLAT, ID_CLAT, 06755),
	OWNED("system/bin/inputflinger",	ID_SYSTEM, ID_SHELL, 0700, CAP(CAP_BLOCK_SUSPEND_BIT)),
	OWNED("system/bin/run-as",		ID_ROOT, ID_SHELL, 0750,
	      CAP(CAP_SETUID_BIT) | CAP(CAP_SETGID_BIT)),
	OWNED("system/bin/simpleperf_app_runner", ID_ROOT, ID_SHELL, 0750,
	      CAP(CAP_SETUID_BIT) | CAP(CAP_SETGID_BIT)),
	/* the first-stage ramdisk (64-bit hosts: the 64-bit linker) */
	ENTRY("first_stage_ramdisk/system/bin/e2fsck",	ID_ROOT, ID_ROOT, 0755),
	ENTRY("first_stage_ramdisk/system/bin/linker64", ID_ROOT, ID_ROOT, 0755),
	ENTRY("first_stage_ramdisk/system/bin/resize2fs", ID_ROOT, ID_ROOT, 0755),
	ENTRY("first_stage_ramdisk/system/bin/snapuserd", ID_ROOT, ID_ROOT, 0755),
	ENTRY("first_stage_ramdisk/system/bin/snapuserd_ramdisk", ID_ROOT, ID_ROOT, 0755),
	ENTRY("first_stage_ramdisk/system/bin/tune2fs",	ID_ROOT, ID_ROOT, 0755),
	ENTRY("first_stage_ramdisk/system/bin/fsck.f2fs", ID_ROOT, ID_ROOT, 0755),
	/* generic: the root's init links, init scripts, binaries, apps */
	ENTRY("bin/*",				ID_ROOT, ID_ROOT, 0755),
	ENTRY("fstab.*",			ID_ROOT, ID_SHELL, 0640),
	ENTRY("init*",				ID_ROOT, ID_SHELL, 0750),
	ENTRY("*.rc",				ID_ROOT, ID_ROOT, 0644),
	ENTRY("odm/bin/*",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("odm/framework/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("odm/app/*",			ID_ROOT, ID_ROOT, 0644),
	ENTRY("odm/priv-app/*",			ID_ROOT, ID_ROOT, 0644),
	ENTRY("product/bin/*",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("product/apex/*bin/*",		ID_ROOT, ID_SHELL, 0755),
	ENTRY("product/framework/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("product/app/*",			ID_ROOT, ID_ROOT, 0644),
	ENTRY("product/priv-app/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("system/bin/*",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/xbin/*",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/apex/*/bin/*",		ID_ROOT, ID_SHELL, 0755),
	ENTRY("system/framework/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("system/app/*",			ID_ROOT, ID_ROOT, 0644),
	ENTRY("system/priv-app/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("system_ext/bin/*",		ID_ROOT, ID_SHELL, 0755),
	ENTRY("system_ext/apex/*/bin/*",	ID_ROOT, ID_SHELL, 0755),
	ENTRY("system_ext/framework/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("system_ext/app/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("system_ext/priv-app/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("vendor/bin/*",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("vendor/apex/*bin/*",		ID_ROOT, ID_SHELL, 0755),
	ENTRY("vendor/xbin/*",			ID_ROOT, ID_SHELL, 0755),
	ENTRY("vendor/framework/*",		ID_ROOT, ID_ROOT, 0644),
	ENTRY("vendor/app/*",			ID_ROOT, ID_ROOT, 0644),
	ENTRY("vendor/priv-app/*",		ID_ROOT, ID_ROOT, 0644),
};

const struct erofs_fsconfig_builtin *erofs_fsconfig_builtin_table(bool dir, size_t *count)
{
	*count = dir ? sizeof(dirs) / sizeof(dirs[0]) : sizeof(files) / sizeof(files[0]);
	return dir ? dirs : files;
}
