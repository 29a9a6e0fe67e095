# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with run.sh
# qemu-tests/verdicts.sh: run.sh's verdicts (sourced by run.sh; bash): the
# kernel log rules, each boot's record, and each image's PASS, FAIL or SKIP
# per target (evaluate, judge_mode).

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
