#!/bin/sh
# /init of the QEMU test guest (busybox sh).  Written by qemu-tests/run.sh
# into the initramfs together with:
#   /forge/conf     shell variables: SLOT_BYTES IMAGE_LIMIT OUR_VERSION
#                   FINDING_WALK FINDING_KILL FINDING_CAP
#   /forge/images   one line per image: INDEX NAME OFFSET SIZE KIND
#                   [OFFSET SIZE...: extra devices in table order, -o device=]
#                   (/forge/images-MODE instead, when it exists)
#   /forge/modules  stock module file names, in insmod order
#   /lib/forge/*.ko those modules; erofs-ours.ko and erofs-stock.ko
# Kernel command line: forge.mode=ours|stock forge.start=FIRST_INDEX
# (forge.fuzz=1: the kernel fuzz campaign of fuzz.sh instead; see below)
#
# The data disk (serial "forgedata") holds the images back to back; each is
# mounted through a read-only loop device limited to its own bytes.  The
# results disk (serial "forgeout") gets one tar per image in a fixed slot
# (INDEX * SLOT_BYTES) written as soon as that image is done, so a crash
# later in the run loses nothing already measured; slot 0 of the run holds
# the boot record (module version, boot dmesg).  Progress markers on the
# console ("forge: RUN i", "forge: DONE i", "forge: ALLDONE") let the host
# attribute crashes and hangs.

export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /mnt /out
mount -t tmpfs tmpfs /tmp
. /forge/conf

say() { echo "forge: $*" > /dev/console; }
kmsg() { echo "<6>erofs-forge-test: $*" > /dev/kmsg; }

stop() {
	sync
	say "POWEROFF"
	poweroff -f
	sleep 10
}

mode=ours start=0 only= fuzz= findings=
for arg in $(cat /proc/cmdline); do
	case $arg in
	forge.mode=*) mode=${arg#forge.mode=} ;;
	forge.start=*) start=${arg#forge.start=} ;;
	forge.only=*) only=${arg#forge.only=} ;;	# run just this image
	forge.fuzz=*) fuzz=${arg#forge.fuzz=} ;;
	forge.findings=*) findings=${arg#forge.findings=} ;;	# 1: only the "finding" images; all
	esac
done
# the images of this boot's target (run.sh: a newer kernel's ours target
# runs fewer lines than its stock one)
IMAGES=/forge/images
[ -f "/forge/images-$mode" ] && IMAGES=/forge/images-$mode

disk_by_serial() {
	for d in /sys/block/vd*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}

# write directory /out/$2 as a tar into slot $1 of the results disk
save_slot() {
	( cd /out && tar -cf /tmp/slot.tar "$2" )
	size=$(stat -c %s /tmp/slot.tar)
	if [ "$size" -gt "$SLOT_BYTES" ]; then
		echo "result of $size bytes exceeds the $SLOT_BYTES-byte slot" > "/out/$2/overflow"
		rm -f "/out/$2/manifest"
		( cd /out && tar -cf /tmp/slot.tar "$2" )
	fi
	dd if=/tmp/slot.tar of="$OUTDISK" bs=4096 seek=$(($1 * SLOT_BYTES / 4096)) \
		conv=notrunc,fsync 2>/dev/null || say "cannot write slot $1"
	rm -f /tmp/slot.tar
}

# matrix lines of kind "fuse": erofsfuse (run.sh adds it with its libraries
# and fuse.ko) mounts the image as a script would, "erofsfuse IMAGE DIR",
# in the background; umount ends it.  An extra device: --device=, as -o device=
fuse_mount() { # DEVICE RESULTDIR [EXTRA_DEVICE...]
	fm_dev=$1 fm_r=$2
	shift 2
	fm_args=
	for b in "$@"; do fm_args="$fm_args --device=$b"; done
	[ -e /dev/fuse ] || insmod /lib/forge/fuse.ko 2> "$fm_r/fuse-insmod.err"
	erofsfuse $fm_args "$fm_dev" /mnt > "$fm_r/erofsfuse.out" 2> "$fm_r/mount.err"
	echo $? > "$fm_r/mount.rc"
}

fuse_gone() { # RESULTDIR: the daemon must exit after the unmount
	n=0
	while pidof erofsfuse > /dev/null && [ "$n" -lt 50 ]; do
		usleep 100000
		n=$((n + 1))
	done
	if pidof erofsfuse > /dev/null; then
		echo "erofsfuse still running 5 s after the unmount" > "$1/umount.err"
		echo 1 > "$1/umount.rc"
	fi
	return 0
}

say "BOOTED mode=$mode start=$start"
mkdir -p /out/boot
echo "$mode" > /out/boot/mode
for m in $(cat /forge/modules); do
	insmod "/lib/forge/$m" 2>> /out/boot/insmod.err || echo "$m" >> /out/boot/insmod.failed
done
insmod "/lib/forge/erofs-$mode.ko" 2>> /out/boot/insmod.err || echo "erofs-$mode.ko" >> /out/boot/insmod.failed
cat /sys/module/erofs/version > /out/boot/version 2>/dev/null || echo "(none)" > /out/boot/version

DATADISK=$(disk_by_serial forgedata) || { say "FATAL no data disk"; stop; }
# fuzz mode (qemu-tests/fuzz.sh): the data disk is a batch of fuzz-mutate
# images; fuzz-guest.c mounts and walks them from image forge.start on,
# reporting on the console, then powers off.  FUZZ_* come from /forge/conf.
if [ -n "$fuzz" ]; then
	[ -f /out/boot/insmod.failed ] && say "INSMODFAILED $(cat /out/boot/insmod.failed | tr '\n' ' ')"
	exec fuzz-guest -t "$FUZZ_WALK" -k "$FUZZ_KILL" -c "$FUZZ_CAP" -s "$start" \
		-M "/lib/forge/erofs-$mode.ko" "$DATADISK"
fi
OUTDISK=$(disk_by_serial forgeout) || { say "FATAL no results disk"; stop; }
dmesg -c -r > /out/boot/dmesg
cut -d' ' -f1 /proc/uptime > /out/boot/uptime
# slot 0 is the boot record; image INDEX goes to slot INDEX + 1
save_slot 0 boot

# EXPECT overlay (qemu-tests/matrix, layer-*): a container layer, mounted as
# overlayfs's upper lower layer over the image named LOWER, and manifested merged
overlay_image() { # RESULTS OFFSET SIZE LOWER
	ov_r=$1 ov_lo= ov_ls=
	while read -r ov_i ov_n ov_o ov_s ov_k; do
		[ "$ov_n" = "$4" ] && ov_lo=$ov_o ov_ls=$ov_s
	done < "$IMAGES"
	mkdir -p /lower /upper
	if ov_ld=$(guest-loop attach "$DATADISK" "$ov_lo" "$ov_ls" 2>> "$ov_r/loop.err") &&
	   ov_ud=$(guest-loop attach "$DATADISK" "$2" "$3" 2>> "$ov_r/loop.err"); then
		mount -t erofs -o ro "$ov_ld" /lower 2> "$ov_r/mount.err" &&
			mount -t erofs -o ro "$ov_ud" /upper 2>> "$ov_r/mount.err" &&
			mount -t overlay overlay -o ro,lowerdir=/upper:/lower /mnt 2>> "$ov_r/mount.err"
		echo $? > "$ov_r/mount.rc"
		if [ "$(cat "$ov_r/mount.rc")" = 0 ]; then
			cat /sys/module/erofs/version > "$ov_r/version" 2>/dev/null || echo "(none)" > "$ov_r/version"
			timeout "$IMAGE_LIMIT" erofs-manifest /mnt > "$ov_r/manifest" 2> "$ov_r/manifest.err"
			echo $? > "$ov_r/manifest.rc"
			umount /mnt 2> "$ov_r/umount.err"
			echo $? > "$ov_r/umount.rc"
		fi
		umount /upper 2>/dev/null
		umount /lower 2>/dev/null
		guest-loop detach "$ov_ud" 2>> "$ov_r/loop.err"
		guest-loop detach "$ov_ld" 2>> "$ov_r/loop.err"
	else
		echo 1 > "$ov_r/loop.rc"
	fi
}

# kind "finding" (run.sh, findings.sh): a newer kernel's fuzz finding,
# walked by hostile-walk -f in the background; killed after FINDING_KILL s,
# and if even SIGKILL does not end it the kernel is stuck: "STUCK", and the
# host ends the boot
finding_walk() { # RESULTDIR
	hostile-walk -f -c "$FINDING_CAP" -t "$FINDING_WALK" /mnt > "$1/walk" 2> "$1/walk.err" &
	fw_pid=$! fw_n=0
	while [ -d "/proc/$fw_pid" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$fw_pid/stat" 2>/dev/null; do
		sleep 1
		fw_n=$((fw_n + 1))
		[ "$fw_n" = "$FINDING_KILL" ] && kill -9 "$fw_pid"
		if [ "$fw_n" -ge $((FINDING_KILL + 6)) ]; then
			say "STUCK $idx $name"
			while :; do sleep 60; done
		fi
	done
	wait "$fw_pid"
	echo $? > "$1/walk.rc"
}
# their boots print every kernel message on the console (the WARNING
# before panic_on_warn's panic, too)
[ -n "$findings" ] && echo 7 > /proc/sys/kernel/printk

while read -r idx name off size kind extra; do
	blobdevs=
	[ "$idx" -lt "$start" ] && continue
	[ -n "$only" ] && [ "$idx" != "$only" ] && continue
	# findings run only in boots of their own (forge.findings=1, alone, or
	# =all, with the rest)
	{ [ "$kind" = finding ] && [ -z "$findings" ]; } && continue
	{ [ "$kind" != finding ] && [ "$findings" = 1 ]; } && continue
	say "RUN $idx $name"
	kmsg "RUN $idx $name"
	r=/out/$name
	mkdir -p "$r"
	t0=$(cut -d' ' -f1 /proc/uptime)
	# hostile images (qemu-tests/hostile.sh): some are never given to
	# Debian's module, some only in a boot of their own (forge.only); all
	# are exercised by hostile-walk instead of being manifested
	if [ "$mode" = stock ] && { [ "$kind" = hostile-nostock ] ||
	   { [ "$kind" = hostile-solo ] && [ -z "$only" ]; }; }; then
		echo "$kind" > "$r/skipped"
	elif [ "${kind%%=*}" = overlay ]; then
		overlay_image "$r" "$off" "$size" "${kind#overlay=}"
	elif dev=$(guest-loop attach "$DATADISK" "$off" "$size" 2> "$r/loop.err"); then
		# extra devices (a blob, a tar, rebuild mode's layers): OFFSET SIZE each
		set -- $extra
		while [ $# -ge 2 ]; do
			blobdevs="$blobdevs $(guest-loop attach "$DATADISK" "$1" "$2" 2>> "$r/loop.err")"
			shift 2
		done
		if [ "$kind" = fuse ]; then
			fuse_mount "$dev" "$r" $blobdevs
		else
			opts=ro
			for b in $blobdevs; do opts=$opts,device=$b; done
			mount -t erofs -o "$opts" "$dev" /mnt 2> "$r/mount.err"
			echo $? > "$r/mount.rc"
		fi
		if [ "$(cat "$r/mount.rc")" = 0 ]; then
			cat /sys/module/erofs/version > "$r/version" 2>/dev/null || echo "(none)" > "$r/version"
			[ "$kind" = fuse ] && echo erofsfuse > "$r/version"
			case $kind in
			finding)
				finding_walk "$r" ;;
			hostile*)
				timeout "$IMAGE_LIMIT" hostile-walk -t 20 /mnt > "$r/walk" 2> "$r/walk.err"
				echo $? > "$r/walk.rc" ;;
			*)
				timeout "$IMAGE_LIMIT" erofs-manifest /mnt > "$r/manifest" 2> "$r/manifest.err"
				echo $? > "$r/manifest.rc" ;;
			esac
			umount /mnt 2> "$r/umount.err"
			echo $? > "$r/umount.rc"
			[ "$kind" = fuse ] && fuse_gone "$r"
		fi
		guest-loop detach "$dev" 2>> "$r/loop.err"
		for b in $blobdevs; do guest-loop detach "$b" 2>> "$r/loop.err"; done
	else
		echo 1 > "$r/loop.rc"
	fi
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$t0 $t1" > "$r/time"
	kmsg "DONE $idx $name"
	dmesg -c -r > "$r/dmesg"
	save_slot $((idx + 1)) "$name"
	rm -rf "$r"
	say "DONE $idx $name"
done < "$IMAGES"

say "ALLDONE"
stop
