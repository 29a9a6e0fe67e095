#!/bin/bash
# dump.erofs on damaged images: each case edits one structure of a good
# image and expects exit status 1 with a message naming the problem (and
# the path or nid); then random byte flips and truncations under every
# option: never a crash or a hang, and under valgrind (when installed) no
# memory error.
. "$(dirname "$0")/fsck-common.sh"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
[ -x "$DUMP" ] || { echo "$test_name: $DUMP not built" >&2; exit 99; }
[ -x "$OUR_MKFS" ] || skip "no mkfs.erofs"

SRC=$WORK/src
mkdir -p "$SRC/b" "$SRC/d/e"
printf 'hello' >"$SRC/a.txt"
head -c 100000 < <(yes 'compressible text for dump.erofs') >"$SRC/text"
printf 'one' >"$SRC/d/f1"
ln -s a.txt "$SRC/lnk"
setfattr -n user.k -v val "$SRC/a.txt" 2>/dev/null || true

BASE=$WORK/base.img
"$OUR_MKFS" --quiet -T 1000 -U clear "$BASE" "$SRC" || { fail "mkfs"; finish; }
ZBASE=$WORK/zbase.img
"$OUR_MKFS" --quiet -T 1000 -U clear -z lz4hc -C 16384 "$ZBASE" "$SRC" || { fail "mkfs -z"; finish; }
"$DUMP" -S "$BASE" >/dev/null 2>&1 || { fail "dump.erofs -S on the base image"; finish; }

IMG=$BASE
N_B=$(nid_path /b)
N_D=$(nid_path /d)
N_A=$(nid_path /a.txt)
for v in N_B N_D N_A; do
	[ -n "${!v}" ] || { fail "cannot locate $v in the base image"; finish; }
done

case_no=0
# corrupt LABEL EDIT DUMP_ARGS WORDS...: fresh copy, edit, dump.erofs must
# exit 1 naming every word
corrupt() {
	local label=$1 edit=$2 args=$3 rc
	shift 3
	case_no=$((case_no + 1))
	IMG=$WORK/case$case_no.img
	cp "${CASE_BASE:-$BASE}" "$IMG"
	sb_nocsum	# the checksum covers the first block, inodes included
	$edit
	# shellcheck disable=SC2086
	timeout 20 "$DUMP" $args "$IMG" >"$WORK/case$case_no.log" 2>&1
	rc=$?
	fsck_failed_as "$label" "$label: $args" "$rc" "$WORK/case$case_no.log" "$@"
	IMG=$BASE
}

# ---- superblock ----
e_magic() { wr 1024 4 0x12345678; }
corrupt "sb: bad magic" e_magic -s "bad magic"
corrupt "sb: bad magic" e_magic -S "bad magic"
e_csum() { wr 1032 4 $(($(rd 1032 4) | 1)); wr $((1024 + 0x40)) 1 0x41; }
corrupt "sb: checksum mismatch" e_csum -s "checksum mismatch"
e_blkbits() { sb_nocsum; wr 1036 1 13; }
corrupt "sb: block size bits 13" e_blkbits -s "block size bits 13"
e_extslots() { sb_nocsum; wr $((1024 + 0x0D)) 1 200; }
corrupt "sb: sb_extslots" e_extslots -S "sb_extslots 200"
e_cfgs() { sb_nocsum; wr $((1024 + 0x50)) 4 $(($(rd $((1024 + 0x50)) 4) | 2)); wr $((1024 + 0x54)) 2 0x8001; wr 1152 2 0; }
corrupt "sb: compression configs past the end" e_cfgs -s "compression config of algorithm 0 (65536 bytes"
e_trunc() { truncate -s 4096 "$IMG"; }
corrupt "image truncated" e_trunc -S "truncated"
# unknown features: -s still shows them, the rest is refused
e_48bit() { sb_nocsum; wr $((1024 + 0x50)) 4 $(($(rd $((1024 + 0x50)) 4) | 0x80)); }
e_unknown() { sb_nocsum; wr $((1024 + 0x50)) 4 $(($(rd $((1024 + 0x50)) 4) | 0x200)); }
corrupt "sb: unknown feature refused" e_unknown -S "unknown bits 0x200"
IMG=$WORK/newer.img
cp "$BASE" "$IMG"
e_48bit
if "$DUMP" -s "$IMG" >"$WORK/newer.log" 2>&1 && grep -q '^Filesystem incompatible features: *48bit $' "$WORK/newer.log" &&
	grep -q '^Required upstream Linux kernel version: *6.15$' "$WORK/newer.log"; then
	pass "sb: -s shows 48bit and Linux 6.15"
else
	fail "sb: -s on a 48bit image: $(grep -E 'incompat|Required' "$WORK/newer.log")"
fi
IMG=$BASE

# ---- inodes and directories ----
e_root_mode() { wr $(($(ino_off "$(sb_root)") + 4)) 2 0; }
corrupt "root: mode 0" e_root_mode -S "nid $(sb_root)"
e_dirent_nameoff() {
	local de
	de=$(find_dirent "$(sb_root)" b)
	wr $((${de%% *} + 8)) 2 5
}
corrupt "/: bad nameoff" e_dirent_nameoff -S "/ (nid" "nameoff"
corrupt "/: bad nameoff" e_dirent_nameoff "--path=/d" "nameoff"
corrupt "/: bad nameoff" e_dirent_nameoff "--nid=$N_A" "nameoff"
# /b names /d's inode: /d is reached twice, which would walk it twice
e_twice() {
	local de
	de=$(find_dirent "$(sb_root)" b)
	wr "${de%% *}" 8 "$N_D"
}
corrupt "/b names /d" e_twice -S "directory named twice"
e_amode() { wr $(($(ino_off "$N_A") + 4)) 2 0; }
corrupt "/a.txt: mode 0" e_amode "--path=/a.txt" "/a.txt" "nid $N_A"
e_asize() { wr $(($(ino_off "$N_A") + 8)) 4 0x7fffffff; }
corrupt "/a.txt: size beyond the image" e_asize "--path=/a.txt -e" "/a.txt"
e_xattr() { wr $(($(ino_off "$N_A") + 2)) 2 200; }
corrupt "/a.txt: xattr count" e_xattr "--path=/a.txt -x" "/a.txt"

# ---- compressed index ----
CASE_BASE=$ZBASE
IMG=$ZBASE
N_T=$(nid_path /text)
# the lcluster index follows the 32-byte inode, its xattrs and the 8-byte
# map header; every byte of its first entries set to 0xff
e_zindex() {
	local io icount xs hdr k
	io=$(ino_off "$N_T"); icount=$(rd $((io + 2)) 2)
	xs=$((icount ? 12 + 4 * (icount - 1) : 0))
	hdr=$(((io + 32 + xs + 7) / 8 * 8))
	for ((k = 0; k < 32; k++)); do wr $((hdr + 8 + k)) 1 255; done
}
corrupt "/text: lcluster index" e_zindex "--path=/text -e" "/text (nid $N_T)"
unset CASE_BASE
IMG=$BASE

# ---- the sweep: random damage must never crash or hang ----
# dump_sweep I: every option on the damaged $IMG, counted as sweep_check does
dump_sweep() {
	local i=$1 rc args worst=0
	for args in "-s" "-S" "--path=/ --ls -e -x" "--path=/d/e --ls" "--path=/text -e -x" \
		"--path=/text --cat" "--nid=$N_A -e -x"; do
		if [ $((i % 40)) -eq 0 ] && [ -n "$VG" ]; then
			# shellcheck disable=SC2086
			$VG "$DUMP" $args "$IMG" >/dev/null 2>&1
		else
			# shellcheck disable=SC2086
			timeout 20 "$DUMP" $args "$IMG" >/dev/null 2>&1
		fi
		rc=$?
		case $rc in
		0|1) ;;
		99) vgerrs=$((vgerrs + 1)); cp "$IMG" "$WORK/vg-$i.img" ;;
		124) hangs=$((hangs + 1)); cp "$IMG" "$WORK/hang-$i.img" ;;
		*) crashes=$((crashes + 1)); cp "$IMG" "$WORK/crash-$i.img" ;;
		esac
		[ "$rc" -gt "$worst" ] && worst=$rc
	done
	if [ "$worst" -eq 0 ]; then clean=$((clean + 1)); else bad=$((bad + 1)); fi
}

for base in "$BASE" "$ZBASE"; do
	sweep_start 4343
	IMG=$base
	bs=$(sb_blksz)
	N_A=$(nid_path /a.txt)
	size=$(stat -c %s "$base")
	for i in $(seq 1 100); do
		IMG=$WORK/sweep.img
		cp "$base" "$IMG"
		damage_image "$i" "$size" "$bs"
		dump_sweep "$i"
	done
	sweep_verdict
done
IMG=$BASE
finish
