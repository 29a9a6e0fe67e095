#!/bin/bash
# dump.erofs side by side with erofs-utils 1.9.4's (../shared/anchors; the
# test is skipped without it), on images both mkfs.erofs make of every
# layout: -s, -S and every path's inode details, --ls and -e must print the
# same lines, once our additions are taken out (the '# algorithm' comments
# of -e and the -s lines erofs-utils does not have).  Scripts written
# against its dump.erofs therefore read ours.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/dump-views.sh"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
REF=${REF:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4}
if [ ! -x "$REF/dump.erofs" ] || [ ! -x "$REF/mkfs.erofs" ]; then
	echo "$test_name: no erofs-utils 1.9.4 in $REF (../shared/anchors); skipped"
	exit 77
fi
command -v python3 >/dev/null || { echo "$test_name: needs python3; skipped"; exit 77; }
export TZ=UTC

SRC=$WORK/src
mkdir -p "$SRC/sizes" "$SRC/mixed" "$SRC/links/x" "$SRC/links/y" "$SRC/big-dir" \
	"$SRC/deep/a/b/c/d/e/f/g"
fixed() { python3 -c 'import random,sys
sys.stdout.buffer.write(random.Random(sys.argv[1]).randbytes(int(sys.argv[2])))' "$1" "$2"; }
for n in 0 1 100 4095 4096 4097 8191 8192 12288 65537; do fixed "s$n" "$n" >"$SRC/sizes/f$n"; done
head -c 400000 < <(yes 'compressible line of text for dump.erofs') >"$SRC/sizes/text.txt"
for t in 5000 20000; do
	for r in 1733 9000; do
		{ head -c "$t" "$SRC/sizes/text.txt"; fixed "m$t$r" "$r"; } >"$SRC/mixed/t$t-r$r.so"
	done
done
cp "$SRC/sizes/f8192" "$SRC/mixed/copy-of-f8192"
truncate -s 40000 "$SRC/sizes/sparse"
printf 'middle' | dd of="$SRC/sizes/sparse" bs=1 seek=20000 conv=notrunc status=none
printf 'linked' >"$SRC/links/y/orig"
ln "$SRC/links/y/orig" "$SRC/links/x/second"
ln -s ../sizes/f1 "$SRC/links/sym"
for i in $(seq 1 300); do printf '%s' "$i" >"$SRC/big-dir/entry-with-a-longer-name-$i.xml"; done
printf 'deep' >"$SRC/deep/a/b/c/d/e/f/g/file.rc"
mkfifo "$SRC/fifo"
[ "$(id -u)" -eq 0 ] && mknod "$SRC/cdev" c 1 3
setfattr -n user.comment -v 'a value' "$SRC/sizes/f100" 2>/dev/null || true

# compare IMAGE LABEL: every view of IMAGE the same from both tools
compare() {
	local img=$1 label=$2 p o same=0 diffs=0
	for o in -s -S; do
		"$REF/dump.erofs" $o "$img" >"$WORK/ref.out" 2>&1
		# our oldest kernel is also shown where erofs-utils has none (sub-page blocks)
		kernel=cat
		grep -q '^Required upstream' "$WORK/ref.out" || kernel="sed /^Required.upstream/d"
		if diff "$WORK/ref.out" <("$DUMP" $o "$img" 2>&1 | ours_only | $kernel) \
			>"$WORK/diff" 2>&1; then
			same=$((same + 1))
		else
			diffs=$((diffs + 1))
			fail "$label $o differs:"
			head -20 "$WORK/diff" >&2
		fi
	done
	# the listing, and a tenth of its files
	(cd "$SRC" && find . | sed -e 's|^\.||' -e 's|^$|/|' | grep -v '^/big-dir/.*[0-8]\.xml$') \
		>"$WORK/paths"
	dump_views "$REF/dump.erofs" "$img" "$SRC" "$WORK/paths" >"$WORK/ref.views"
	dump_views "$DUMP" "$img" "$SRC" "$WORK/paths" | ours_only >"$WORK/ours.views"
	compare_views "$label" "$WORK/ref.views" "$WORK/ours.views"
	same=$((same + $(wc -l <"$WORK/paths") - views_differ))
	diffs=$((diffs + views_differ))
	packed=$("$DUMP" -s "$img" | sed -n 's/^Filesystem packed nid: *//p')
	if [ -n "$packed" ]; then
		if diff <("$REF/dump.erofs" --nid="$packed" -e "$img" 2>&1) \
			<("$DUMP" --nid="$packed" -e "$img" 2>&1 | ours_only) >"$WORK/diff" 2>&1; then
			same=$((same + 1))
		else
			diffs=$((diffs + 1))
			fail "$label --nid=$packed (packed file) differs:"
			head -12 "$WORK/diff" >&2
		fi
	fi
	[ "$diffs" -eq 0 ] && pass "$label: $same views identical" ||
		fail "$label: $diffs of $((same + diffs)) views differ"
}

# each_setting MKFS LABEL: an image of the tree for every setting read from
# stdin (an empty line: no option), compared
each_setting() {
	local mkfs=$1 label=$2 opts i=0
	while IFS= read -r opts; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		if "$mkfs" --quiet -T 1000 $opts "$WORK/$i.img" "$SRC" >"$WORK/mkfs.log" 2>&1; then
			compare "$WORK/$i.img" "$label ${opts:-plain}"
		else
			fail "$label mkfs.erofs $opts: $(tail -1 "$WORK/mkfs.log")"
		fi
		rm -f "$WORK/$i.img"
	done
}

each_setting "$MKFS" ours <<'EOF'

-zlz4hc
-zlz4 -Elegacy-compress
-zlz4hc -C65536 -Eztailpacking
-zlz4hc -Efragments,ztailpacking
-zlz4hc -C16384 -Ededupe
--chunksize=8192
EOF
each_setting "$REF/mkfs.erofs" erofs-utils <<'EOF'

-b 1024
-zlz4hc -C65536 -Eztailpacking
-zlz4hc -Eall-fragments
-zlz4hc -C16384 -Efragments,dedupe
--chunksize=8192
-zlzma -C16384
-zdeflate
-zzstd -Eztailpacking
EOF
finish
