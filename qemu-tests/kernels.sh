# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with run.sh
# qemu-tests/kernels.sh: which kernels run.sh boots and which of them runs
# each matrix line (sourced by run.sh; bash): the kernel=MIN[-MAX] token of
# EXPECT, version comparisons without forks (the initramfs step asks them
# thousands of times), the codecs a packaged kernel lacks, and the boot
# targets (setup_targets).

# split_kernel_token NAME EXPECT: takes "kernel=MIN[-MAX]" (the oldest, and
# for refusals of a feature later kernels know, the newest, stock kernel the
# line runs on; default 6.1) out of EXPECT into KMIN[NAME] and KMAX[NAME];
# the rest of EXPECT (default "same") -> EXPECT_REST
split_kernel_token() {
	local name=$1 tok range=6.1 toks
	EXPECT_REST=
	IFS=, read -ra toks <<< "$2"
	for tok in "${toks[@]}"; do
		case $tok in
		kernel=*) range=${tok#kernel=} ;;
		*) EXPECT_REST+=${EXPECT_REST:+,}$tok ;;
		esac
	done
	[ -n "$EXPECT_REST" ] || EXPECT_REST=same
	[[ $range =~ ^[0-9]+\.[0-9]+(-[0-9]+\.[0-9]+)?$ ]] ||
		die "matrix: '$name': kernel=$range is not X.Y or X.Y-X.Y"
	KMIN[$name]=${range%-*}
	KMAX[$name]=
	[[ $range != *-* ]] || KMAX[$name]=${range#*-}
}

# version_ge A B: A >= B, comparing dotted numbers field by field (a missing
# field counts 0).  In bash alone: the initramfs step asks it thousands of
# times, and a fork costs milliseconds on some CI hosts.
version_ge() {
	local IFS=. a b i x y
	read -ra a <<< "$1"
	read -ra b <<< "$2"
	for ((i = 0; i < ${#a[@]} || i < ${#b[@]}; i++)); do
		x=${a[i]:-0} y=${b[i]:-0}
		[[ $x =~ ^[0-9]+$ && $y =~ ^[0-9]+$ ]] || die "version_ge: '$1' or '$2' is not a dotted version"
		((10#$x == 10#$y)) || return $((10#$x < 10#$y))
	done
	return 0
}
# kver_short KVER VAR: VAR = the series, 6.12.95+deb12-amd64 -> 6.12; set,
# not printed, as kernel_series: runs_on_kernel asks once per image and target
kver_short() {
	if [[ $1 =~ ^([0-9]+\.[0-9]+) ]]; then printf -v "$2" %s "${BASH_REMATCH[1]}"; else printf -v "$2" %s "$1"; fi
}

# runs_on_kernel KVER NAME: is image NAME given to kernel KVER?  Its
# version must lie within the line's kernel= range; the hostile cases
# (regressions of kmod/'s 6.1 patches) run on the 6.1 kernel only, and
# ours61 lines (codecs our 6.1 module adds) run there whatever their range.
runs_on_kernel() {
	local v
	# ours61 lines: our 6.1 module reads them, Debian's must refuse them
	[ -z "${OURS61[$2]:-}" ] || [ "$1" != "$HOST_KVER" ] || return 0
	# the newer kernels' findings: where fuzz-findings.list has a column
	[ "${KIND[$2]}" != finding ] || finding_runs_on "$1" "$2" || return 1
	kver_short "$1" v
	version_ge "$v" "${KMIN[$2]}" || return 1
	[ -z "${KMAX[$2]}" ] || version_ge "${KMAX[$2]}" "$v" || return 1
	[ "${KIND[$2]}" != hostile ] || [ "$1" = "$HOST_KVER" ]
}

# check_line_kernel NAME MKFS-LOG: our mkfs's summary names the oldest Linux
# that mounts the image ("needs Linux 6.4 (...; 6.1.113 and later 6.1 too)"):
# the line's kernel= must not be older (an LTS series that backported the
# feature counts).  erofs-utils' mkfs prints no such line: nothing to check.
check_line_kernel() {
	local name=$1 log=$2 needs lts
	needs=$(sed -n 's/.*: needs Linux \([0-9]*\.[0-9]*\) .*/\1/p' "$log" | tail -n 1)
	[ -n "$needs" ] || return 0
	if [ "${REFUSE[$name]:-}" = unread ]; then
		# the line's kernels must all be older than the one mkfs names
		[ -n "${KMAX[$name]}" ] && ! version_ge "${KMAX[$name]}" "$needs" && return 0
		report_fail "matrix/$name" "refuse=unread on kernel=${KMIN[$name]}-${KMAX[$name]}, but mkfs: $(grep -m1 'needs Linux' "$log" | sed 's/^[^:]*: //')" "$MATRIX"
		return
	fi
	lts=$(sed -n 's/.*; \([0-9]*\.[0-9]*\)\.[0-9]* and later .*/\1/p' "$log" | tail -n 1)
	version_ge "${KMIN[$name]}" "$needs" && return 0
	[ "${KMIN[$name]}" = "$lts" ] && return 0
	report_fail "matrix/$name" "the line says kernel=${KMIN[$name]}, mkfs: $(grep -m1 'needs Linux' "$log" | sed 's/^[^:]*: //')" "$MATRIX"
}

# image_algs IMG: the superblock's compression algorithm bitmap (bit 1 LZMA,
# 2 DEFLATE, 3 ZSTD), 0 without COMPR_CFGS (LZ4 or nothing)
image_algs() {
	local incompat
	incompat=$(od -An -tu4 -j $((1024 + 80)) -N 4 "$1" | tr -d ' ')
	if (( ${incompat:-0} & 2 )); then
		od -An -tu2 -j $((1024 + 84)) -N 2 "$1" | tr -d ' '
	else
		echo 0
	fi
}

# kernel_lacks_codec KVER NAME: prints the CONFIG_EROFS_FS_ZIP_* option that
# image NAME needs and kernel KVER was built without (Debian's 6.1 has no
# LZMA, for one); false when it lacks none
kernel_lacks_codec() {
	local algs=${ALGS[$2]:-0} config=${KROOT_OF[$1]:-}/boot/config-$1 bit codec
	[ "$algs" -gt 1 ] && [ -f "$config" ] || return 1
	# on 6.1 our module has every codec, and Debian's must refuse (evaluate)
	[ -z "${OURS61[$2]:-}" ] || [ "$1" != "$HOST_KVER" ] || return 1
	for bit in 1:LZMA 2:DEFLATE 3:ZSTD; do
		codec=${bit#*:}
		(( algs >> ${bit%%:*} & 1 )) || continue
		grep -q "^CONFIG_EROFS_FS_ZIP_$codec=y" "$config" ||
			{ echo "CONFIG_EROFS_FS_ZIP_$codec"; return 0; }
	done
	return 1
}

# The boot targets: "ours" and "stock" of MODES on KVER, and "X.Y/stock"
# for each kernel of KERNELS that fetch-kernel.sh delivers (a SKIP verdict
# naming the reason for one it cannot), and "X.Y/ours" for those of
# OURS_KERNELS (findings.sh).  Fills TARGETS[], T_KVER[], T_KROOT[], T_MODE[].
setup_targets() {
	local mode series line kver kroot target
	TARGETS=()
	for mode in $MODES; do
		case $mode in ours|stock) ;; *) die "MODES: unknown mode '$mode'" ;; esac
		TARGETS+=("$mode")
		T_KVER[$mode]=$KVER T_KROOT[$mode]= T_MODE[$mode]=$mode
	done
	KROOT_OF[$KVER]= LIMIT_OF[$KVER]=$IMAGE_LIMIT
	# the newer kernels run Debian's own module (stock), and ours (built
	# by kmod/build-612.sh or build-7x.sh) for the series of OURS_KERNELS
	for series in $KERNELS; do
		[[ " $MODES " == *" stock "* ]] || { [[ " $MODES " == *" ours "* ]] &&
			[[ " $OURS_KERNELS " == *" $series "* ]]; } || continue
		if ! line=$(top_builddir=$top_builddir bash "$here/fetch-kernel.sh" "$series" "$KERNEL_DIR" \
			2> "$OUT/fetch-$series.log"); then
			report_skip "$series" "no kernel: $(tail -n 1 "$OUT/fetch-$series.log" | sed 's/^fetch-kernel.sh: //')"
			continue
		fi
		read -r kver kroot <<< "$line"
		KROOT_OF[$kver]=$kroot LIMIT_OF[$kver]=$KERNEL_IMAGE_LIMIT
		if [[ " $MODES " == *" stock "* ]]; then
			kver_short "$kver" target
			target=$target/stock
			TARGETS+=("$target")
			T_KVER[$target]=$kver T_KROOT[$target]=$kroot T_MODE[$target]=stock
			msg "kernel $kver for $target: $kroot"
		fi
		if [[ " $MODES " == *" ours "* && " $OURS_KERNELS " == *" $series "* ]]; then
			ours_target "$series" "$kver" "$kroot"
		fi
	done
}
