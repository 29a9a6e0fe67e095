# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with run.sh
# qemu-tests/boots.sh: the guest side of run.sh (sourced by run.sh; bash):
# the data disk every image is laid out on, the initramfs of each kernel,
# erofsfuse for the fuse lines, and the QEMU boots of each target, two
# targets side by side (run_qemu_stage), a reboot past an image a guest
# died on.

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
	local nimg=${#NAMES[@]} t0=$SECONDS
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
	watch_guest "$log" "$t0" "$boot_limit" $((limit + 30)) hang
	if grep -aq '^forge: ALLDONE' "$log"; then
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
