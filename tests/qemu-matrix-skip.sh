#!/bin/bash
# The QEMU matrix skips a line whose mkfs options the mkfs under test does
# not offer, including each algorithm of -z (qemu-tests/lib.sh,
# mkfs_lacks_option): the lzma, deflate and zstd lines (EXPECT ours61) must
# SKIP with an mkfs that only names lz4 and lz4hc, and run with one that
# names them (erofs-utils' spelling of the help text).  Once -z stopped at
# the option letter, so these lines failed in mkfs instead of skipping.
. "$(dirname "$0")/lib.sh"

# fake mkfs binaries: only their --help matters
cat >"$WORK/mkfs-lz4" <<'EOF'
#!/bin/sh
cat <<'HELP'
 -z ALGORITHM[,LEVEL]    compress with lz4 or lz4hc (LEVEL 0..12, default 9);
 -C BYTES                pcluster size
 -E OPTIONS              extended options: ztailpacking, fragments, dedupe,
                         legacy-compress
 -T SECONDS              fixed UNIX time
 --compress-hints=FILE   per-file pcluster sizes
 --workers=N             threads
HELP
EOF
cat >"$WORK/mkfs-all" <<'EOF'
#!/bin/sh
cat <<'HELP'
 -zX[,level=Y]         X=compressor (Y=compression level, optional)
    [:...]             supported compressors and their option ranges are:
                         lz4
                         lz4hc    [0-12, default 9]
                         lzma     [0-9, default 6]
                         deflate  [0-9, default 1]
                         zstd     [0-22, default 3]
 -C#                    specify the size of compress physical cluster
 -E X[,...]             ztailpacking fragments dedupe legacy-compress
 -T#                    specify a fixed UNIX timestamp
 -UX                    use a given filesystem UUID
 --compress-hints=X     specify a file to configure per-file compression
HELP
EOF
chmod +x "$WORK/mkfs-lz4" "$WORK/mkfs-all"

msg() { :; }
die() { echo "die: $*" >&2; exit 2; }
here=$top_srcdir/qemu-tests
# shellcheck source=../qemu-tests/lib.sh
. "$here/lib.sh"

# expect MKFS WANT ARGS...: WANT is "offered" or what mkfs_lacks_option names
expect() {
	local mkfs=$1 want=$2 got
	shift 2
	got=$(MKFS=$WORK/$mkfs mkfs_lacks_option "$@") || got=offered
	if [ "$got" = "$want" ]; then
		pass "$mkfs [$*]: $want"
	else
		fail "$mkfs [$*]: got '$got', want '$want'"
	fi
}

expect mkfs-lz4 offered -z lz4hc
expect mkfs-lz4 offered -zlz4hc,12
expect mkfs-lz4 offered -z lz4hc,12:lz4 -C 65536 -E fragments
expect mkfs-lz4 "-z lzma" -z lzma
expect mkfs-lz4 "-z lzma" -zlzma,9 -C 1048576
expect mkfs-lz4 "-z deflate" -T0 -z deflate -C 65536
expect mkfs-lz4 "-z zstd" -z zstd,19 -E dedupe
expect mkfs-lz4 "-z zstd" -z lz4hc:zstd --compress-hints=x
expect mkfs-all offered -z lzma,9 -C 1048576 -E fragments,ztailpacking
expect mkfs-all offered -zdeflate
expect mkfs-all offered -z lz4hc:zstd --compress-hints=x
expect mkfs-all "--workers" -z lzma --workers=2

# every ours61 line of the matrix skips with the lz4-only mkfs, runs with the other
n=0 bad=0
while read -r name tree exp args; do
	[[ ,$exp, == *,ours61,* ]] || continue
	n=$((n + 1))
	# shellcheck disable=SC2086 # ARGS are words by design
	MKFS=$WORK/mkfs-lz4 mkfs_lacks_option $args >/dev/null ||
		{ fail "matrix line $name ($tree) would not skip with an lz4-only mkfs"; bad=1; }
	# shellcheck disable=SC2086
	! MKFS=$WORK/mkfs-all mkfs_lacks_option $args >/dev/null ||
		{ fail "matrix line $name ($tree) would skip with an mkfs that has its algorithm"; bad=1; }
done < <(sed -e 's/#.*//' "$here/matrix")
[ "$n" -ge 27 ] || { fail "only $n ours61 lines in the matrix"; bad=1; }
[ "$bad" = 1 ] || pass "$n ours61 matrix lines skip without their algorithm"
finish
