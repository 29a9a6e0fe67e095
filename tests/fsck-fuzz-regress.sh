#!/bin/bash
# fsck.erofs on images that once broke it, kept gzipped in tests/images/
# (found by the fuzz campaigns of tests/fuzz/ or by hand; see
# tests/fuzz/README.md).  Each must end within its time bound (a hang or
# a runaway is a failure) with the exit status and message given here.
. "$(dirname "$0")/fsck-common.sh"

IMAGES=$top_srcdir/tests/images
command -v gzip >/dev/null || skip "no gzip"

# regress NAME SECONDS RC WORDS: fsck.erofs NAME.img exits RC within
# SECONDS and prints WORDS
regress() {
	local name=$1 secs=$2 want=$3 words=$4 img=$WORK/$1.img rc=0
	if ! gzip -dc "$IMAGES/$name.img.gz" >"$img"; then
		fail "$name: cannot unpack $IMAGES/$name.img.gz"
		return
	fi
	timeout "$secs" "$FSCK" "$img" >"$WORK/$name.log" 2>&1 || rc=$?
	if [ "$rc" -eq 124 ]; then
		fail "$name: fsck.erofs still running after $secs s"
	elif [ "$rc" -ne "$want" ]; then
		fail "$name: exit status $rc, wanted $want: $(head -3 "$WORK/$name.log")"
	elif ! grep -qF -- "$words" "$WORK/$name.log"; then
		fail "$name: no '$words' in: $(head -3 "$WORK/$name.log")"
	else
		pass "$name"
	fi
	rm -f "$img"
}

# 2,000 inodes, each one's 32768-entry chunk table laid over the next ones
# (tests/images/craft-overlapping-inodes.py): fsck mapped 2000 x 32768
# chunks (37 s here; days for bigger images) before it claimed each
# inode's metadata
regress overlapping-chunk-tables 10 1 \
	"overlaps an inode checked before; not checked further"

finish
