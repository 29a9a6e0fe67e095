# qemu-tests/hostile.sh: the hostile-image regression cases of run.sh
# (sourced by run.sh; bash).  See qemu-tests/ROBUSTNESS.md.
#
# The cases live in qemu-tests/hostile.list, in matrix format, with
#   EXPECT = hostile=CASE[:PATH[:PATH]]
# The image is built by mkfs as usual, then edited by `craft CASE IMG PATH..`
# (craft.c).  In the guest, hostile-walk.c mounts it and exercises every
# entry (lstat, getdents, readlink, listxattr/getxattr, reads probing the
# last page first), reporting each error instead of stopping.
#
# ours:  PASS when the walk finished within its time limit, reported at least
#        one error and only EUCLEAN/EOPNOTSUPP/EIO, the kernel printed the
#        refusal of the patch for this case (HOSTILE_RE), no oops/WARN/panic,
#        the guest survived, and the page cache grew < HOSTILE_CACHE_KB.
# stock: documents Debian's module on the same image: PASS with what
#        happened (crash with the oops line, or what the walk saw); cases
#        that would endanger the rest of the run are not mounted (SKIP).

# kernel message of our patch that must appear (extended regex)
declare -A HOSTILE_RE=(
	[g1]='extent too large'
	[g1p]='extent too large \(1228800 encoded'
	[g2]='unsupported lcluster size'
	[g3]='fragment data beyond the packed inode'
	[g4]='negative i_size'
	[g5]='bogus h_shared_count'
	[g10]='extent too large: lookback'
	[g11]='packed inode \(nid [0-9]+\) is not a regular file'
	[g11s]='claims a fragment of its own'
)
# why Debian's module must not mount a case or a named image in the default
# run (empty: it runs).  HOSTILE_STOCK=solo gives each of them to Debian's
# module in a short boot of its own instead, after its other images, to
# document the bug (each may cost IMAGE_LIMIT + 30 s when the guest hangs).
declare -A HOSTILE_NOSTOCK=(
	[g1]='oopses in z_erofs_do_decompressed_bvec(), or hangs the guest when the stray address is mapped'
	[g2]='its out-of-bounds memcpy corrupts guest memory silently, endangering later images'
	[g10]='the same > 2 GiB extent as g1 (oops), reached after 786433-step lookbacks'
	[hostile-g3-fragment-64g]='one 4 KiB read soft-locks the CPU for 20+ s and never finishes'
	[g11]='calls the NULL read_folio of a character-device packed inode (oops)'
	[g11s]='the reading task waits forever for the packed inode page it is filling'
)
HOSTILE_STOCK=${HOSTILE_STOCK:-skip}	# skip|solo: what stock does with the above
HOSTILE_LIST=${HOSTILE_LIST-$here/hostile.list}	# empty: no hostile cases
HOSTILE_CACHE_KB=${HOSTILE_CACHE_KB:-65536}	# page-cache growth allowed per image
HOSTILE_SECONDS=${HOSTILE_SECONDS:-20}		# walk time allowed per image

# hostile_plan NAME EXPECT: check the case; HOSTILE_CASE[] and GUEST_KIND[]
# (in build_images' own shell: its image jobs cannot set arrays)
hostile_plan() {
	local name=$1 expect=$2 case
	case=${expect#hostile=}
	case=${case%%:*}
	[ -n "${HOSTILE_RE[$case]:-}" ] || die "hostile: unknown case '$expect' for $name"
	HOSTILE_CASE[$name]=$case
	GUEST_KIND[$name]=hostile
	if [ -n "$(hostile_nostock "$name")" ]; then
		GUEST_KIND[$name]=hostile-nostock
		[ "$HOSTILE_STOCK" != solo ] || GUEST_KIND[$name]=hostile-solo
	fi
}

# hostile_craft EXPECT IMG: craft the image (prints the craft command's
# output; non-zero on failure)
hostile_craft() {
	local spec=${1#hostile=} case args=()
	case=${spec%%:*}
	[ "$spec" = "$case" ] || IFS=: read -ra args <<< "${spec#*:}"
	"$SCRATCH/bin/craft" "$case" "$2" "${args[@]}"
}

hostile_nostock() { # NAME -> reason, if Debian's module must not mount it
	local n=${HOSTILE_NOSTOCK[$1]:-}
	echo "${n:-${HOSTILE_NOSTOCK[${HOSTILE_CASE[$1]}]:-}}"
}

# " (EIO x1, EUCLEAN x2)" from the error lines of walk output $1
errno_counts() {
	grep '^error ' "$1" | awk '{ print $4 }' | sort | uniq -c |
		awk '{ printf "%s%s x%s", (NR > 1 ? ", " : " ("), $2, $1 } END { if (NR) printf ")" }'
}

# value of KEY=... in the walk summary line of file $1
summary_field() {
	sed -n "s/^summary .*\b$2=\([^ ]*\).*/\1/p" "$1"
}

evaluate_hostile() { # MODE NAME
	local mode=$1 name=$2
	local dir=$OUT/$mode r=$OUT/$mode/slots/$name case=${HOSTILE_CASE[$name]}
	local idx=${INDEX[$name]} why bad walk=$OUT/$mode/slots/$name/walk
	local errs other dl secs cache before after grown msg
	if [ ! -d "$r" ]; then
		why=${ENDED[$mode:$idx]:-}
		if [ -z "$why" ]; then
			report_fail "$mode/$name" "no result from the guest" "$dir"
		elif [ "$mode" = stock ]; then
			bad=$(grep -m1 -aE "$OOPS_RE" "$dir/${ENDLOG[$mode:$idx]}" | tr -d '\r' | cut -c1-110 || true)
			report_pass "$mode/$name" "documents the bug: guest $why: ${bad:-no oops line}"
		else
			report_fail "$mode/$name" "guest $why while this image was running" "$dir/${ENDLOG[$mode:$idx]}"
		fi
		return
	fi
	if [ -f "$r/skipped" ]; then
		report_skip "$mode/$name" "not mounted with Debian's module: $(hostile_nostock "$name")"
		return
	fi
	msg=$(kernel_text "$r/dmesg" | grep -m1 -E "${HOSTILE_RE[$case]}" | cut -c1-100 || true)
	bad=$(bad_kernel_lines "$r/dmesg" 0 | head -n 1 | cut -c1-150)
	if [ "$mode" = stock ]; then
		if [ -n "$bad" ]; then
			report_pass "$mode/$name" "documents the bug: kernel: $bad"
		elif [ ! -f "$walk" ]; then
			report_pass "$mode/$name" "refused at mount: $(kernel_text "$r/dmesg" | grep -m1 'erofs: ' | cut -c1-100 || true)"
		else
			secs=$(summary_field "$walk" seconds)
			cache=$(summary_field "$walk" cached_kb)
			grown=?
			[ -z "$cache" ] || grown=$(( (${cache#*->} - ${cache%->*}) / 1024 ))
			why="walk rc $(cat "$r/walk.rc"), $(summary_field "$walk" errors) error(s)$(errno_counts "$walk"), ${secs:-?} s, page cache +$grown MiB, $(grep -c '^xattrs ' "$walk" || true) entries with xattrs"
			grep -q '^entry .* size=-' "$walk" &&
				why="$why, negative size served: $(grep -m1 '^entry .* size=-' "$walk" | cut -d' ' -f2- || true)"
			report_pass "$mode/$name" "documents Debian's module: $why"
		fi
		return
	fi
	if [ -n "$bad" ]; then
		report_fail "$mode/$name" "kernel: $bad" "$r/dmesg"
		return
	fi
	if [ -f "$r/loop.rc" ]; then
		report_fail "$mode/$name" "loop setup failed: $(head -n 1 "$r/loop.err")" "$r/loop.err"
		return
	fi
	if [ "$(cat "$r/mount.rc")" != 0 ]; then
		# a clean refusal at mount time is fine if it is the intended one
		if [ -n "$msg" ]; then
			report_pass "$mode/$name" "refused at mount: ${msg#erofs: }"
		else
			report_fail "$mode/$name" "mount failed without the expected message: $(kernel_text "$r/dmesg" | grep -m1 'erofs: ' || true)" "$r/dmesg"
		fi
		return
	fi
	if [ "$(cat "$r/version")" != "$OUR_VERSION" ]; then
		report_fail "$mode/$name" "mounted by module '$(cat "$r/version")', not $OUR_VERSION" "$r/dmesg"
		return
	fi
	if [ "$(cat "$r/walk.rc")" != 0 ] || ! grep -q '^summary ' "$walk"; then
		report_fail "$mode/$name" "hostile-walk failed or timed out (rc $(cat "$r/walk.rc"))" "$walk"
		return
	fi
	if [ "$(cat "$r/umount.rc")" != 0 ]; then
		report_fail "$mode/$name" "umount failed: $(head -n 1 "$r/umount.err")" "$r/umount.err"
		return
	fi
	errs=$(summary_field "$walk" errors)
	other=$(summary_field "$walk" other)
	dl=$(summary_field "$walk" deadline)
	secs=$(summary_field "$walk" seconds)
	cache=$(summary_field "$walk" cached_kb)
	before=${cache%->*} after=${cache#*->}
	grown=$((after - before))
	if [ "$errs" = 0 ]; then
		report_fail "$mode/$name" "the hostile image was served without any error" "$walk"
	elif [ "$other" != 0 ]; then
		report_fail "$mode/$name" "errors other than EUCLEAN/EOPNOTSUPP/EIO: $(grep -m1 '^error .* other' "$walk" || true)" "$walk"
	elif [ "$dl" != 0 ] || awk -v s="$secs" -v l="$HOSTILE_SECONDS" 'BEGIN { exit !(s > l) }'; then
		report_fail "$mode/$name" "walk took ${secs} s (limit $HOSTILE_SECONDS s)" "$walk"
	elif [ "$grown" -gt "$HOSTILE_CACHE_KB" ]; then
		report_fail "$mode/$name" "page cache grew by $grown kB (limit $HOSTILE_CACHE_KB kB)" "$walk"
	elif [ -z "$msg" ]; then
		report_fail "$mode/$name" "no '${HOSTILE_RE[$case]}' message: the intended check did not fire" "$r/dmesg"
	else
		report_pass "$mode/$name" "$errs clean error(s)$(errno_counts "$walk"), ${secs} s, cache +$((grown / 1024)) MiB; kernel: ${msg#erofs: }"
	fi
}

# run_craft ARGS: `craft ARGS`, or hostile_craft EXPECT IMG for "hostile ..."
run_craft() {
	if [ "$1" = hostile ]; then
		shift
		hostile_craft "$@"
	else
		"$SCRATCH/bin/craft" "$@"
	fi
}

# hostile_solo_boots MODE LAST-BOOT-NUMBER: in stock mode, one short boot per
# hostile-solo image (run by run_boots after the mode's other boots)
hostile_solo_boots() {
	local mode=$1 n=$2 name idx
	[ "$mode" = stock ] || return 0
	for name in "${NAMES[@]}"; do
		[ "${GUEST_KIND[$name]:-}" = hostile-solo ] || continue
		idx=${INDEX[$name]}
		n=$((n + 1))
		rm -rf "$OUT/$mode/slots/$name"
		BOOT_APPEND="forge.only=$idx" boot "$mode" "$idx" "$n"
		echo "$n $BOOT_END $BOOT_SECONDS" >> "$OUT/$mode/boots"
		[ "$BOOT_END" = alldone ] || echo "$idx $BOOT_END serial-$n.log" >> "$OUT/$mode/ended"
	done
}
