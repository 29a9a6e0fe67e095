#!/bin/bash
# dump.erofs on images our mkfs.erofs makes: the superblock lines (features,
# oldest kernel, counts, compression configs), the -S counts and sizes
# against the source tree, inode details, --ls, -e extents (algorithm,
# fragments, chunk holes, shared blocks), -x, --cat, and clear errors.
. "$(dirname "$0")/lib.sh"
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}
export TZ=UTC

SRC=$WORK/src
mkdir -p "$SRC/b" "$SRC/z" "$SRC/d"
printf 'hello\n' >"$SRC/a.txt"
head -c 300000 < <(yes 'a compressible line of text') >"$SRC/big.bin"
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(7).randbytes(20000))' \
	>"$SRC/rand.so"
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(8).randbytes(16384))' \
	>"$SRC/d/same1"
cp "$SRC/d/same1" "$SRC/d/same2"
printf 'orig' >"$SRC/z/orig"
ln "$SRC/z/orig" "$SRC/b/link"
printf 'x' >"$SRC/init.rc"
printf '<a/>' >"$SRC/d/x.xml"
truncate -s 24576 "$SRC/sparse"
printf 'middle' | dd of="$SRC/sparse" bs=1 seek=9000 conv=notrunc status=none
ln -s a.txt "$SRC/lnk"
mkfifo "$SRC/fifo"
have_dev=0
if [ "$(id -u)" -eq 0 ]; then
	mknod "$SRC/dev" c 1 3 && have_dev=1
fi
have_xattr=0
setfattr -n user.k -v val "$SRC/a.txt" 2>/dev/null && have_xattr=1
find "$SRC" -exec touch -h -d @1000 {} +
chmod 644 "$SRC/a.txt"

UUID=01234567-89ab-cdef-0123-456789abcdef
build() { # NAME OPTIONS...
	local name=$1
	shift
	"$MKFS" --quiet -T 1000 -U "$UUID" "$@" "$WORK/$name.img" "$SRC" >"$WORK/$name.log" 2>&1 ||
		{ fail "$name: mkfs.erofs $*: $(tail -1 "$WORK/$name.log")"; return 1; }
}

# has_line LABEL FILE LINE: FILE holds exactly LINE
has_line() {
	if grep -qFx -- "$3" "$2"; then
		pass "$1: '$3'"
	else
		fail "$1: no line '$3' in:"
		head -30 "$2" >&2
	fi
}

# lacks LABEL FILE REGEX
lacks() {
	if grep -qE -- "$3" "$2"; then
		fail "$1: unexpected line /$3/: $(grep -E -- "$3" "$2" | head -1)"
	else
		pass "$1: no /$3/"
	fi
}

dump_ok() { # LABEL OUT ARGS...: dump.erofs succeeds, output in OUT
	local label=$1 out=$2
	shift 2
	if ! "$DUMP" "$@" >"$out" 2>"$out.err"; then
		fail "$label: dump.erofs $* failed: $(head -2 "$out.err")"
		return 1
	fi
}

sb_line() { printf '%-46s%s' "$1" "$2"; }

# ---- -s on each layout ----
build plain
build lz4hc -z lz4hc
build bigpc -z lz4hc -C 65536 -E ztailpacking
build frag -z lz4hc -E fragments
build dedupe -z lz4hc -E dedupe
build chunks --chunksize=8192

ninodes=$(find "$SRC" -printf '%i\n' | sort -u | wc -l)
for img in plain lz4hc bigpc frag dedupe chunks; do
	o=$WORK/$img.s
	dump_ok "$img -s" "$o" -s "$WORK/$img.img" || continue
	has_line "$img -s" "$o" "$(sb_line 'Filesystem magic number:' 0xE0F5E1E2)"
	has_line "$img -s" "$o" "$(sb_line 'Filesystem blocksize:' 4096)"
	has_line "$img -s" "$o" "$(sb_line 'Filesystem blocks:' $(($(stat -c %s "$WORK/$img.img") / 4096)))"
	n=$ninodes
	[ "$img" = frag ] && n=$((n + 1))	# the packed inode
	has_line "$img -s" "$o" "$(sb_line 'Filesystem inode count:' "$n")"
	has_line "$img -s" "$o" "$(sb_line 'Filesystem created:' 'Thu Jan  1 00:16:40 1970')"
	has_line "$img -s" "$o" "$(sb_line 'Filesystem UUID:' "$UUID")"
	# the xattr name filter is on by default once a file has xattrs
	if [ "$have_xattr" = 1 ]; then feats='sb_csum mtime xattr_filter '; else feats='sb_csum mtime '; fi
	has_line "$img -s" "$o" "$(sb_line 'Filesystem compatible features:' "$feats")"
	# no option at all means -s
	"$DUMP" "$WORK/$img.img" | cmp -s - "$o" && pass "$img: no option is -s" ||
		fail "$img: dump.erofs without an option differs from -s"
done
s=$WORK/plain.s
has_line plain "$s" "$(sb_line 'Filesystem incompatible features:' '')"
has_line plain "$s" "$(sb_line 'Filesystem lz4_max_distance:' 0)"
lacks plain "$s" '^Required upstream'
s=$WORK/lz4hc.s
has_line lz4hc "$s" "$(sb_line 'Filesystem incompatible features:' 'lz4_0padding ')"
has_line lz4hc "$s" "$(sb_line 'Required upstream Linux kernel version:' 5.4)"
s=$WORK/bigpc.s
has_line bigpc "$s" "$(sb_line 'Filesystem incompatible features:' 'lz4_0padding compr_cfgs big_pcluster ztailpacking ')"
has_line bigpc "$s" "$(sb_line 'Filesystem compr_algs:' lz4)"
has_line bigpc "$s" "$(sb_line 'Filesystem lz4 config:' 'max_distance 0, max_pclusterblks 16')"
has_line bigpc "$s" "$(sb_line 'Required upstream Linux kernel version:' 5.17)"
s=$WORK/frag.s
has_line frag "$s" "$(sb_line 'Required upstream Linux kernel version:' 6.1)"
grep -qE '^Filesystem incompatible features: +.*fragments dedupe $' "$s" &&
	pass "frag: fragments and dedupe named" || fail "frag: features: $(grep incompat "$s")"
packed=$(sed -n 's/^Filesystem packed nid: *//p' "$s")
[ -n "$packed" ] && pass "frag: packed nid $packed" || fail "frag: no packed nid line"
s=$WORK/chunks.s
has_line chunks "$s" "$(sb_line 'Filesystem incompatible features:' 'chunked_file ')"
has_line chunks "$s" "$(sb_line 'Required upstream Linux kernel version:' 5.15)"

# ---- -S against the tree ----
o=$WORK/plain.S
if dump_ok "plain -S" "$o" -S "$WORK/plain.img"; then
	has_line "-S" "$o" "$(printf 'Filesystem total file count:\t\t%s' "$(find "$SRC" | wc -l)")"
	has_line "-S" "$o" "$(printf 'Filesystem regular file count:\t\t%s' "$(find "$SRC" -type f | wc -l)")"
	has_line "-S" "$o" "$(printf 'Filesystem directory count:\t\t%s' "$(find "$SRC" -type d | wc -l)")"
	has_line "-S" "$o" "$(printf 'Filesystem symlink file count:\t\t1')"
	has_line "-S" "$o" "$(printf 'Filesystem FIFO file count:\t\t1')"
	has_line "-S" "$o" "$(printf 'Filesystem char dev count:\t\t%s' "$have_dev")"
	orig=$(find "$SRC" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
	has_line "-S" "$o" "Filesystem total original file size:    $orig Bytes"
	has_line "-S" "$o" "Filesystem total file size:             $orig Bytes"
	has_line "-S" "$o" "Filesystem compress rate:               100.00%"
	has_line "-S" "$o" "Filesystem compressed files:            0"
	grep -qE '^\.rc +	1 +[0-9.]+% \|#+ *\|$' "$o" && pass "-S: .rc counted" ||
		fail "-S: .rc row: $(grep '^\.rc' "$o")"
	grep -qE '^\.xml +	1 ' "$o" && pass "-S: .xml counted" || fail "-S: .xml row: $(grep '^\.xml' "$o")"
fi
o=$WORK/lz4hc.S
if dump_ok "lz4hc -S" "$o" -S "$WORK/lz4hc.img"; then
	n=$(sed -n 's/^Filesystem compressed files: *//p' "$o")
	disk=$(sed -n 's/^Filesystem total file size: *\([0-9]*\) Bytes/\1/p' "$o")
	[ "${n:-0}" -ge 1 ] && [ "${disk:-0}" -lt "$orig" ] &&
		pass "lz4hc -S: $n compressed files, $disk of $orig bytes" ||
		fail "lz4hc -S: compressed files '$n', on-disk '$disk' of $orig"
fi

# ---- inode details ----
o=$WORK/a.info
if dump_ok "--path=/a.txt" "$o" --path=/a.txt "$WORK/plain.img"; then
	has_line "--path" "$o" "Path : /a.txt"
	has_line "--path" "$o" "Size: 6  On-disk size: 6  regular file"
	has_line "--path" "$o" "Uid: $(id -u)   Gid: $(id -g)  Access: 0644/rw-r--r--"
	has_line "--path" "$o" "Timestamp: 1970-01-01 00:16:40.000000000"
fi
o=$WORK/link.info
if dump_ok "hard link" "$o" --path=/z/orig "$WORK/plain.img"; then
	# erofs-utils prints the first name in directory order
	has_line "hard link" "$o" "Path : /b/link"
	grep -q '   Links: 2   ' "$o" && pass "hard link: 2 links" || fail "hard link: $(sed -n 3p "$o")"
fi
nid=$(sed -n 's/^NID: \([0-9]*\) .*/\1/p' "$WORK/a.info")
if dump_ok "--nid" "$WORK/nid.info" --nid="$nid" "$WORK/plain.img"; then
	cmp -s "$WORK/nid.info" "$WORK/a.info" && pass "--nid=$nid shows /a.txt" ||
		fail "--nid=$nid differs from --path=/a.txt"
fi
if dump_ok "packed" "$WORK/packed.info" --nid="$packed" "$WORK/frag.img"; then
	has_line "packed" "$WORK/packed.info" "Path : (packed file)"
fi

# ---- --ls ----
o=$WORK/root.ls
if dump_ok "--ls" "$o" --path=/ --ls "$WORK/plain.img"; then
	sed -n '/^       NID TYPE  FILENAME$/,$p' "$o" | tail -n +2 | awk '{print $3}' >"$WORK/ls.names"
	(printf '.\n..\n'; ls -A "$SRC" | LC_ALL=C sort) >"$WORK/ls.want"
	diff -u "$WORK/ls.want" "$WORK/ls.names" >/dev/null && pass "--ls: every name, in order" ||
		fail "--ls: names differ: $(diff "$WORK/ls.want" "$WORK/ls.names" | head -5)"
	grep -qE '^ +[0-9]+    7  lnk$' "$o" && pass "--ls: symlink type 7" || fail "--ls: lnk"
	grep -qE '^ +[0-9]+    5  fifo$' "$o" && pass "--ls: fifo type 5" || fail "--ls: fifo"
	grep -qE "^ +$nid    1  a.txt$" "$o" && pass "--ls: a.txt nid $nid" || fail "--ls: a.txt"
fi

# ---- -e ----
# extents_cover FILE SIZE: extents start at 0, follow each other and reach SIZE
extents_cover() {
	awk -v size="$2" '
		/^ *[0-9]+: / {
			s = $0; sub(/^ *[0-9]+: */, "", s); split(s, r, /\.\. */); sub(/ .*/, "", r[2])
			if (r[1] + 0 != end + 0) bad = 1
			end = r[2]; n++
		}
		END { exit !(n > 0 && !bad && end >= size && end - size < 4096) }' "$1"
}
for img in plain lz4hc bigpc frag dedupe chunks; do
	for f in big.bin rand.so sparse; do
		o=$WORK/$img.$f.e
		dump_ok "$img -e /$f" "$o" -e --path=/$f "$WORK/$img.img" || continue
		if extents_cover "$o" "$(stat -c %s "$SRC/$f")"; then
			pass "$img -e /$f: $(tail -1 "$o")"
		else
			fail "$img -e /$f: extents do not cover the file:"
			cat "$o" >&2
		fi
	done
done
grep -q '  # lz4$' "$WORK/lz4hc.big.bin.e" && pass "lz4hc -e: algorithm named" ||
	fail "lz4hc -e: no '# lz4' in $(tail -2 "$WORK/lz4hc.big.bin.e")"
grep -q '  # lz4$' "$WORK/plain.big.bin.e" && fail "plain -e: '# lz4' on plain data" ||
	pass "plain -e: no algorithm on plain data"
# big.bin compresses to less than a pcluster: it is all in the packed inode
grep -qE '^ +0: +0\.\. +300000 \| +300000 : +0\.\. +0 \| +0  # fragment at [0-9]+ of the packed inode$' \
	"$WORK/frag.big.bin.e" && pass "frag -e: the fragment at 0, 0 bytes" ||
	fail "frag -e: $(cat "$WORK/frag.big.bin.e")"
grep -qE '^ +[0-9]+: +0\.\. +8192 \|    8192 : 17592186040320\.\.17592186048512 \|    8192  # hole$' \
	"$WORK/chunks.sparse.e" && pass "chunks -e: the hole at the null address" ||
	fail "chunks -e: $(cat "$WORK/chunks.sparse.e")"
# identical files share their blocks (whole-file dedup, chunks)
for img in plain chunks; do
	a=$("$DUMP" -e --path=/d/same1 "$WORK/$img.img" | grep -E '^ +0: ' | cut -d: -f3)
	b=$("$DUMP" -e --path=/d/same2 "$WORK/$img.img" | grep -E '^ +0: ' | cut -d: -f3)
	[ -n "$a" ] && [ "$a" = "$b" ] && pass "$img -e: identical files at the same blocks" ||
		fail "$img -e: same1 at '$a', same2 at '$b'"
done

# ---- -x ----
if [ "$have_xattr" -eq 1 ] && dump_ok "-x" "$WORK/x.out" -x --path=/a.txt "$WORK/plain.img"; then
	grep -qE '^(inline|shared) +user\.k="val"$' "$WORK/x.out" && pass "-x: user.k=\"val\"" ||
		fail "-x: $(sed -n '/^Xattrs/,$p' "$WORK/x.out")"
	has_line "-x" "$WORK/x.out" "Xattrs: 1"
fi

# ---- --cat ----
for img in plain lz4hc frag dedupe chunks; do
	for f in big.bin rand.so sparse d/same2; do
		if "$DUMP" --cat --path=/$f "$WORK/$img.img" 2>"$WORK/cat.err" | cmp -s - "$SRC/$f"; then
			pass "$img --cat /$f"
		else
			fail "$img --cat /$f: differs from the source: $(head -1 "$WORK/cat.err")"
		fi
	done
done

# ---- --offset: the image inside a bigger file, at a byte that is no block's ----
REF_DUMP=${REF_DUMP:-$top_srcdir/../shared/anchors/erofs-utils-1.9.4/dump.erofs}
for img in plain lz4hc chunks; do
	{ head -c 12345 /dev/urandom; cat "$WORK/$img.img"; head -c 5000 /dev/urandom; } \
		>"$WORK/inside.bin"
	same=0
	for args in "-s" "-S" "-e --path=/big.bin" "--ls --path=/d" "-x --path=/a.txt"; do
		# shellcheck disable=SC2086 # option lists are words
		if dump_ok "$img --offset $args" "$WORK/off.out" --offset=12345 $args "$WORK/inside.bin" &&
			dump_ok "$img $args" "$WORK/noff.out" $args "$WORK/$img.img" &&
			cmp -s "$WORK/off.out" "$WORK/noff.out"; then
			same=$((same + 1))
		else
			fail "$img: dump.erofs --offset=12345 $args differs from the image alone"
		fi
	done
	[ "$same" -eq 5 ] && pass "$img: -s, -S, -e, --ls with --offset=12345 equal the image alone"
	if "$DUMP" --offset=12345 --cat --path=/big.bin "$WORK/inside.bin" | cmp -s - "$SRC/big.bin"; then
		pass "$img: --offset=12345 --cat /big.bin"
	else
		fail "$img: --offset=12345 --cat /big.bin differs from the source"
	fi
done
if [ -x "$REF_DUMP" ]; then
	# erofs-utils reads the same bytes at the same offset (plain: no '# lz4' of ours)
	{ head -c 12345 /dev/urandom; cat "$WORK/plain.img"; } >"$WORK/inside.bin"
	for args in "-s" "-e --path=/big.bin"; do
		# shellcheck disable=SC2086
		if "$REF_DUMP" --offset=12345 $args "$WORK/inside.bin" >"$WORK/ref.out" 2>&1 &&
			dump_ok "--offset $args" "$WORK/off.out" --offset=12345 $args "$WORK/inside.bin" &&
			diff -u <(grep -v 'kernel version' "$WORK/ref.out") \
				<(grep -v 'kernel version' "$WORK/off.out") >"$WORK/ref.diff"; then
			pass "--offset=12345 $args: the lines erofs-utils 1.9.4's dump.erofs prints"
		else
			fail "--offset=12345 $args: differs from erofs-utils: $(sed -n 4,6p "$WORK/ref.diff")"
		fi
	done
else
	echo "note: no erofs-utils 1.9.4 dump.erofs at $REF_DUMP: --offset not cross-checked"
fi
expect_failure "no --offset" 'superblock: bad magic' "$DUMP" -S "$WORK/inside.bin"
expect_failure "--offset past the end" 'offset 99999999 is not inside the file' \
	"$DUMP" --offset=99999999 -s "$WORK/inside.bin"
expect_failure "bad --offset" "invalid --offset '12k'" "$DUMP" --offset=12k -s "$WORK/inside.bin"
expect_failure "--device for a one-device image" 'no extra devices' \
	"$DUMP" --device="$WORK/plain.img" --path=/ "$WORK/plain.img"

# ---- errors ----
img=$WORK/plain.img
expect_failure "no such path" '/nope: no such file or directory' "$DUMP" --path=/nope "$img"
expect_failure "path through a file" '/a.txt: not a directory' "$DUMP" --path=/a.txt/x "$img"
expect_failure "--ls on a file" 'not a directory' "$DUMP" --ls --path=/a.txt "$img"
expect_failure "nid beyond the image" 'nid 99999999' "$DUMP" --nid=99999999 "$img"
expect_failure "-e without an inode" 'need an inode' "$DUMP" -e "$img"
expect_failure "bad nid" "invalid --nid 'abc'" "$DUMP" --nid=abc "$img"
expect_failure "negative nid" "invalid --nid '-1'" "$DUMP" --nid=-1 "$img"
# numbers are read as erofs-utils reads them (strtoull base 0): 0x hex too
root=$("$DUMP" -s "$img" | sed -n 's/^Filesystem root nid: *//p')
if [ -n "$root" ] && "$DUMP" --nid="$(printf '0x%x' "$root")" "$img" >"$WORK/hex.out" 2>&1 &&
	"$DUMP" --nid="$root" "$img" | cmp -s - "$WORK/hex.out"; then
	pass "--nid=$(printf '0x%x' "$root") is nid $root"
else
	fail "--nid in hex: $(head -1 "$WORK/hex.out")"
fi
head -c 8192 /dev/zero >"$WORK/zeros.img"
expect_failure "not an image" 'bad magic' "$DUMP" -s "$WORK/zeros.img"
expect_failure "missing image" 'cannot open' "$DUMP" -s "$WORK/missing.img"
for args in "--path=/nope" "-e" "--nid=abc" "-s $WORK/missing.img" "--offset=$((1 << 40))" \
	"--device=$WORK/plain.img --path=/"; do
	rc=0
	# shellcheck disable=SC2086
	"$DUMP" $args "$img" >/dev/null 2>&1 || rc=$?
	case $args in
	--path=*) want=1 ;;
	*) want=2 ;;
	esac
	[ "$rc" -eq "$want" ] && pass "exit $rc for $args" || fail "exit $rc for $args, wanted $want"
done
finish
