# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with run.sh
# qemu-tests/findings.sh: the newer kernels' fuzz findings and our modules
# for those kernels in run.sh (sourced by run.sh; bash).  See
# qemu-tests/ROBUSTNESS.md, "Newer kernels".
#
# Findings: each line of fuzz-findings.list is one image, kept in
# findings/NAME.img.gz, and one verdict per target of a kernel series whose
# column is not "-":
#   X.Y/stock  the stock kernel must still show what the column says
#              (crash, hang, flood or survive); a crash or hang that is gone
#              FAILs loudly, so the table in README.md stays true
#   X.Y/ours   our module for that kernel must survive it: no oops, WARNING
#              or lockup, the walk ends, only EUCLEAN/EOPNOTSUPP/EIO, the page
#              cache grows by less than FINDING_CACHE_KB
# The images are never given to the 6.1 kernel (its crafted hostile cases
# cover the same bugs, hostile.list).  They run in boots of their own after
# a target's other images (forge.findings=1; a newer kernel's ours target
# runs all its images so: forge.findings=all), with panic_on_warn,
# softlockup_panic and hung_task_panic; the guest walks each with
# hostile-walk -f, kills the walker after FINDING_KILL s and reports
# "forge: STUCK" when even that does not end it.  A crash or hang ends the
# boot and the next one goes on from the following image.
#
# Our modules for the newer kernels: for each series of OURS_KERNELS that
# KERNELS fetched, kmod/build-612.sh (6.12) or kmod/build-7x.sh (7) builds
# Debian's fs/erofs with kmod/patches-612 or patches-7x (kept for the next
# run in kmod/build/newer-6.12 and newer-7, beside the 6.1 module's build:
# 6.12 ~110 MB, 7.x ~1.9 GB for its prepared tree), and the target "X.Y/ours"
# boots that kernel with it on the findings and on the matrix lines whose
# NAME matches OURS_LINES (enough to prove the patched module still reads
# ordinary images; a line outside its kernel= range is left out as usual).

FINDINGS_LIST=${FINDINGS_LIST-$here/fuzz-findings.list}	# empty: no findings
OURS_KERNELS=${OURS_KERNELS-6.12 7}
OURS_LINES=${OURS_LINES-^(small-default|gen-frag-ztail|dup-dedupe-frag|xattr-prefix-frag|gen-deflate-c1m-frag|gen-metabox-lz4hc)$}
FINDING_CACHE_KB=${FINDING_CACHE_KB:-65536}
FINDING_CAP=${FINDING_CAP:-4194304}	# hostile-walk -c: bytes read of a file, as fuzz.sh
FINDING_WALK=${FINDING_WALK:-5}		# hostile-walk -t
FINDING_KILL=${FINDING_KILL:-8}		# SIGKILL after; STUCK 6 s later

# add_findings: each finding of FINDINGS_LIST (matching ONLY) into NAMES[]
# as KIND finding; FEXPECT[NAME:SERIES] = its column for 6.12 and 7
add_findings() {
	local name e612 e7 rest n=0
	[ -n "$FINDINGS_LIST" ] || return 0
	[ -f "$FINDINGS_LIST" ] || die "no findings list $FINDINGS_LIST"
	while read -r name e612 e7 rest; do
		[ -n "$name" ] && [ "${name:0:1}" != '#' ] || continue
		[ -z "$ONLY" ] || [[ $name =~ $ONLY ]] || continue
		[ -n "$rest" ] || die "fuzz-findings.list: line of '$name' has no recipe"
		gzip -dc "$here/findings/$name.img.gz" > "$SCRATCH/img/$name.img" ||
			die "findings: cannot unpack $here/findings/$name.img.gz"
		NAMES+=("$name")
		KIND[$name]=finding GUEST_KIND[$name]=finding
		IMG[$name]=$SCRATCH/img/$name.img
		ALGS[$name]=$(image_algs "$SCRATCH/img/$name.img")
		FEXPECT[$name:6.12]=$e612 FEXPECT[$name:7]=$e7
		KMIN[$name]=6.12 KMAX[$name]=
		n=$((n + 1))
	done < "$FINDINGS_LIST"
	[ "$n" = 0 ] || msg "$n finding image(s) from $FINDINGS_LIST"
}

# kernel_series KVER VAR: VAR = 6.12 or 7 (fuzz-findings.list's columns);
# set, not printed: initramfs building asks once per image, and a $(...)
# fork costs milliseconds on some CI hosts
kernel_series() {
	case $1 in 6.12.*) printf -v "$2" 6.12 ;; 7.*) printf -v "$2" 7 ;; *) printf -v "$2" %s "$1" ;; esac
}

# finding_runs_on KVER NAME: the finding's column for this kernel is set
finding_runs_on() {
	local series e
	kernel_series "$1" series
	e=${FEXPECT[$2:$series]:-}
	[ -n "$e" ] && [ "$e" != - ]
}

# runs_on_target TARGET NAME: is image NAME given to TARGET?  As
# runs_on_kernel, and on a newer kernel's ours target only the findings
# and the OURS_LINES lines
runs_on_target() {
	runs_on_kernel "${T_KVER[$1]}" "$2" || return 1
	[ "${T_MODE[$1]}" = ours ] && [ "${T_KVER[$1]}" != "$HOST_KVER" ] || return 0
	[ "${KIND[$2]}" = finding ] || [[ $2 =~ $OURS_LINES ]]
}

# ours_target SERIES KVER KROOT: the target X.Y/ours, once our module for
# SERIES is built (a FAIL verdict when it cannot be)
ours_target() {
	local series=$1 kver=$2 kroot=$3 script target t0=$SECONDS ko log work
	kver_short "$kver" target
	target=$target/ours
	case $series in
	6.12) script=build-612.sh ;;
	7) script=build-7x.sh ;;
	*) die "OURS_KERNELS: unknown series '$series' (6.12 or 7)" ;;
	esac
	log=$OUT/kmod-$series.log
	# beside kmod/'s own build of the 6.1 module, kept between runs
	work=$top_srcdir/kmod/build/newer-$series
	[ -w "$top_srcdir/kmod" ] || work=$top_builddir/kmod/build/newer-$series
	msg "building our module for $kver (kmod/$script $work)"
	if ! ko=$(KERNEL_DIR=$KERNEL_DIR top_builddir=$top_builddir \
		bash "$top_srcdir/kmod/$script" "$work" 2> "$log") || [ ! -f "$ko" ]; then
		report_fail "$target/build" "kmod/$script failed: $(tail -n 1 "$log")" "$log"
		return
	fi
	OURKO_OF[$kver]=$ko
	OURVER_OF[$kver]=$(modinfo -F version "$ko")
	TARGETS+=("$target")
	T_KVER[$target]=$kver T_KROOT[$target]=$kroot T_MODE[$target]=ours
	msg "module ${OURVER_OF[$kver]} for $target ready ($((SECONDS - t0)) s): $ko"
}

# the module version an ours target must show
our_version_of() { echo "${OURVER_OF[${T_KVER[$1]}]:-$OUR_VERSION}"; }

# findings_boots MODE [all]: the target's finding images, in boots of
# their own (run by run_boots after the target's other boots); with "all",
# every image of the target in such boots (a newer kernel's ours target:
# it must survive the findings, so one boot usually does for all)
findings_boots() {
	local mode=$1 which=${2:-1} n name first=-1 idx
	n=$(wc -l < "$OUT/$mode/boots")
	for name in "${NAMES[@]}"; do
		{ [ "$which" = all ] || [ "${KIND[$name]}" = finding ]; } && runs_on_target "$mode" "$name" || continue
		first=${INDEX[$name]}
		break
	done
	[ "$first" -ge 0 ] || return 0
	idx=$first
	while [ "$idx" -lt "${#NAMES[@]}" ]; do
		n=$((n + 1))
		BOOT_APPEND="forge.findings=$which panic_on_warn=1 softlockup_panic=1 hung_task_panic=1 hung_task_timeout_secs=10" \
			boot "$mode" "$idx" "$n"
		echo "$n $BOOT_END $BOOT_SECONDS" >> "$OUT/$mode/boots"
		[ "$BOOT_END" != alldone ] || break
		[ "$BOOT_LAST" -ge 0 ] || break
		echo "$BOOT_LAST $BOOT_END serial-$n.log" >> "$OUT/$mode/ended"
		msg "$mode: guest $BOOT_END during finding image $BOOT_LAST"
		idx=$((BOOT_LAST + 1))
	done
}

# has_other_images MODE: does the target run any image that is not a finding?
has_other_images() {
	local name
	for name in "${NAMES[@]}"; do
		[ "${KIND[$name]}" != finding ] && runs_on_target "$1" "$name" && return 0
	done
	return 1
}

# what the guest did with finding NAME on MODE: sets F_OUT (crash, hang,
# flood, survive, noresult) and F_WHY (its account)
finding_outcome() {
	local mode=$1 name=$2 idx=${INDEX[$2]} r=$OUT/$1/slots/$2 log line cache grown
	F_OUT='' F_WHY=''
	if [ ! -d "$r" ]; then
		if [ -z "${ENDED[$mode:$idx]:-}" ]; then
			F_OUT=noresult F_WHY="no result from the guest"
			return
		fi
		log=$OUT/$mode/${ENDLOG[$mode:$idx]}
		# (all of the log is read: grep -m1 would leave the writer a
		# SIGPIPE, which pipefail turns into a failure)
		line=$(tr -d '\r' < "$log" | { grep -aE 'blocked for more than|soft lockup|^forge: STUCK' || true; } | sed -n 1p)
		if [ -n "$line" ] || [ "${ENDED[$mode:$idx]}" != crash ]; then
			F_OUT=hang F_WHY=${line:-guest ${ENDED[$mode:$idx]}}
		else
			F_OUT=crash
			F_WHY=$(tr -d '\r' < "$log" | { grep -aE "$OOPS_RE" || true; } | sed -n 1p)
			F_WHY=${F_WHY:-guest died}
		fi
		F_WHY=$(sed -E 's/^\[ *[0-9.]+\] //' <<< "$F_WHY" | cut -c1-110)
		return
	fi
	line=$(bad_kernel_lines "$r/dmesg" 0 | sed -n 1p | cut -c1-110)
	if [ -n "$line" ]; then
		F_OUT=crash F_WHY="kernel: $line"
		return
	fi
	F_OUT=survive
	if [ "$(cat "$r/mount.rc" 2>/dev/null)" != 0 ]; then
		F_WHY="refused at mount: $(first_erofs_error "$r/dmesg")"
		return
	fi
	if [ "$(cat "$r/walk.rc" 2>/dev/null)" != 0 ] || ! grep -q '^summary ' "$r/walk"; then
		F_OUT=hang F_WHY="hostile-walk gave no summary (rc $(cat "$r/walk.rc" 2>/dev/null))"
		return
	fi
	cache=$(summary_field "$r/walk" cached_kb)
	grown=$(( ${cache#*->} - ${cache%->*} ))
	F_WHY="$(summary_field "$r/walk" errors) error(s)$(errno_counts "$r/walk"), $(summary_field "$r/walk" seconds) s, page cache +$((grown / 1024)) MiB"
	[ "$grown" -le "$FINDING_CACHE_KB" ] || F_OUT=flood
	[ "$(summary_field "$r/walk" other)" = 0 ] || F_WHY="$F_WHY, other errors: $(grep -m1 '^error .* other' "$r/walk" || true)"
	line=$(first_erofs_error "$r/dmesg")
	[ -z "$line" ] || F_WHY="$F_WHY; kernel: $line"
}

# the first error-level erofs message of a slot's dmesg FILE (else its
# first erofs message), shortened
first_erofs_error() {
	{ grep -aE '^<[0-3]>.*erofs' "$1" || grep -a 'erofs' "$1" || true; } | sed -n 1p > "$SCRATCH/first-erofs"
	kernel_text "$SCRATCH/first-erofs" | sed 's/^erofs: //' | cut -c1-120
}

evaluate_finding() { # MODE NAME
	local mode=$1 name=$2 expect r=$OUT/$1/slots/$2 log series
	kernel_series "${T_KVER[$mode]}" series
	expect=${FEXPECT[$name:$series]}
	finding_outcome "$mode" "$name"
	log=$r/dmesg
	[ -d "$r" ] || log=$OUT/$mode/${ENDLOG[$mode:${INDEX[$name]}]:-}
	if [ "${T_MODE[$mode]}" = ours ]; then
		if [ "$F_OUT" != survive ]; then
			report_fail "$mode/$name" "our module: $F_OUT: $F_WHY" "$log"
		elif [ -f "$r/version" ] && [ "$(cat "$r/version")" != "$(our_version_of "$mode")" ]; then
			report_fail "$mode/$name" "mounted by module '$(cat "$r/version")', not $(our_version_of "$mode")" "$log"
		elif [ -f "$r/walk" ] && [ "$(summary_field "$r/walk" other)" != 0 ]; then
			report_fail "$mode/$name" "errors other than EUCLEAN/EOPNOTSUPP/EIO: $F_WHY" "$r/walk"
		else
			report_pass "$mode/$name" "$F_WHY"
		fi
		return
	fi
	if [[ ,$expect, == *,$F_OUT,* ]]; then
		report_pass "$mode/$name" "stock ${T_KVER[$mode]}: $F_OUT as fuzz-findings.list says: $F_WHY"
	elif [ "$F_OUT" = survive ]; then
		report_fail "$mode/$name" "STOCK ${T_KVER[$mode]} NO LONGER SHOWS THE ${expect^^} ($F_WHY): fixed upstream? then make its column of fuzz-findings.list say survive and update README's robustness table" "$log"
	else
		report_fail "$mode/$name" "expected $expect from stock ${T_KVER[$mode]}, got $F_OUT: $F_WHY" "$log"
	fi
}
