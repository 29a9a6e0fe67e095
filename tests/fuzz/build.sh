#!/bin/bash
# Builds the libFuzzer harnesses (fuzz-reader, fuzz-extract, fuzz-fsck, fuzz-dump) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, compiling the library
# sources they need directly (no configure, nothing written in the tree).
#
#   tests/fuzz/build.sh [OUTDIR]      default: $FUZZ_OUT or /tmp/erofs-fuzz
#
# Binaries land in OUTDIR/bin.  CC (default clang) and EXTRA_CFLAGS may be
# set.  Needs Debian's clang and libclang-rt-14-dev (installed when missing
# and running as root), liblz4-dev and libxxhash-dev.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-${FUZZ_OUT:-/tmp/erofs-fuzz}}
CC=${CC:-clang}

need_pkgs=()
command -v "$CC" >/dev/null 2>&1 || need_pkgs+=(clang)
# the fuzzer runtime ships in libclang-rt-*-dev
if command -v "$CC" >/dev/null 2>&1; then
	rt=$("$CC" -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
	[ -f "$rt" ] || rt=$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)
	[ -n "$rt" ] && [ -f "$rt" ] || need_pkgs+=(libclang-rt-14-dev)
fi
[ -f /usr/include/lz4.h ] || need_pkgs+=(liblz4-dev)
[ -f /usr/include/xxhash.h ] || need_pkgs+=(libxxhash-dev)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		echo "build.sh: installing ${need_pkgs[*]}"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
	else
		echo "build.sh: missing ${need_pkgs[*]} (apt-get install -y ${need_pkgs[*]})" >&2
		exit 1
	fi
fi

mkdir -p "$out/bin" "$out/obj"
# the few settings the library expects from configure's config.h
cat >"$out/obj/config.h" <<'CFG'
#define _GNU_SOURCE 1
#define PACKAGE_VERSION "fuzz"
CFG

# the reader, its compressed half, the extractor, fsck's check and what they use
lib_sources=(lib/reader.c lib/rxattr.c lib/zread.c lib/extract.c lib/check.c lib/nidtab.c lib/ondisk.c
	lib/crc32c.c lib/dir.c lib/rdevice.c lib/kernel.c)
# the check's other files and its job queue (fsck --workers)
lib_sources+=(lib/check-data.c lib/check-dirs.c lib/check-final.c lib/fsckq.c lib/lookup.c)
lib_sources+=(lib/fsops.c)	# erofsfuse's operations (fuzz-fsops)
# the decoders and the algorithm table (zread.c), the codec ids (kernel.c), and
# the front ends' image opening and numbers (fsck/main.c, dump/main.c)
lib_sources+=(lib/zdecode.c lib/compalg.c lib/codec.c lib/codec_lz4.c lib/codec_lzma.c
	lib/codec_deflate.c lib/codec_zstd.c lib/rdopen.c lib/cmdline.c lib/io.c)
# 48-bit and metabox images: directories, the metabox, extent records, compression settings
lib_sources+=(lib/rdir.c lib/rmetabox.c lib/zextread.c lib/zconfig.c)
# the metadata block cache and the lcluster index decoder
lib_sources+=(lib/rmcache.c lib/zindexread.c)
cflags=(-g -O1 -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Wno-unused-parameter
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-include "$out/obj/config.h" -I"$top/include" ${EXTRA_CFLAGS:-})
libs=(-llz4 -lxxhash -lpthread -llzma -lz -ldeflate -lzstd)

# dump.erofs's library half, for fuzz-dump
dump_sources=(lib/dumpsb.c lib/dumpwalk.c lib/dumpstat.c lib/dumpinode.c lib/escape.c)

for h in fuzz-reader fuzz-extract fuzz-fsck fuzz-dump fuzz-fsops; do
	srcs=("$here/$h.c")
	for s in "${lib_sources[@]}"; do srcs+=("$top/$s"); done
	if [ "$h" = fuzz-dump ] || [ "$h" = fuzz-fsck ]; then	# fsck -p names features as dump -s
		for s in "${dump_sources[@]}"; do srcs+=("$top/$s"); done
	fi
	"$CC" "${cflags[@]}" "${srcs[@]}" "${libs[@]}" -o "$out/bin/$h.new"
	mv "$out/bin/$h.new" "$out/bin/$h"
	echo "build.sh: $out/bin/$h"
done

# the tar source (fuzz-tar.c, run-tar.sh): parser, stream decoders, tree builder
tar_sources=(lib/tar.c lib/tarpax.c lib/tario.c lib/tarsrc.c lib/tree.c lib/xattr.c lib/scan.c lib/android.c
	lib/fsconfig.c lib/fsconfig_tables.c lib/selinux.c lib/diag.c lib/io.c lib/ondisk.c lib/crc32c.c
	lib/escape.c)
srcs=("$here/fuzz-tar.c")
for s in "${tar_sources[@]}"; do srcs+=("$top/$s"); done
"$CC" "${cflags[@]}" "${srcs[@]}" -lz -llzma -lzstd -lxxhash -o "$out/bin/fuzz-tar.new"
mv "$out/bin/fuzz-tar.new" "$out/bin/fuzz-tar"
echo "build.sh: $out/bin/fuzz-tar"
