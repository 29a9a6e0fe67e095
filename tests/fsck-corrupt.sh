#!/bin/bash
# fsck.erofs on damaged images: each case edits one structure of a good image
# (located by parsing the image here, not by fixed offsets) and expects exit
# status 1 with a message naming the path and the problem.  Then a sweep of
# random byte flips and truncations: never a crash or a hang, and under
# valgrind (when installed) no memory error.
. "$(dirname "$0")/fsck-common.sh"

SRC=$WORK/src
mkdir -p "$SRC/d/e"
printf 'hello' >"$SRC/a.txt"
head -c 8192 /dev/urandom >"$SRC/big"
printf 'one' >"$SRC/d/f1"
printf 'linked' >"$SRC/hl1"
ln "$SRC/hl1" "$SRC/d/hl2"
ln -s a.txt "$SRC/lnk"
printf 'z' >"$SRC/zz"
if setfattr -n user.k -v val "$SRC/a.txt" 2>/dev/null; then
	for f in a.txt d/f1 zz; do setfattr -n user.s -v 1 "$SRC/$f"; done
	have_xattrs=1
else
	have_xattrs=0
fi

BASE=$WORK/base.img
if [ -x "$OUR_MKFS" ]; then
	"$OUR_MKFS" --quiet -T 1000 -U clear "$BASE" "$SRC" || { fail "mkfs"; finish; }
elif [ -n "$DEB_MKFS" ]; then
	"$DEB_MKFS" --quiet -T 1000 "$BASE" "$SRC" >/dev/null || { fail "mkfs"; finish; }
else
	skip "no mkfs.erofs"
fi
"$FSCK" "$BASE" >/dev/null 2>&1 || { fail "the base image is not clean"; finish; }

IMG=$BASE
ROOT=$(sb_root)
BS=$(sb_blksz)
N_A=$(nid_path /a.txt)
N_BIG=$(nid_path /big)
N_D=$(nid_path /d)
N_HL=$(nid_path /hl1)
N_LNK=$(nid_path /lnk)
for v in ROOT BS N_A N_BIG N_D N_HL N_LNK; do
	[ -n "${!v}" ] || { fail "cannot locate $v in the base image"; finish; }
done

case_no=0
# corrupt LABEL EDIT_FUNCTION WORDS...: fresh copy, edit, expect rc 1 + words
corrupt() {
	local label=$1 edit=$2 rc
	shift 2
	case_no=$((case_no + 1))
	IMG=$WORK/case$case_no.img
	cp "$BASE" "$IMG"
	$edit
	timeout 20 "$FSCK" "$IMG" >"$WORK/case$case_no.log" 2>&1
	rc=$?
	fsck_failed_as "$label" "$label" "$rc" "$WORK/case$case_no.log" "$@"
	IMG=$BASE
}

# ---- superblock ----
e_magic() { wr 1024 4 0x12345678; }
corrupt "sb: bad magic" e_magic "bad magic"
e_csum() { wr 1032 4 $(($(rd 1032 4) | 1)); wr $((1024 + 0x40)) 1 0x41; }
corrupt "sb: checksum mismatch" e_csum "checksum mismatch"
e_blkbits() { sb_nocsum; wr 1036 1 13; }
corrupt "sb: block size bits 13" e_blkbits "unsupported block size bits 13"
e_blkbits8() { sb_nocsum; wr 1036 1 8; }
corrupt "sb: block size bits 8" e_blkbits8 "unsupported block size bits 8"
e_incompat() { sb_nocsum; wr $((1024 + 0x50)) 4 0x580; }
corrupt "sb: newer and unknown incompat features" e_incompat \
	"unsupported incompatible features: unknown bits 0x400"
e_dirblk() { sb_nocsum; wr $((1024 + 0x5A)) 1 2; }
corrupt "sb: dirblkbits" e_dirblk "dirblkbits 2"
e_extslots() { sb_nocsum; wr $((1024 + 0x0D)) 1 200; }
corrupt "sb: sb_extslots" e_extslots "sb_extslots 200"
e_label() { sb_nocsum; wrs $((1024 + 0x40)) "ABCDEFGHIJKLMNOP"; }
corrupt "sb: label without NUL" e_label "volume name is not NUL-terminated"
e_trunc() { truncate -s $((2 * BS)) "$IMG"; }
corrupt "truncated image" e_trunc "image is truncated"
e_trunc_small() { truncate -s 1100 "$IMG"; }
corrupt "image shorter than a superblock" e_trunc_small "too small"
e_rootnid() { sb_nocsum; wr 1038 2 65000; }
corrupt "sb: root nid out of range" e_rootnid "root nid 65000"
e_meta() { sb_nocsum; wr $((1024 + 0x28)) 4 4000000000; }
corrupt "sb: meta_blkaddr out of range" e_meta "meta_blkaddr 4000000000"
e_xattrblk() { sb_nocsum; wr $((1024 + 0x2C)) 4 99999; }
corrupt "sb: xattr_blkaddr out of range" e_xattrblk "xattr_blkaddr 99999"
e_blocks() { sb_nocsum; wr $((1024 + 0x24)) 4 99999; }
corrupt "sb: more blocks than the image" e_blocks "image is truncated"
e_devs() { sb_nocsum; wr $((1024 + 0x50)) 4 8; wr $((1024 + 0x56)) 2 1; }
corrupt "sb: extra devices" e_devs "device table (1 slots at slot offset 0) overlaps the superblock"

# ---- inodes ----
e_ifmt() { sb_nocsum; wr "$(ino_off "$N_A")" 2 0x10; }
corrupt "inode: unknown i_format bits" e_ifmt "/a.txt (nid $N_A): unsupported i_format 0x0010"
e_layout() { sb_nocsum; wr "$(ino_off "$N_A")" 2 $((6 << 1)); }
corrupt "inode: unknown layout" e_layout "/a.txt (nid $N_A): unknown data layout 6"
e_mode() { sb_nocsum; wr $(($(ino_off "$N_A") + 4)) 2 0x1a4; }
corrupt "inode: mode without a type" e_mode "/a.txt (nid $N_A): bogus file type in mode 0644"
e_nlink0() { sb_nocsum; wr $(($(ino_off "$N_A") + 6)) 2 0; }
corrupt "inode: nlink 0" e_nlink0 "/a.txt (nid $N_A): link count is 0"
e_blkaddr() { sb_nocsum; wr $(($(ino_off "$N_BIG") + 16)) 4 100000; }
corrupt "inode: data block beyond the image" e_blkaddr "/big (nid $N_BIG): data blocks 100000" "beyond the end of the image"
e_blkaddr_wrap() { sb_nocsum; wr $(($(ino_off "$N_BIG") + 16)) 4 0xFFFFFFFF; }
corrupt "inode: data block 0xFFFFFFFF" e_blkaddr_wrap "/big (nid $N_BIG): data blocks 4294967295"
e_blk0() { sb_nocsum; wr $(($(ino_off "$N_BIG") + 16)) 4 0; }
corrupt "inode: data on the superblock" e_blk0 "/big (nid $N_BIG): data at block 0 overlaps the superblock"
e_size() { sb_nocsum; wr $(($(ino_off "$N_BIG") + 8)) 4 0x7FFFFFFF; }
corrupt "inode: i_size past the image" e_size "/big (nid $N_BIG)" "beyond the end of the image"
e_inline() { sb_nocsum; wr $(($(ino_off "$N_A") + 8)) 4 $((BS - 1)); }
corrupt "inode: inline tail crossing a block" e_inline "/a.txt (nid $N_A): inline data" "crosses a block boundary"
e_lnk0() { sb_nocsum; wr $(($(ino_off "$N_LNK") + 8)) 4 0; }
corrupt "symlink: empty target" e_lnk0 "/lnk (nid $N_LNK): symlink target length 0"
e_lnknul() { # the target is inline, right after the inode and its xattrs
	local io xs
	sb_nocsum
	io=$(ino_off "$N_LNK"); xs=$(rd $((io + 2)) 2)
	[ "$xs" -gt 0 ] && xs=$((12 + 4 * (xs - 1)))
	wr $((io + 32 + xs + 1)) 1 0
}
corrupt "symlink: NUL in the target" e_lnknul "/lnk (nid $N_LNK): symlink target contains a NUL byte"
e_hlnlink() { sb_nocsum; wr $(($(ino_off "$N_HL") + 6)) 2 1; }
corrupt "hard link: nlink lower than the links" e_hlnlink "(nid $N_HL): link count 1, but 2 directory entries refer to it"
e_hlnlink5() { sb_nocsum; wr $(($(ino_off "$N_HL") + 6)) 2 5; }
corrupt "hard link: nlink higher than the links" e_hlnlink5 "(nid $N_HL): link count 5, but 2"
e_dirnlink() { sb_nocsum; wr $(($(ino_off "$N_D") + 6)) 2 7; }
corrupt "directory: wrong nlink" e_dirnlink "/d (nid $N_D): directory link count 7, expected 3"

# ---- directory entries ----
de_field() { # DIRNID NAME -> sets DE NO NL
	read -r DE NO NL < <(find_dirent "$1" "$2")
}
e_nameoff() { sb_nocsum; local blk; read -r blk _ < <(dir_block "$ROOT" 0); wr $((blk + 8)) 2 13; }
corrupt "dirent: first nameoff not a multiple of 12" e_nameoff "/ (nid $ROOT): directory block 0: invalid first nameoff 13"
e_nameoff0() { sb_nocsum; local blk; read -r blk _ < <(dir_block "$ROOT" 0); wr $((blk + 8)) 2 0; }
corrupt "dirent: first nameoff 0" e_nameoff0 "invalid first nameoff 0"
e_sort() { sb_nocsum; de_field "$ROOT" big; wrs "$NO" "zzz"; }
corrupt "dirent: names out of order" e_sort "/ (nid $ROOT): directory entries not sorted: 'd' after 'zzz'"
e_dup2() { sb_nocsum; de_field "$ROOT" lnk; wrs "$NO" "hl1"; }
corrupt "dirent: duplicate name" e_dup2 "duplicate directory entry 'hl1'"
e_slash() { sb_nocsum; de_field "$ROOT" big; wrs "$NO" "b/g"; }
corrupt "dirent: '/' in a name" e_slash "name 'b/g' contains '/'"
e_nul() { sb_nocsum; de_field "$ROOT" big; wr $((NO + 1)) 1 0; }
corrupt "dirent: NUL inside a name" e_nul "contains a NUL byte"
e_dotdot() { sb_nocsum; de_field "$ROOT" zz; wrs "$NO" ".."; }
corrupt "dirent: a second '..'" e_dotdot "/ (nid $ROOT)" "directory entries not sorted: '..' after"
e_dotnid() { sb_nocsum; de_field "$N_D" .; wr "$DE" 8 "$ROOT"; }
corrupt "dirent: '.' pointing elsewhere" e_dotnid "/d (nid $N_D): '.' points to nid $ROOT, expected $N_D"
e_dotdotnid() { sb_nocsum; de_field "$N_D" ..; wr "$DE" 8 "$N_A"; }
corrupt "dirent: '..' not the parent" e_dotdotnid "/d (nid $N_D): '..' points to nid $N_A, expected $ROOT"
e_loop() { sb_nocsum; de_field "$N_D" e; wr "$DE" 8 "$ROOT"; }
corrupt "dirent: directory loop to the root" e_loop "/d/e (nid $ROOT): directory already reached as / (directory hard link or loop)"
e_loop2() { sb_nocsum; de_field "$N_D" e; wr "$DE" 8 "$N_D"; }
corrupt "dirent: directory containing itself" e_loop2 "/d/e (nid $N_D): directory already reached as /d"
e_nidrange() { sb_nocsum; de_field "$ROOT" a.txt; wr "$DE" 8 $((1 << 40)); }
corrupt "dirent: nid out of range" e_nidrange "/a.txt (nid 1099511627776): nid 1099511627776 out of range"
e_ftype() { sb_nocsum; de_field "$ROOT" a.txt; wr $((DE + 10)) 1 7; }
corrupt "dirent: file type mismatch" e_ftype "/a.txt (nid $N_A): file type 7 in the directory entry does not match the inode (mode 0100644)"
e_ftype9() { sb_nocsum; de_field "$ROOT" a.txt; wr $((DE + 10)) 1 9; }
corrupt "dirent: invalid file type" e_ftype9 "invalid file type 9"
e_dirsize() { sb_nocsum; wr $(($(ino_off "$N_D") + 8)) 4 12; }
corrupt "directory: size too small" e_dirsize "/d (nid $N_D): directory size 12 too small"

# ---- xattrs ----
if [ "$have_xattrs" -eq 1 ]; then
	XB=$(($(ino_off "$N_A") + 32))	# a.txt's xattr ibody (compact inode)
	[ $(($(rd "$(ino_off "$N_A")" 2) & 1)) -eq 1 ] && XB=$((XB + 32))
	SHARED=$(rd $((XB + 4)) 1)
	XE=$((XB + 12 + 4 * SHARED))	# first inline entry
	e_xshared() { sb_nocsum; wr $((XB + 4)) 1 255; }
	corrupt "xattr: shared count beyond the ibody" e_xshared "/a.txt (nid $N_A): 255 shared xattrs do not fit"
	e_xvalue() { sb_nocsum; wr $((XE + 2)) 2 60000; }
	corrupt "xattr: entry overrunning the ibody" e_xvalue "/a.txt (nid $N_A): inline xattr entry at offset" "overruns"
	e_xindex() { sb_nocsum; wr $((XE + 1)) 1 9; }
	corrupt "xattr: unknown name index" e_xindex "/a.txt (nid $N_A): inline xattr with unknown name index 9"
	e_xnul() { sb_nocsum; wr $((XE + 4)) 1 0; }
	corrupt "xattr: NUL in a name" e_xnul "xattr name" "contains a NUL byte"
	if [ "$SHARED" -gt 0 ]; then
		e_xid() { sb_nocsum; wr $((XB + 12)) 4 0x7FFFFFFF; }
		corrupt "xattr: shared id beyond the image" e_xid "/a.txt (nid $N_A): shared xattr id 2147483647 beyond the end of the image"
		# a shared id naming the inline entry of an inode: metadata read twice
		e_xidino() { sb_nocsum; wr $((XB + 12)) 4 $(((XE - $(rd $((1024 + 0x2C)) 4) * BS) / 4)); }
		corrupt "xattr: shared id inside an inode" e_xidino "/a.txt (nid $N_A): shared xattr at byte $XE overlaps the inode of /a.txt"
	fi
	e_xdup() { sb_nocsum; wr $((XE + 4)) 1 $(printf '%d' "'s"); }
	if [ "$SHARED" -gt 0 ]; then
		corrupt "xattr: duplicate name" e_xdup "/a.txt (nid $N_A): duplicate xattr user.s"
	fi
fi

# ---- data blocks over inodes (512-byte blocks put inodes past block 2) ----
# /big's 16 blocks are moved so that their last one is the block holding
# /lnk's inode (the metadata comes after the data, at the image's end)
if [ -x "$OUR_MKFS" ] && "$OUR_MKFS" --quiet -T 1000 -b 512 "$WORK/b512.img" "$SRC"; then
	IMG=$WORK/b512.img
	N_BIG5=$(nid_path /big)
	N_LNK5=$(nid_path /lnk)
	IO5=$(ino_off "$N_LNK5")
	IMG=$BASE
	BLK5=$((IO5 / 512 - 15))
	e_blkino() { sb_nocsum; wr $(($(ino_off "$N_BIG5") + 16)) 4 "$BLK5"; }
	BASE_SAVED=$BASE
	BASE=$WORK/b512.img
	if [ "$BLK5" -ge 3 ]; then
		corrupt "inode: data on another inode" e_blkino "/big (nid $N_BIG5): data at block $BLK5 overlaps the inode of"
	else
		echo "note: 512-byte image keeps its inodes in the first blocks; case skipped"
	fi
	BASE=$BASE_SAVED
fi

# ---- hostile sharing: 300000 chunk entries naming the same 512 KiB chunk ----
# (a valid image: 157 GB of file data in 2 MiB; the check must read the
# chunk once and finish in seconds, not read 157 GB)
IMG=$WORK/share.img
truncate -s 2M "$IMG"
wr 1024 4 0xE0F5E1E2; wr 1032 4 2; wr 1036 1 12; wr 1038 2 36	# magic, MTIME, 4 KiB, root
wr $((1024 + 0x24)) 4 512; wr $((1024 + 0x50)) 4 4		# blocks, CHUNKED_FILE
wr 1152 2 4; wr 1156 2 0x41ed; wr 1158 2 2; wr 1160 4 40		# root: inline dir, 40 bytes
wr 1184 8 36; wr 1192 2 36; wr 1194 1 2				# "."
wr 1196 8 36; wr 1204 2 37; wr 1206 1 2				# ".."
wr 1208 8 40; wr 1216 2 39; wr 1218 1 1				# "f"
wrs 1220 "...f"
N=300000
wr 1280 2 9; wr 1284 2 0x81a4; wr 1288 8 $((N << 19)); wr 1296 4 7	# extended, chunks of 4 KiB << 7
wr $((1280 + 44)) 4 1						# nlink
printf '\x2c\x01\x00\x00' >"$WORK/ent"				# block 300, 4 bytes
for i in $(seq 1 19); do cat "$WORK/ent" "$WORK/ent" >"$WORK/ent2"; mv "$WORK/ent2" "$WORK/ent"; done
head -c $((4 * N)) "$WORK/ent" | dd of="$IMG" bs=4096 seek=1344 oflag=seek_bytes conv=notrunc status=none
start=$(date +%s)
timeout 60 "$FSCK" -p "$IMG" >"$WORK/share.log" 2>&1
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -eq 0 ] && grep -q "file data bytes: *$((N << 19))" "$WORK/share.log" && [ "$took" -lt 30 ]; then
	pass "hostile sharing: 157 GB of shared chunks checked in ${took}s"
else
	fail "hostile sharing: rc $rc in ${took}s: $(head -3 "$WORK/share.log")"
fi
IMG=$BASE

# ---- the sweep: random damage must never crash or hang ----
sweep_start 4242
size=$(stat -c %s "$BASE")
for i in $(seq 1 400); do
	IMG=$WORK/sweep.img
	cp "$BASE" "$IMG"
	damage_image "$i" "$size" "$BS"
	sweep_check "$i" 40 5 20
done
sweep_verdict
finish
