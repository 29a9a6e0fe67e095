# Helpers for the fsck-*.sh tests (sourced, not a test itself).
# The automake harness exports top_srcdir and top_builddir.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
FSCK=${FSCK:-$top_builddir/fsck/fsck.erofs}
OUR_MKFS=${OUR_MKFS:-$top_builddir/mkfs/mkfs.erofs}
MANIFEST=${MANIFEST:-$top_builddir/tools/erofs-manifest}
DEB_MKFS=${DEB_MKFS:-/usr/bin/mkfs.erofs}
[ -x "$DEB_MKFS" ] || DEB_MKFS=

test_name=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/erofs-forge-$test_name.XXXXXX")
failures=0
passes=0
on_exit() {
	local rc=$?
	if [ "$rc" -eq 0 ] && [ "$failures" -eq 0 ]; then
		rm -rf "$WORK"
	else
		echo "$test_name: scratch files kept in $WORK" >&2
	fi
}
trap on_exit EXIT

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
finish() {
	echo "$test_name: $passes passed, $failures failed"
	[ "$failures" -eq 0 ] || exit 1
	exit 0
}
skip() { echo "$test_name: $*; skipped"; exit 77; }

[ -x "$FSCK" ] || { echo "$test_name: $FSCK not built" >&2; exit 99; }

# ---- little-endian field access on the image in $IMG ----

rd() { # OFFSET WIDTH -> unsigned decimal
	od -An -v -t "u$2" -j "$1" -N "$2" "$IMG" | tr -d ' \n'
}

wr() { # OFFSET WIDTH VALUE
	local off=$1 w=$2 v=$3 s="" i
	for ((i = 0; i < w; i++)); do
		s+=$(printf '\\x%02x' $(((v >> (8 * i)) & 255)))
	done
	printf "$s" | dd of="$IMG" bs=1 seek="$off" conv=notrunc status=none
}

wrs() { # OFFSET STRING
	printf '%s' "$2" | dd of="$IMG" bs=1 seek="$1" conv=notrunc status=none
}

# superblock fields (offsets from the superblock start at 1024)
sb_blksz() { echo $((1 << $(rd 1036 1))); }
sb_root() { rd 1038 2; }
sb_meta() { echo $(($(rd 1064 4) * $(sb_blksz))); }
sb_nocsum() { wr 1032 4 $(($(rd 1032 4) & ~1)); }	# drop COMPAT_SB_CHKSUM

ino_off() { echo $(($(sb_meta) + $1 * 32)); }

# directory data: prints "OFFSET MAXSIZE" of block IDX of directory NID
dir_block() {
	local io fmt ver layout isize icount xs size raw bs nblocks
	io=$(ino_off "$1"); bs=$(sb_blksz)
	fmt=$(rd "$io" 2); ver=$((fmt & 1)); layout=$(((fmt >> 1) & 7))
	isize=$((ver ? 64 : 32)); icount=$(rd $((io + 2)) 2)
	xs=$((icount ? 12 + 4 * (icount - 1) : 0))
	if [ "$ver" -eq 1 ]; then size=$(rd $((io + 8)) 8); else size=$(rd $((io + 8)) 4); fi
	raw=$(rd $((io + 16)) 4)
	nblocks=$(((size + bs - 1) / bs))
	local max=$((size - $2 * bs)); [ "$max" -gt "$bs" ] && max=$bs
	if [ "$layout" -eq 2 ] && [ "$2" -eq $((nblocks - 1)) ]; then
		echo "$((io + isize + xs)) $max"
	else
		echo "$((raw * bs + $2 * bs)) $max"
	fi
}

# find_dirent DIRNID NAME: prints "DIRENT_OFFSET NAME_OFFSET NAMELEN"
find_dirent() {
	local nid=$1 want=$2 b=0 io size bs nblocks
	io=$(ino_off "$nid"); bs=$(sb_blksz)
	if [ $(($(rd "$io" 2) & 1)) -eq 1 ]; then size=$(rd $((io + 8)) 8); else size=$(rd $((io + 8)) 4); fi
	nblocks=$(((size + bs - 1) / bs))
	for ((b = 0; b < nblocks; b++)); do
		local blk max n0 n j
		read -r blk max < <(dir_block "$nid" "$b")
		n0=$(rd $((blk + 8)) 2); n=$((n0 / 12))
		for ((j = 0; j < n; j++)); do
			local no end name
			no=$(rd $((blk + j * 12 + 8)) 2)
			if [ $((j + 1)) -lt "$n" ]; then
				end=$(rd $((blk + (j + 1) * 12 + 8)) 2)
			else
				end=$max
			fi
			name=$(dd if="$IMG" bs=1 skip=$((blk + no)) count=$((end - no)) status=none | tr -d '\0')
			if [ "$name" = "$want" ]; then
				echo "$((blk + j * 12)) $((blk + no)) ${#name}"
				return 0
			fi
		done
	done
	return 1
}

# nid_of DIRNID NAME
nid_of() {
	local de
	de=$(find_dirent "$1" "$2") || return 1
	rd "${de%% *}" 8
}

# nid_path /a/b/c: nid of a path from the root
nid_path() {
	local nid comp
	nid=$(sb_root)
	IFS=/ read -ra parts <<<"${1#/}"
	for comp in "${parts[@]}"; do
		[ -n "$comp" ] || continue
		nid=$(nid_of "$nid" "$comp") || return 1
	done
	echo "$nid"
}

# ---- trees ----

# compare_trees LABEL A B: manifests equal (falls back to diff -r + listings)
compare_trees() {
	local label=$1 a=$2 b=$3
	if [ -x "$MANIFEST" ]; then
		"$MANIFEST" "$a" >"$WORK/$label.a.mf" && "$MANIFEST" "$b" >"$WORK/$label.b.mf" &&
			diff -u "$WORK/$label.a.mf" "$WORK/$label.b.mf" >"$WORK/$label.diff"
	else
		local d
		for d in a b; do
			local t=$a
			[ "$d" = b ] && t=$b
			(cd "$t" && find . -printf '%p %M %U %G %s %T@ %l\n' | sort &&
				find . -type f -exec md5sum {} + | sort -k2 &&
				getfattr -R -d -m - -h . 2>/dev/null) >"$WORK/$label.$d.mf"
		done
		diff -u "$WORK/$label.a.mf" "$WORK/$label.b.mf" >"$WORK/$label.diff"
	fi
	if [ $? -eq 0 ]; then
		pass "$label: trees match"
	else
		fail "$label: trees differ (see $WORK/$label.diff)"
		head -20 "$WORK/$label.diff" >&2
	fi
}

fsck_and_extract() { # STATS_RE LABEL IMAGE SRC: check (-p must show STATS_RE), extraction matches SRC
	local re=$1 label=$2 img=$3 src=$4 out=$WORK/$2.out
	if "$FSCK" -p "$img" >"$WORK/$label.fsck.log" 2>&1 &&
	   grep -qE "$re" "$WORK/$label.fsck.log"; then
		pass "$label: fsck finds no errors ($(grep -E "$re" "$WORK/$label.fsck.log" | sed 's/^ *//'))"
	else
		fail "$label: fsck: $(head -3 "$WORK/$label.fsck.log")"
	fi
	rm -rf "$out"
	if "$FSCK" --extract="$out" "$img" >"$WORK/$label.x.log" 2>&1; then
		compare_trees "$label" "$src" "$out"
	else
		fail "$label: extraction: $(head -3 "$WORK/$label.x.log")"
	fi
	rm -rf "$out"
}

# ---- random damage sweeps: fsck must never crash or hang ----
sweep_start() { # SEED: counters reset, valgrind found (VG)
	VG=
	command -v valgrind >/dev/null && VG="valgrind -q --error-exitcode=99"
	RANDOM=$1
	crashes=0 hangs=0 clean=0 bad=0 vgerrs=0
}

sweep_check() { # I VG_EVERY X_EVERY TIMEOUT: fsck the damaged $IMG and count how it ended
	local i=$1 rc
	if [ $((i % $2)) -eq 0 ] && [ -n "$VG" ]; then
		$VG "$FSCK" --extract="$WORK/sweep-x" --overwrite "$IMG" >/dev/null 2>&1
		rc=$?
		[ "$rc" -eq 99 ] && { vgerrs=$((vgerrs + 1)); cp "$IMG" "$WORK/vg-$i.img"; }
		rm -rf "$WORK/sweep-x"
		return
	fi
	if [ $((i % $3)) -eq 0 ]; then
		timeout "$4" "$FSCK" --extract="$WORK/sweep-x" --overwrite "$IMG" >/dev/null 2>&1
		rc=$?
		rm -rf "$WORK/sweep-x"
	else
		timeout "$4" "$FSCK" "$IMG" >/dev/null 2>&1
		rc=$?
	fi
	case $rc in
	0) clean=$((clean + 1)) ;;
	1) bad=$((bad + 1)) ;;
	124) hangs=$((hangs + 1)); cp "$IMG" "$WORK/hang-$i.img" ;;
	*) crashes=$((crashes + 1)); cp "$IMG" "$WORK/crash-$i.img" ;;
	esac
}

damage_image() { # I SIZE BS: random byte flips (and, every 17th, a truncation) of $IMG
	local i=$1 size=$2 bs=$3 n k off
	[ $((i % 3)) -eq 0 ] || sb_nocsum
	n=$((1 + RANDOM % 6))
	for ((k = 0; k < n; k++)); do
		if [ $((RANDOM % 4)) -eq 0 ]; then
			off=$(((RANDOM * 32768 + RANDOM) % size))
		else
			off=$((1024 + (RANDOM * 32768 + RANDOM) % (2 * bs)))
			[ "$off" -lt "$size" ] || off=$((off % size))
		fi
		wr "$off" 1 $((RANDOM % 256))
	done
	[ $((i % 17)) -eq 0 ] && truncate -s $(((RANDOM * 32768 + RANDOM) % size)) "$IMG"
	return 0
}

sweep_verdict() {
	if [ "$crashes" -eq 0 ] && [ "$hangs" -eq 0 ] && [ "$vgerrs" -eq 0 ]; then
		pass "random damage: $bad rejected, $clean clean, no crash, hang or memory error"
	else
		fail "random damage: $crashes crashes, $hangs hangs, $vgerrs valgrind errors (images kept in $WORK)"
	fi
}

mkfs_or_fail() { # LABEL IMAGE SRC OPTIONS...: our mkfs.erofs --quiet, a failure reported
	local label=$1 img=$2 src=$3
	shift 3
	"$OUR_MKFS" --quiet "$@" "$img" "$src" >"$WORK/$label.mkfs.log" 2>&1 && return 0
	fail "$label: mkfs: $(tail -1 "$WORK/$label.mkfs.log")"
	return 1
}

refused_by_name() { # WORD MKFS-ARGS...: our mkfs.erofs exits 1 naming WORD, no image left
	local word=$1 rc shown
	shift
	shown="$*"
	rm -f "$WORK/refused.img"
	"$OUR_MKFS" --quiet "$@" "$WORK/refused.img" "$SRC" >"$WORK/refused.log" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q -- "$word" "$WORK/refused.log" && [ ! -e "$WORK/refused.img" ]; then
		pass "refused: ${shown:0:70} (exit 1, named, no image)"
	else
		fail "${shown:0:70}: rc $rc, image $([ -e "$WORK/refused.img" ] && echo left): $(head -1 "$WORK/refused.log")"
	fi
}

fsck_failed_as() { # LABEL PASS_MSG RC LOG WORDS...: fsck must have exited 1, printing every word
	local label=$1 msg=$2 rc=$3 log=$4 w ok=1
	shift 4
	[ "$rc" -eq 1 ] || ok=0
	for w in "$@"; do
		grep -qF -- "$w" "$log" || ok=0
	done
	if [ "$ok" -eq 1 ]; then
		pass "$msg"
	else
		fail "$label: rc $rc, wanted 1 and '$*': $(head -3 "$log")"
	fi
}

# the second, independent reader (reader2_*)
. "$top_srcdir/tests/second-reader.sh"
