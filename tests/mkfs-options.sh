#!/bin/bash
# mkfs.erofs options: each one's effect is read back from the image bytes or
# from the tree our fsck.erofs extracts.
. "$(dirname "$0")/lib.sh"
require_root
DUMP=${DUMP:-$top_builddir/dump/dump.erofs}

src=$WORK/src
mkdir -p "$src/keep" "$src/skip/deeper" "$src/logs"
echo keep >"$src/keep/file"
echo skip >"$src/skip/deeper/file"
echo log >"$src/logs/a.log"
echo txt >"$src/logs/a.txt"
chown 1234:5678 "$src/keep/file"
setfattr -n user.x -v 1 "$src/keep/file"
touch -d '2030-01-01 00:00:00.5' "$src/keep/file"
touch -d '2000-01-01' "$src/logs/a.txt"

sb_field() { # IMAGE OFFSET LENGTH: hex bytes of the superblock
	od -An -v -tx1 -j $((1024 + $2)) -N "$3" "$1" | tr -d ' \n'
}
le_hex() { # NUMBER BYTES: little-endian hex
	local n=$1 i out=""
	for ((i = 0; i < $2; i++)); do out+=$(printf '%02x' $(((n >> (8 * i)) & 255))); done
	echo "$out"
}
build_and_extract() { # NAME [mkfs options...]
	local name=$1
	shift
	rm -rf "$WORK/$name"
	"$MKFS" --quiet "$@" "$WORK/$name.img" "$src" &&
		"$FSCK" --extract="$WORK/$name" "$WORK/$name.img" >/dev/null
}
check() { # LABEL COMMAND...
	local label=$1
	shift
	if "$@"; then pass "$label"; else fail "$label"; fi
}
manifest_has() { # DIR REGEX
	"$MANIFEST" "$1" | grep -qE -- "$2"
}
manifest_lacks() { # DIR REGEX
	! "$MANIFEST" "$1" | grep -qE -- "$2"
}

build_and_extract fixed -T 1700000000 -U 01234567-89ab-cdef-0123-456789abcdef -L my-volume
check "-T sets the build time" [ "$(sb_field "$WORK/fixed.img" 0x18 8)" = "$(le_hex 1700000000 8)" ]
check "-T sets every mtime" manifest_lacks "$WORK/fixed" 'mtime=(1[0-68-9]|17[1-9]|170[1-9])'
check "-T mtimes read back" manifest_has "$WORK/fixed" '^keep/file .*mtime=1700000000\.000000000'
check "-U sets the uuid" [ "$(sb_field "$WORK/fixed.img" 0x30 16)" = 0123456789abcdef0123456789abcdef ]
check "-L sets the label" [ "$(sb_field "$WORK/fixed.img" 0x40 16)" = "$(printf 'my-volume' | od -An -tx1 | tr -d ' \n')00000000000000" ]
# sb_csum and mtime, and the xattr name filter: the tree has xattrs (user.x)
check "checksum feature set" [ "$(sb_field "$WORK/fixed.img" 0x08 4)" = 07000000 ]
check "-U clear" [ "$("$MKFS" --quiet -U clear "$WORK/clear.img" "$src" && sb_field "$WORK/clear.img" 0x30 16)" = 00000000000000000000000000000000 ]

build_and_extract keep -U clear
check "mtime with nanoseconds kept" manifest_has "$WORK/keep" '^keep/file .*mtime=1893456000\.500000000'
check "owner kept" manifest_has "$WORK/keep" '^keep/file .*uid=1234 gid=5678'
check "xattr kept" manifest_has "$WORK/keep" '^keep/file .*xattrs=user.x=31'

build_and_extract root --all-root
check "--all-root" manifest_lacks "$WORK/root" 'uid=[1-9]|gid=[1-9]'
build_and_extract forced --force-uid=42 --force-gid=43
check "--force-uid/--force-gid" manifest_lacks "$WORK/forced" 'uid=([0-35-9]|4[013-9])|gid=([0-35-9]|4[0-24-9])'
build_and_extract offset --uid-offset=1000 --gid-offset=2000
check "--uid-offset/--gid-offset" manifest_has "$WORK/offset" '^keep/file .*uid=2234 gid=7678'

build_and_extract excluded --exclude-path=skip/deeper --exclude-regex='\.log$'
check "--exclude-path leaves out the subtree" manifest_lacks "$WORK/excluded" '^skip/deeper'
check "--exclude-path keeps the parent" manifest_has "$WORK/excluded" '^skip type=dir'
check "--exclude-regex" manifest_lacks "$WORK/excluded" '^logs/a\.log'
check "--exclude-regex keeps others" manifest_has "$WORK/excluded" '^logs/a\.txt'

build_and_extract noxattr -x -1
check "-x -1 drops xattrs" manifest_lacks "$WORK/noxattr" 'xattrs='

SOURCE_DATE_EPOCH=1000000000 build_and_extract clamped
check "SOURCE_DATE_EPOCH sets the build time" [ "$(sb_field "$WORK/clamped.img" 0x18 8)" = "$(le_hex 1000000000 8)" ]
check "SOURCE_DATE_EPOCH clamps newer mtimes" manifest_has "$WORK/clamped" '^keep/file .*mtime=1000000000\.000000000'
check "SOURCE_DATE_EPOCH keeps older mtimes" manifest_has "$WORK/clamped" '^logs/a\.txt .*mtime=946684800\.000000000'

build_and_extract mkfstime --mkfs-time=1234
check "--mkfs-time sets the build time" [ "$(sb_field "$WORK/mkfstime.img" 0x18 8)" = "$(le_hex 1234 8)" ]
check "--mkfs-time keeps mtimes" manifest_has "$WORK/mkfstime" '^keep/file .*mtime=1893456000\.500000000'

# erofs-utils' spelling (containerd's recommended -T0 --mkfs-time): the bare
# --mkfs-time, before or after -T, makes -T the build time only; a later
# --all-time gives it to every file again; SOURCE_DATE_EPOCH no longer clamps
for order in "-T 1234 --mkfs-time" "--mkfs-time -T1234" "-T1234 --all-time --mkfs-time"; do
	SOURCE_DATE_EPOCH=1000000000 build_and_extract bare $order
	check "$order: build time 1234" [ "$(sb_field "$WORK/bare.img" 0x18 8)" = "$(le_hex 1234 8)" ]
	check "$order: mtimes kept, not clamped" manifest_has "$WORK/bare" '^keep/file .*mtime=1893456000\.500000000'
done
build_and_extract alltime -T 1234 --mkfs-time --all-time
check "-T --mkfs-time --all-time: every mtime is -T's" manifest_has "$WORK/alltime" '^keep/file .*mtime=1234\.000000000'
build_and_extract onlybare --mkfs-time
check "bare --mkfs-time without -T: mtimes kept" manifest_has "$WORK/onlybare" '^keep/file .*mtime=1893456000\.500000000'
build_and_extract ignored --ignore-mtime
build_and_extract preserved --ignore-mtime --preserve-mtime
check "--ignore-mtime drops mtimes" manifest_lacks "$WORK/ignored" '^keep/file .*mtime=1893456000\.500000000'
check "--preserve-mtime undoes --ignore-mtime" manifest_has "$WORK/preserved" '^keep/file .*mtime=1893456000\.500000000'
# a bare --tar is erofs-utils' --tar=f: the same image
if command -v tar >/dev/null; then
	tar -C "$src" -cf "$WORK/src.tar" .
	"$MKFS" --quiet -U clear -T0 --tar "$WORK/tarbare.img" <"$WORK/src.tar" &&
		"$MKFS" --quiet -U clear -T0 --tar=f "$WORK/tarf.img" "$WORK/src.tar"
	check "bare --tar reads the tar as --tar=f does" cmp -s "$WORK/tarbare.img" "$WORK/tarf.img"
	# --ungzip=FILE / --unxz=FILE keep the decoded tar: the same bytes as the
	# tar, the same image; with --tar=i the index points into that file
	gzip -c "$WORK/src.tar" >"$WORK/src.tar.gz"
	"$MKFS" --quiet -U clear -T0 --tar=f --ungzip="$WORK/raw.tar" "$WORK/tarz.img" <"$WORK/src.tar.gz"
	check "--ungzip=FILE: FILE is the decoded tar" cmp -s "$WORK/raw.tar" "$WORK/src.tar"
	check "--ungzip=FILE: the same image as from the plain tar" cmp -s "$WORK/tarz.img" "$WORK/tarf.img"
	if command -v xz >/dev/null; then
		xz -c "$WORK/src.tar" >"$WORK/src.tar.xz"
		"$MKFS" --quiet -U clear -T0 --tar --unxz="$WORK/rawxz.tar" "$WORK/tarxz.img" "$WORK/src.tar.xz"
		check "--unxz=FILE: FILE is the decoded tar" cmp -s "$WORK/rawxz.tar" "$WORK/src.tar"
	fi
	"$MKFS" --quiet -U clear --tar=i --ungzip="$WORK/idx.tar" "$WORK/idx.img" "$WORK/src.tar.gz"
	"$MKFS" --quiet -U clear --tar=i "$WORK/idx-plain.img" "$WORK/src.tar"
	check "--tar=i --ungzip=FILE: the index of the plain tar, FILE its device" bash -c \
		"cmp -s '$WORK/idx.img' '$WORK/idx-plain.img' && cmp -s '$WORK/idx.tar' '$WORK/src.tar' &&
		 '$FSCK' --device='$WORK/idx.tar' '$WORK/idx.img' >/dev/null"
	check "--tar=i --ungzip without =FILE is refused" bash -c \
		"! '$MKFS' --quiet --tar=i --ungzip '$WORK/never.img' '$WORK/src.tar.gz' 2>/dev/null"
fi
# --workers=0 is one per CPU (erofs-utils' spelling): the same image as 1
"$MKFS" --quiet -U clear -T0 -zlz4hc --workers=0 "$WORK/w0.img" "$src" &&
	"$MKFS" --quiet -U clear -T0 -zlz4hc --workers=1 "$WORK/w1.img" "$src"
check "--workers=0 accepted, same image as --workers=1" cmp -s "$WORK/w0.img" "$WORK/w1.img"
check "--async-queue-limit=16 accepted, same image" bash -c "'$MKFS' --quiet -U clear -T0 -zlz4hc --async-queue-limit=16 '$WORK/aq.img' '$src' && cmp -s '$WORK/aq.img' '$WORK/w1.img'"

# without -T, the epoch is the most common mtime: here 2000-01-01 wins
touch -d '2000-01-01' "$src/keep" "$src/logs" "$src/skip" "$src/skip/deeper"
"$MKFS" --quiet "$WORK/epoch.img" "$src"
check "default epoch is the most common mtime" [ "$(sb_field "$WORK/epoch.img" 0x18 8)" = "$(le_hex 946684800 8)" ]

# -T makes every inode compact: the image's metadata shrinks
"$MKFS" --quiet -U clear -E force-inode-extended "$WORK/ext.img" "$src"
"$MKFS" --quiet -U clear -T 0 "$WORK/cmp.img" "$src"
root_format() { od -An -tu1 -j 1152 -N 1 "$1" | tr -d ' '; } # root nid 36: i_format
check "-E force-inode-extended: extended root" [ $(($(root_format "$WORK/ext.img") & 1)) = 1 ]
check "-T gives compact inodes" [ $(($(root_format "$WORK/cmp.img") & 1)) = 0 ]
check "compact inodes make a smaller image" [ "$(stat -c %s "$WORK/cmp.img")" -le "$(stat -c %s "$WORK/ext.img")" ]

# an image path that is a symlink: the image replaces its target, the link stays
mkdir "$WORK/images"
touch "$WORK/images/target.img"
ln -s images/target.img "$WORK/link.img"
"$MKFS" --quiet "$WORK/link.img" "$src"
check "a symlinked image path keeps its link" [ -L "$WORK/link.img" ]
check "the symlink's target holds the image" [ "$(od -An -tx1 -j 1024 -N 4 "$WORK/images/target.img" | tr -d ' ')" = e2e1f5e0 ]

# --help and --version; every option of --help is documented in the man page
# -z lzma,lc=N,lp=N,pb=N: the stream's first byte is the inverted
# properties byte (pb * 5 + lp) * 9 + lc, as erofs-utils writes it
# (text that fills the first pcluster, so no zero padding comes before it)
mkdir -p "$WORK/lzma-src"
head -c 300000 /dev/urandom | base64 >"$WORK/lzma-src/numbers"
for bits in "" ",lc=0,lp=4,pb=4" ",lc=1,lp=2,pb=1"; do
	"$MKFS" --quiet -U clear -T0 -zlzma$bits -C 65536 "$WORK/lzma.img" "$WORK/lzma-src"
	first=$("$DUMP" -e --path=/numbers "$WORK/lzma.img" |
		awk '/# lzma/ { for (k = 1; k <= NF; k++) if ($k == ":") { split($(k + 1), a, "\\.\\."); print a[1]; exit } }')
	lc=3 lp=0 pb=2
	for kv in ${bits//,/ }; do eval "${kv%%=*}=${kv#*=}"; done
	check "-z lzma$bits: properties byte of lc $lc lp $lp pb $pb" \
		[ "$(od -An -tu1 -j "$first" -N1 "$WORK/lzma.img" | tr -d ' ')" = $((255 - ((pb * 5 + lp) * 9 + lc))) ]
	rm -rf "$WORK/lzma-x"
	check "-z lzma$bits: extracts to the source" bash -c \
		"'$FSCK' --extract='$WORK/lzma-x' '$WORK/lzma.img' >/dev/null && cmp -s '$WORK/lzma-x/numbers' '$WORK/lzma-src/numbers'"
done
check "-z lzma,lc=3,lp=2 refused (lc + lp > 4)" bash -c "! '$MKFS' --quiet -zlzma,lc=3,lp=2 '$WORK/bad.img' '$src' 2>/dev/null"

# --fsalignblks=N: the image's block count (file and superblock) a multiple of N
"$MKFS" --quiet -U clear -T0 --fsalignblks=8 "$WORK/aligned.img" "$src"
blocks=$(od -An -tu4 -j $((1024 + 0x24)) -N4 "$WORK/aligned.img" | tr -d ' ')
check "--fsalignblks=8: $blocks blocks, the file as long" bash -c \
	"[ $((blocks % 8)) = 0 ] && [ $(stat -c %s "$WORK/aligned.img") = $((blocks * 4096)) ] && '$FSCK' '$WORK/aligned.img' >/dev/null"

# --dsunit=N: every file with a block of data starts on a multiple of N
# blocks (plain, compressed, a duplicate sharing its original's); files
# without a block take no gap; the image reads back the same
mkdir -p "$WORK/ds"
for i in 1 2 3 4 5; do head -c $((i * 5000)) /dev/urandom > "$WORK/ds/f$i"; done
seq 1 50000 > "$WORK/ds/text" && echo tiny > "$WORK/ds/tiny" && cp "$WORK/ds/f3" "$WORK/ds/dup3"
for z in "" "-zlz4hc" "--chunksize=65536"; do
	rm -rf "$WORK/ds-x"
	"$MKFS" --quiet -U clear -T0 --dsunit=16 $z "$WORK/ds.img" "$WORK/ds" &&
		"$FSCK" --extract="$WORK/ds-x" "$WORK/ds.img" >/dev/null
	starts=$(for f in f1 f2 f3 f4 f5 text dup3; do
		"$top_builddir/dump/dump.erofs" -e --path=/$f "$WORK/ds.img" | awk '/^ +0:/ { print $7 }'
	done | tr -d . | tr '\n' ' ')
	check "--dsunit=16 $z: data starts ($starts) on 64 KiB" bash -c \
		"for s in $starts; do [ \$((s % 65536)) = 0 ] || exit 1; done; [ -n '$starts' ] && diff -r '$WORK/ds' '$WORK/ds-x' >/dev/null"
done
"$MKFS" --quiet -U clear -T0 "$WORK/nods.img" "$WORK/ds"
check "--dsunit=1 is no alignment" bash -c \
	"'$MKFS' --quiet -U clear -T0 --dsunit=1 '$WORK/ds1.img' '$WORK/ds' && cmp -s '$WORK/ds1.img' '$WORK/nods.img'"

# --max-extent-bytes=N: no extent of a compressed file decodes to more than
# N bytes, whatever the algorithm or tail packing; under a block: refused
mkdir -p "$WORK/me" && seq 1 200000 > "$WORK/me/text"
for z in "-zlz4hc -C65536" "-zlzma -C131072" "-zzstd -C65536" "-zdeflate -C65536 -Eztailpacking"; do
	rm -rf "$WORK/me-x"
	# shellcheck disable=SC2086
	"$MKFS" --quiet -U clear -T0 $z --max-extent-bytes=16384 "$WORK/me.img" "$WORK/me" &&
		"$FSCK" --extract="$WORK/me-x" "$WORK/me.img" >/dev/null
	longest=$("$top_builddir/dump/dump.erofs" -e --path=/text "$WORK/me.img" |
		awk '/^ +[0-9]+:/ { split($0, a, "|"); split(a[2], b, ":"); if (b[1] + 0 > m) m = b[1] + 0; n++ }
		     END { print n + 0, m + 0 }')
	check "--max-extent-bytes=16384 $z: ${longest% *} extents, the longest ${longest#* } bytes" bash -c \
		"[ ${longest% *} -gt 10 ] && [ ${longest#* } -le 16384 ] && cmp -s '$WORK/me/text' '$WORK/me-x/text'"
done
check "--max-extent-bytes under a block is refused" bash -c \
	"! '$MKFS' --quiet -zlz4 --max-extent-bytes=1000 '$WORK/never.img' '$WORK/me' 2>/dev/null && [ ! -e '$WORK/never.img' ]"

# --root-xattr-isize=N: the root's inline xattrs take N bytes (rounded to 4),
# zero padded, with or without xattrs of its own; readers skip the padding
"$MKFS" --quiet -U clear -T0 "$WORK/rootx-plain.img" "$src"
"$FSCK" --extract="$WORK/rootx-plain" "$WORK/rootx-plain.img" >/dev/null
for n in 100 301; do
	"$MKFS" --quiet -U clear -T0 --root-xattr-isize=$n "$WORK/rootx.img" "$src"
	root_isize=$(( 12 + 4 * ($(od -An -tu2 -j $((1152 + 2)) -N2 "$WORK/rootx.img" | tr -d ' ') - 1) ))
	check "--root-xattr-isize=$n: the root's xattrs take $root_isize bytes" \
		[ "$root_isize" = $(((n + 3) / 4 * 4)) ]
	rm -rf "$WORK/rootx"
	check "--root-xattr-isize=$n: extracts to the tree" bash -c \
		"'$FSCK' --extract='$WORK/rootx' '$WORK/rootx.img' >/dev/null && '$MANIFEST' '$WORK/rootx' | diff -q - <('$MANIFEST' '$WORK/rootx-plain') >/dev/null"
done

# --vmdk-desc=FILE: the image and its extra device as one flat disk, in
# 512-byte sectors, the text erofs-utils writes (numbers masked to compare)
if command -v tar >/dev/null; then
	"$MKFS" --quiet -U clear --tar=i --vmdk-desc="$WORK/idx.vmdk" "$WORK/vidx.img" "$WORK/src.tar"
	dev_blocks=$(od -An -tu4 -j $(( $(od -An -tu2 -j $((1024 + 0x58)) -N2 "$WORK/vidx.img" | tr -d ' ') * 128 + 64 )) -N4 "$WORK/vidx.img" | tr -d ' ')
	img_sectors=$(( $(stat -c %s "$WORK/vidx.img") / 512 ))
	check "--vmdk-desc: the image's extent" grep -qx "RW $img_sectors FLAT \"$WORK/vidx.img\" 0" "$WORK/idx.vmdk"
	check "--vmdk-desc: the tar's extent, as long as the device table says" \
		grep -qx "RW $dev_blocks FLAT \"$WORK/src.tar\" 0" "$WORK/idx.vmdk"
	check "--vmdk-desc: cylinders of 16 heads and 63 sectors" grep -qx \
		"ddb.geometry.cylinders = \"$(( (img_sectors + dev_blocks + 1007) / 1008 ))\"" "$WORK/idx.vmdk"
	ref_mkfs=$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs
	if [ -x "$ref_mkfs" ]; then
		"$ref_mkfs" --quiet -U clear --tar=i --vmdk-desc="$WORK/ref.vmdk" "$WORK/ridx.img" "$WORK/src.tar"
		mask() { sed -E 's/^RW [0-9]+ FLAT "[^"]*"/RW N FLAT "X"/; s/cylinders = "[0-9]+"/cylinders = "N"/' "$1"; }
		check "--vmdk-desc: the same text as erofs-utils', numbers and names aside" \
			cmp -s <(mask "$WORK/idx.vmdk") <(mask "$WORK/ref.vmdk")
	fi
fi

# --offset=N: zeros, then the image; fsck.erofs --offset reads it
head -c 100000 /dev/zero | tr '\0' A >"$WORK/offset.img"
"$MKFS" --quiet -U clear -T0 --offset=8192 "$WORK/offset.img" "$src" &&
	"$MKFS" --quiet -U clear -T0 "$WORK/nooffset.img" "$src"
check "--offset=8192: 8192 zero bytes, then the image as without it" bash -c \
	"cmp -s <(head -c 8192 '$WORK/offset.img') <(head -c 8192 /dev/zero) &&
	 cmp -s <(tail -c +8193 '$WORK/offset.img') '$WORK/nooffset.img'"
check "--offset=8192: fsck.erofs --offset=8192 checks it" "$FSCK" --offset=8192 "$WORK/offset.img"

# a --compress-hints size that is not a multiple of the block size: warned
# about by file and line, and the line uses -C's size (erofs-utils' leniency)
printf '4096 \\.txt$\n6000 \\.log$\n' >"$WORK/odd-hints"
printf '4096 \\.txt$\n65536 \\.log$\n' >"$WORK/c-hints"
"$MKFS" --quiet -U clear -T0 -zlz4hc -C65536 --compress-hints="$WORK/odd-hints" "$WORK/odd.img" "$src" \
	2>"$WORK/odd.err" && "$MKFS" --quiet -U clear -T0 -zlz4hc -C65536 \
	--compress-hints="$WORK/c-hints" "$WORK/c.img" "$src"
check "--compress-hints: an odd size is warned about by file and line" \
	grep -q "odd-hints:2: pcluster size 6000 is not a multiple of the block size 4096" "$WORK/odd.err"
check "--compress-hints: the odd line uses -C's size" cmp -s "$WORK/odd.img" "$WORK/c.img"

# an option or -E word we lack fails the build, naming it, and writes nothing
# (erofs-utils options we refuse are named too: --s3, --oci, --gzinfo)
for argv in "--bogus-option" "-E bogus-word" "-E fragments,bogus-word -zlz4" "--s3=bucket" "--oci" \
	    "--gzinfo" "--gzinfo=layer.zinfo" "--zD=2" "--MZ=q" "--max-extent-bytes=-1048576" \
	    "--clean=rvsp" "--incremental=data"; do
	word=${argv#* }; word=${word#-E }; word=${word%% *}; word=${word#--}; word=${word%%=*}
	word=${word#fragments,}
	rm -f "$WORK/never.img"
	rc=0
	"$MKFS" $argv "$WORK/never.img" "$src" 2>"$WORK/never.err" || rc=$?
	check "$argv: exit 1, naming $word" bash -c "[ $rc = 1 ] && grep -q -- '$word' '$WORK/never.err'"
	check "$argv: no image left" [ ! -e "$WORK/never.img" ]
done
rc=0
"$MKFS" "$WORK/never.img" "$src" --bogus-option 2>"$WORK/never.err" || rc=$?
check "an unknown option after the positionals: exit 1, no image" \
	bash -c "[ $rc = 1 ] && [ ! -e '$WORK/never.img' ] && grep -q bogus-option '$WORK/never.err'"

# --version as scripts probing erofs-utils read it: the release after
# "erofs-utils) ", and the algorithms built in
for prog in "$MKFS" "$FSCK" "$DUMP"; do
	name=$(basename "$prog")
	check "$name --version: ours, then what sed reads as erofs-utils 1.9.4" bash -c \
		"'$prog' --version | head -1 | grep -qE '^$name \\(erofs-forge [0-9.]+, compatible with erofs-utils\\) 1\\.9\\.4\$' &&
		 [ \"\$('$prog' --version | head -1 | sed 's/.*erofs-utils) *//')\" = 1.9.4 ]"
done
check "mkfs.erofs --version lists the compressors" bash -c \
	"'$MKFS' --version | grep -qx 'available compressors: lz4, lz4hc, lzma, deflate, zstd'"
check "fsck.erofs --version lists the decompressors" bash -c \
	"'$FSCK' --version | grep -qx 'available decompressors: lz4, lz4hc, lzma, deflate, zstd'"
# the spellings build scripts grep --help for (containerd: --tar=)
for spelling in '-b#' '-zX[,level=Y]' '-z X[,Y][:...]' '--tar=X' '-EX[,...]' '-h, --help'; do
	check "--help spells $spelling" bash -c "'$MKFS' --help | grep -qF -- '$spelling'"
done
check "-h prints the help" bash -c "'$MKFS' -h | grep -q '^Usage: mkfs.erofs'"
"$MKFS" --help >"$WORK/help.txt"
undocumented=0
for opt in $(grep -oE -- '(^| )--?[a-zA-Z][a-zA-Z-]*' "$WORK/help.txt" | sort -u); do
	if ! grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$top_srcdir/man/mkfs.erofs.8"; then
		fail "man page lacks $opt from --help"
		undocumented=1
	fi
done
[ "$undocumented" = 1 ] || pass "man page covers every option of --help"
# progress: one line on a terminal for the whole build, ending with every
# file done; nothing with --quiet, nothing when stderr is not a terminal
if command -v script >/dev/null; then
	prog_src=$WORK/progress-src
	mkdir -p "$prog_src/d"
	for i in $(seq 1 20); do seq 1 $((i * 1000)) >"$prog_src/d/f$i"; done
	script -qefc "$MKFS -z lz4hc $WORK/progress.img $prog_src" /dev/null >"$WORK/progress.tty" 2>&1
	last=$(tr '\r' '\n' <"$WORK/progress.tty" | grep 'MiB read' | tail -1)
	if [[ $last =~ mkfs.erofs:\ 20/20\ files,\ [0-9.]+/[0-9.]+\ MiB\ read,\ [0-9.]+\ MiB\ written,\ [0-9.]+\ MiB/s ]]; then
		pass "progress: one line on a terminal, ending at 20/20 files"
	else
		fail "progress: last line '$last'"
	fi
	script -qefc "$MKFS --quiet $WORK/progress.img $prog_src" /dev/null >"$WORK/progress.q" 2>&1
	"$MKFS" "$WORK/progress.img" "$prog_src" 2>"$WORK/progress.err" >/dev/null
	if grep -q 'MiB read' "$WORK/progress.q" "$WORK/progress.err"; then
		fail "progress shown with --quiet or without a terminal"
	else
		pass "progress: silent with --quiet and when stderr is not a terminal"
	fi
else
	echo "note: script(1) missing: progress line not checked"
fi

finish
