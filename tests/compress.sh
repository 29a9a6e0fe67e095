#!/bin/bash
# Compressed images: every layout round-trips through a second, independent
# reader (tests/second-reader.sh) and ours, the image is the same for every
# worker count, compressible data shrinks and incompressible data stays plain.
. "$(dirname "$0")/lib.sh"
require_root

tree=$WORK/tree
bash "$GEN_TREE" "$tree"
uuid=3c1b6f0e-2a5d-4e8b-9c7a-1f2e3d4c5b6a

plain_size=$("$MKFS" --quiet -U "$uuid" "$WORK/plain.img" "$tree" && stat -c %s "$WORK/plain.img")
for config in "-z lz4" "-z lz4hc" "-z lz4hc,12" "-z lz4hc,1 -E legacy-compress" \
	"-z lz4 -C 16384" "-z lz4hc -C 65536" "-z lz4hc -C 1048576 -E legacy-compress" \
	"-z lz4hc -E ztailpacking" "-z lz4 -E ztailpacking,legacy-compress" \
	"-z lz4hc -C 65536 -E ztailpacking" "-z lz4hc -C 65536 -E ztailpacking,legacy-compress" \
	"-z lz4hc -E fragments" "-z lz4hc -C 65536 -E fragments=131072,ztailpacking" \
	"-z lz4 -E all-fragments,legacy-compress" \
	"-z lzma -C 65536" "-z lzma,level=100,dictsize=65536 -C 131072 -E fragments,ztailpacking" \
	"-z deflate" "-z deflate,9 -C 65536 -E ztailpacking,legacy-compress" "-z deflate -E fragments" \
	"-z zstd" "-z zstd,19 -C 65536 -E ztailpacking" "-z zstd -C 1048576 -E fragments,ztailpacking" \
	"-z zstd,level=1 -C 65536 -E dedupe,fragments,ztailpacking"; do
	label=${config// /}
	img=$WORK/$label.img
	# shellcheck disable=SC2086 # config is a list of options
	if ! "$MKFS" --quiet -U "$uuid" --workers=1 $config "$img" "$tree"; then
		fail "$config: mkfs.erofs failed"
		continue
	fi
	# shellcheck disable=SC2086
	"$MKFS" --quiet -U "$uuid" --workers=3 $config "$WORK/w3.img" "$tree"
	if cmp -s "$img" "$WORK/w3.img"; then
		pass "$config: --workers=1 and --workers=3 give the same image"
	else
		fail "$config: the image depends on the worker count"
	fi
	size=$(stat -c %s "$img")
	if [ "$size" -lt $((plain_size / 4)) ]; then
		pass "$config: $size bytes, plain $plain_size"
	else
		fail "$config: $size bytes is not well below the plain image's $plain_size"
	fi
	ours_extract "$label" "$img" "$tree"
	# shellcheck disable=SC2086
	reader2_reads $config && reader2_extract "$label" "$img" "$tree"
done

# --compress-hints: first match wins; 0 stores plain; bigger pclusters per path
cat >"$WORK/hints" <<'HINTS'
# pcluster  [algorithm]  regex
0           \.bin$
65536 0     ^sizes/text
16384       ^big-dir/
HINTS
"$MKFS" --quiet -U "$uuid" -z lz4hc --compress-hints="$WORK/hints" "$WORK/hints.img" "$tree"
layout_of() { /usr/bin/dump.erofs --path="$1" "$2" | sed -n 's/.*Layout: \([0-9]\).*/\1/p'; }
if [ -x /usr/bin/dump.erofs ]; then
	if [ "$(layout_of /sizes/text-5m "$WORK/hints.img")" = 3 ] &&
		[ "$(layout_of /same/a/copy "$WORK/hints.img")" = 0 ]; then
		pass "--compress-hints: text compressed, random copy stays plain"
	else
		fail "--compress-hints: unexpected layouts"
	fi
fi
cp "$tree/sizes/text-5m" "$WORK/text.bin"
mkdir "$WORK/hinted" && mv "$WORK/text.bin" "$WORK/hinted/"
"$MKFS" --quiet -z lz4hc --compress-hints="$WORK/hints" "$WORK/bin.img" "$WORK/hinted"
if [ "$(stat -c %s "$WORK/bin.img")" -gt 5000000 ]; then
	pass "--compress-hints: a 0 hint stores a compressible file plain"
else
	fail "--compress-hints: the 0 hint was ignored"
fi
reader2_extract hints "$WORK/hints.img" "$tree"
printf '4096 1 x\n' >"$WORK/bad-hints"
expect_failure "hint naming a second algorithm -z lacks" "algorithm index 1, but -z lists 1 algorithm" \
	"$MKFS" -z lz4 --compress-hints="$WORK/bad-hints" "$WORK/b.img" "$tree"
printf '4096 7 x\n' >"$WORK/bad-hints"
expect_failure "hint algorithm index out of range" "bad-hints:1: bad hint" \
	"$MKFS" -z lz4 --compress-hints="$WORK/bad-hints" "$WORK/b.img" "$tree"

# several algorithms: hints send paths to the second one by index
printf '16384 1 ^sizes/\n' >"$WORK/alg-hints"
"$MKFS" --quiet -U "$uuid" -z lz4hc,12:lz4 --compress-hints="$WORK/alg-hints" "$WORK/two.img" "$tree"
printf '16384 0 ^sizes/\n' >"$WORK/alg0-hints"
"$MKFS" --quiet -U "$uuid" -z lz4hc,12:lz4 --compress-hints="$WORK/alg0-hints" "$WORK/one.img" "$tree"
"$MKFS" --quiet -U "$uuid" --workers=3 -z lz4hc,12:lz4 --compress-hints="$WORK/alg-hints" \
	"$WORK/two3.img" "$tree"
if cmp -s "$WORK/two.img" "$WORK/two3.img" && ! cmp -s "$WORK/two.img" "$WORK/one.img"; then
	pass "-z lz4hc,12:lz4: hinted files use the other algorithm, same for every worker count"
else
	fail "-z lz4hc,12:lz4: the second algorithm was not used as hinted"
fi
reader2_extract two-algorithms "$WORK/two.img" "$tree"

# two algorithms of different formats: each file's map header names its
# own, the superblock lists both (u1 at 0x54) and has a record for each
"$MKFS" --quiet -U "$uuid" -z lz4hc:lzma -C 65536 --compress-hints="$WORK/alg-hints" \
	"$WORK/lz-lzma.img" "$tree"
"$MKFS" --quiet -U "$uuid" --workers=3 -z lz4hc:lzma -C 65536 --compress-hints="$WORK/alg-hints" \
	"$WORK/lz-lzma3.img" "$tree"
algs=$(od -An -tu2 -j $((1024 + 0x54)) -N2 "$WORK/lz-lzma.img" | tr -d ' ')
if [ "$algs" = 3 ] && cmp -s "$WORK/lz-lzma.img" "$WORK/lz-lzma3.img"; then
	pass "-z lz4hc:lzma: the superblock lists LZ4 and LZMA; same image for every worker count"
else
	fail "-z lz4hc:lzma: algorithms 0x$(printf %x "$algs") or the image depends on the workers"
fi
ours_extract lz4hc-lzma "$WORK/lz-lzma.img" "$tree"
reader2_reads -z lz4hc:lzma && reader2_extract lz4hc-lzma "$WORK/lz-lzma.img" "$tree"
printf '16384 1 .\n' >"$WORK/all1-hints"
"$MKFS" --quiet -U "$uuid" -z zstd:deflate --compress-hints="$WORK/all1-hints" "$WORK/defl.img" "$tree"
algs=$(od -An -tu2 -j $((1024 + 0x54)) -N2 "$WORK/defl.img" | tr -d ' ')
if [ "$algs" = 4 ]; then
	pass "-z zstd:deflate, every file hinted to deflate: only DEFLATE listed"
else
	fail "-z zstd:deflate with every file on deflate: algorithms 0x$(printf %x "$algs")"
fi
reader2_reads -z zstd:deflate && reader2_extract zstd-deflate "$WORK/defl.img" "$tree"

# the superblock's algorithm list and config records are the bytes
# erofs-utils 1.9.4 writes for the same options (erofs_fs.h's layout)
REF_MKFS=$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs
if [ -x "$REF_MKFS" ]; then
	mkdir "$WORK/cfgsrc" && head -c 300000 "$tree/sizes/text-5m" >"$WORK/cfgsrc/text"
	for config in "-z lzma" "-z lzma -C 65536" "-z lzma,dictsize=1048576" "-z deflate -C 65536" \
		"-z zstd" "-z zstd -C 1048576" "-z zstd,dictsize=65536 -C 16384"; do
		# shellcheck disable=SC2086
		"$MKFS" --quiet -U "$uuid" $config "$WORK/ours.img" "$WORK/cfgsrc" &&
			"$REF_MKFS" --quiet -U "$uuid" $config "$WORK/theirs.img" "$WORK/cfgsrc" >/dev/null 2>&1
		sb() { od -An -tx1 -j "$2" -N "$3" "$1"; }
		if [ "$(sb "$WORK/ours.img" $((1024 + 0x50)) 8)" = "$(sb "$WORK/theirs.img" $((1024 + 0x50)) 8)" ] &&
			[ "$(sb "$WORK/ours.img" 1152 16)" = "$(sb "$WORK/theirs.img" 1152 16)" ]; then
			pass "$config: features, algorithms and config record as erofs-utils writes them"
		else
			fail "$config: superblock differs from erofs-utils': $(sb "$WORK/ours.img" 1152 16) / $(sb "$WORK/theirs.img" 1152 16)"
		fi
	done
else
	echo "note: no erofs-utils mkfs.erofs: config records not compared"
fi
# a hint size not a multiple of the block size: warned about, the line
# takes -C's size (erofs-utils' leniency; tests/mkfs-options.sh compares)
printf '5000 x\n' >"$WORK/bad-hints"
if "$MKFS" --quiet -z lz4 --compress-hints="$WORK/bad-hints" "$WORK/b.img" "$tree" 2>"$WORK/b.err" &&
   grep -q "bad-hints:1: pcluster size 5000 is not a multiple" "$WORK/b.err"; then
	pass "hint size not a block multiple: warned, built"
else
	fail "hint size not a block multiple: $(head -1 "$WORK/b.err")"
fi
expect_failure "hints without -z" "compress-hints needs -z" \
	"$MKFS" --compress-hints="$WORK/hints" "$WORK/b.img" "$tree"

# ztailpacking makes small compressible files smaller than their plain tails
mkdir "$WORK/small"
for i in $(seq 1 200); do
	head -c $((1000 + i * 37)) "$tree/sizes/text-5m" >"$WORK/small/f$i"
done
"$MKFS" --quiet -z lz4hc "$WORK/small-plain.img" "$WORK/small"
"$MKFS" --quiet -z lz4hc -E ztailpacking "$WORK/small-tail.img" "$WORK/small"
if [ "$(stat -c %s "$WORK/small-tail.img")" -lt "$(stat -c %s "$WORK/small-plain.img")" ]; then
	pass "ztailpacking: $(stat -c %s "$WORK/small-tail.img") < $(stat -c %s "$WORK/small-plain.img") bytes"
else
	fail "ztailpacking did not shrink an image of small compressible files"
fi

# fragments: tails of many small compressible files packed together take
# less room than inline tails; the superblock names the packed inode
"$MKFS" --quiet -z lz4hc -E fragments "$WORK/small-frag.img" "$WORK/small"
if [ "$(stat -c %s "$WORK/small-frag.img")" -lt "$(stat -c %s "$WORK/small-tail.img")" ]; then
	pass "fragments: $(stat -c %s "$WORK/small-frag.img") < ztailpacking's $(stat -c %s "$WORK/small-tail.img") bytes"
else
	fail "fragments did not beat ztailpacking on small compressible files"
fi
le_at() { od -An -t u"$2" -j "$1" -N "$2" "$3" | tr -d ' '; }
incompat=$(le_at $((1024 + 0x50)) 4 "$WORK/small-frag.img")
packed_nid=$(le_at $((1024 + 0x60)) 8 "$WORK/small-frag.img")
if [ $((incompat & 0x20)) -ne 0 ] && [ "$packed_nid" -gt 0 ]; then
	pass "fragments: FRAGMENTS feature set, packed inode at nid $packed_nid"
else
	fail "fragments: feature 0x$(printf %x "$incompat"), packed nid $packed_nid"
fi
incompat=$(le_at $((1024 + 0x50)) 4 "$WORK/small-tail.img")
if [ $((incompat & 0x20)) -eq 0 ]; then
	pass "no fragments asked: no FRAGMENTS feature"
else
	fail "the FRAGMENTS feature is set without -E fragments"
fi
# identical small files: one fragment for all of them
mkdir "$WORK/same"
for i in $(seq 1 50); do cp "$WORK/small/f50" "$WORK/same/c$i"; done
if "$MKFS" -z lz4hc -E fragments "$WORK/same.img" "$WORK/same" | grep -q "49 identical ones stored once"; then
	pass "fragments: 50 identical small files stored once"
else
	fail "fragments: identical small files were not stored once"
fi

# incompressible data: random files stay (nearly) their own size
mkdir "$WORK/random"
head -c 3000000 /dev/urandom >"$WORK/random/r"
"$MKFS" --quiet -z lz4hc "$WORK/random.img" "$WORK/random"
size=$(stat -c %s "$WORK/random.img")
if [ "$size" -le $((3000000 + 3 * 4096)) ]; then
	pass "incompressible data costs no more than plain ($size bytes)"
else
	fail "incompressible data grew to $size bytes"
fi

# size against Debian's mkfs.erofs (erofs-utils 1.5) on a real tree, same run:
# ours must not be larger at the same settings
for real in /usr/share/doc /usr/lib/python3; do
	[ -x /usr/bin/mkfs.erofs ] && [ -d "$real" ] || continue
	for config in "" "-z lz4" "-z lz4hc" "-z lz4hc -E ztailpacking" "-z lz4hc -C 65536 -E ztailpacking"; do
		# shellcheck disable=SC2086
		"$MKFS" --quiet -U "$uuid" $config "$WORK/ours.img" "$real"
		# shellcheck disable=SC2086
		/usr/bin/mkfs.erofs --quiet -U "$uuid" $config "$WORK/theirs.img" "$real" >/dev/null 2>&1 || continue
		ours=$(stat -c %s "$WORK/ours.img") theirs=$(stat -c %s "$WORK/theirs.img")
		if [ "$ours" -le "$theirs" ]; then
			pass "$real ${config:-uncompressed}: $ours <= erofs-utils' $theirs bytes"
		else
			fail "$real ${config:-uncompressed}: $ours > erofs-utils' $theirs bytes"
		fi
	done
done

# bad compression options
expect_failure "unknown algorithm" "-z brotli: unknown compressor" "$MKFS" -z brotli "$WORK/b.img" "$tree"
expect_failure "an unknown second algorithm" "-z lzo: unknown compressor" "$MKFS" -z lz4:lzo "$WORK/b.img" "$tree"
expect_failure "zstd level" "invalid compression level '23'" "$MKFS" -z zstd,23 "$WORK/b.img" "$tree"
expect_failure "lzma level between normal and extreme" "level 10: want 0-9 or 100-109" \
	"$MKFS" -z lzma,level=10 "$WORK/b.img" "$tree"
expect_failure "deflate window" "dictsize 4096: only 32768" \
	"$MKFS" -z deflate,dictsize=4096 "$WORK/b.img" "$tree"
expect_failure "zstd window" "want a power of two from 1024 to 1048576" \
	"$MKFS" -z zstd,dictsize=3000 "$WORK/b.img" "$tree"
expect_failure "lzma dictionary" "want 4096 to 8388608" \
	"$MKFS" -z lzma,dictsize=16m "$WORK/b.img" "$tree"
expect_failure "lz4 level" "-z lz4: takes no level" "$MKFS" -z lz4,3 "$WORK/b.img" "$tree"
expect_failure "unknown -z option" "unknown option 'lc'" \
	"$MKFS" -z zstd,lc=3 "$WORK/b.img" "$tree"
expect_failure "too many algorithms" "at most 4 algorithms" "$MKFS" -z lz4:lz4:lz4:lz4:lz4 "$WORK/b.img" "$tree"
expect_failure "lz4hc level" "invalid compression level '13'" "$MKFS" -z lz4hc,13 "$WORK/b.img" "$tree"
expect_failure "pcluster not a block multiple" "multiple of the block size" "$MKFS" -z lz4 -C 5000 "$WORK/b.img" "$tree"
expect_failure "pcluster too big" "invalid pcluster size" "$MKFS" -z lz4 -C 2097152 "$WORK/b.img" "$tree"
expect_failure "fragments without -z" "fragments needs -z" "$MKFS" -E fragments "$WORK/b.img" "$tree"
expect_failure "packed pcluster not a block multiple" "fragments=5000: the pcluster size" \
	"$MKFS" -z lz4 -E fragments=5000 "$WORK/b.img" "$tree"
# sub-page blocks with -z are read from Linux 6.8 on (tests/compress-subpage.sh)
expect_failure "compression with small blocks for 6.1" "needs Linux 6.8" \
	"$MKFS" --max-kernel=6.1 -z lz4 -b 1024 "$WORK/b.img" "$tree"
# the summary reports what a feature really saved: copies of small files
# that all go to the packed inode save their fragments, not blocks
mkdir "$WORK/frag-dups"
for i in $(seq 1 10); do head -c 8192 < <(yes 'duplicate text line') >"$WORK/frag-dups/c$i"; done
"$MKFS" -z lz4hc -E fragments "$WORK/frag-dups.img" "$WORK/frag-dups" >"$WORK/frag-dups.out"
if grep -q ' 0 bytes saved' "$WORK/frag-dups.out"; then
	fail "summary claims a saving of 0 bytes: $(grep ' 0 bytes saved' "$WORK/frag-dups.out")"
elif grep -q '9 duplicate files share their data: 73728 bytes saved' "$WORK/frag-dups.out"; then
	pass "summary: the 9 copies' fragments reported as saved, no empty saving"
else
	fail "summary: the copies' saving is not reported: $(cat "$WORK/frag-dups.out")"
fi

finish
