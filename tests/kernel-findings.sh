#!/bin/bash
# Our readers on the images that crash, hang or flood Debian's 6.12 and 7.x
# kernels (the newer kernels' fuzz findings F1-F5, kept in
# qemu-tests/findings/ and listed in qemu-tests/fuzz-findings.list; the
# QEMU suite gives them to the kernels): fsck.erofs, dump.erofs (-S and
# --cat), erofsfuse's operations (tools/erofs-fsops-manifest walks them
# without mounting) and erofsfuse's command line must each refuse every
# image within a few seconds, exit 1 and name the defect.  erofsfuse
# refuses at start an image whose metabox or root inode is unusable (F1,
# F2), as the kernel does at mount; the others it would mount and answer
# the bad file with EIO, which the operations' walk shows (the mount point
# given here does not exist: nothing is ever mounted on the host).
. "$(dirname "$0")/fsck-common.sh"

DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
FSOPS=${FSOPS:-$top_builddir/tools/erofs-fsops-manifest}
EROFSFUSE=${EROFSFUSE:-$top_builddir/fuse/erofsfuse}
FINDINGS=$top_srcdir/qemu-tests/findings
LIST=$top_srcdir/qemu-tests/fuzz-findings.list
command -v gzip >/dev/null || skip "no gzip"
[ -x "$DUMP" ] && [ -x "$FSOPS" ] || { echo "$test_name: dump.erofs or erofs-fsops-manifest not built" >&2; exit 99; }

# refused LABEL WORDS COMMAND...: COMMAND exits 1 within 10 s and its
# stderr holds WORDS
refused() {
	local label=$1 words=$2 rc=0
	shift 2
	timeout 10 "$@" >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
	if [ "$rc" -eq 124 ]; then
		fail "$label: still running after 10 s"
	elif [ "$rc" -ne 1 ]; then
		fail "$label: exit $rc, wanted 1: $(head -2 "$WORK/err.txt")"
	elif ! grep -qF -- "$words" "$WORK/err.txt"; then
		fail "$label: no '$words' in: $(head -2 "$WORK/err.txt")"
	else
		pass "$label: $(grep -m1 -F -- "$words" "$WORK/err.txt" | cut -c1-150)"
	fi
}

# every finding of the list has its image, and every image a line
names=$(awk '$1 !~ /^#/ && NF { print $1 }' "$LIST" | sort)
kept=$(find "$FINDINGS" -name '*.img.gz' -printf '%f\n' | sed 's/\.img\.gz$//' | sort)
if [ -n "$names" ] && [ "$names" = "$kept" ]; then
	pass "fuzz-findings.list and qemu-tests/findings/ name the same $(wc -l <<< "$names") images"
else
	fail "fuzz-findings.list names [$(tr "\n" " " <<< "$names")], qemu-tests/findings/ holds [$(tr "\n" " " <<< "$kept")]"
fi

# check NAME AT-START WORDS: the image refused by every reader with WORDS;
# AT-START yes: erofsfuse refuses it before the mount point is looked at
check() {
	local name=$1 at_start=$2 words=$3 img=$WORK/$1.img size
	if ! gzip -dc "$FINDINGS/$name.img.gz" >"$img"; then
		fail "$name: cannot unpack $FINDINGS/$name.img.gz"
		return
	fi
	size=$(stat -c %s "$img")
	[ "$size" -le 16384 ] || fail "$name: $size bytes; keep reproducers small"
	refused "$name: fsck.erofs" "$words" "$FSCK" "$img"
	refused "$name: dump.erofs -S" "$words" "$DUMP" -S "$img"
	refused "$name: dump.erofs --cat /d/five-k" "$words" "$DUMP" --cat --path=/d/five-k "$img"
	refused "$name: erofsfuse's operations" "$words" "$FSOPS" "$img"
	if [ ! -x "$EROFSFUSE" ]; then
		echo "$name: erofsfuse not built (no libfuse3); its start not checked"
	elif [ "$at_start" = yes ]; then
		refused "$name: erofsfuse refuses it at start" "$words" "$EROFSFUSE" -f "$img" "$WORK/no-mnt"
	else
		# the image is accepted up to the mount point (which is missing)
		refused "$name: erofsfuse accepts it up to the mount point" "bad mount point" \
			"$EROFSFUSE" -f "$img" "$WORK/no-mnt"
	fi
	rm -f "$img"
}

# F1 (7.3 oops at mount): the metabox inode is a FIFO
check f28-metabox-fifo yes "metabox inode (nid 37): not a regular file (mode 010644)"
# F2 (7.3 WARNING at mount): the root nid far past the metabox
check f28-metabox-root-past yes \
	"nid 18446744073709551582 out of range (the metabox has 128 inode slots)"
# F3 (6.12 and 7.3 oops): the packed inode is a FIFO
check f28-packed-fifo no "unusable packed inode (nid 49): not a regular file (mode 010600)"
# F4 (6.12 and 7.3 hang): the packed inode is a file whose data is a fragment
check f28-packed-self no "the whole file is a fragment, but this is the packed inode itself"
# F5 (6.12 page-cache flood and soft lockup): whole-file fragments of 256 MiB
# and 64 GiB behind a 5000-byte packed inode
check f28-fragment-flood no \
	"fragment of 268435456 bytes at offset 0 beyond the end of the packed inode (nid 49, 5000 bytes)"
check f28-fragment-64g no \
	"fragment of 68719476736 bytes at offset 0 beyond the end of the packed inode (nid 54, 5000 bytes)"

finish
