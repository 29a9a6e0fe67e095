#!/bin/bash
# Builds the libFuzzer harnesses (fuzz-reader, fuzz-extract, fuzz-fsck, fuzz-dump, fuzz-fsops,
# fuzz-api: liberofs-forge's public calls) with clang,
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

harnesses=(fuzz-reader fuzz-extract fuzz-fsck fuzz-dump fuzz-fsops fuzz-api fuzz-tar)
# nothing to do when every harness is newer than every source, header and this
# script, and was built with today's CC and EXTRA_CFLAGS: run.sh and
# run-tar.sh call build.sh on each start, and fuzz-smoke.sh builds before it
# seeds through run.sh
up_to_date=1
[ "$(cat "$out/bin/built-with" 2>/dev/null)" = "$CC ${EXTRA_CFLAGS:-}" ] || up_to_date=0
for h in "${harnesses[@]}"; do
	if [ ! -x "$out/bin/$h" ] || [ -n "$(find "$top/lib" "$top/include" "$top/dump" "$top/fsck" "$here" \
		-newer "$out/bin/$h" \( -name '*.[ch]' -o -name build.sh \) 2>/dev/null | head -1)" ]; then
		up_to_date=0
		break
	fi
done
if [ "$up_to_date" = 1 ]; then
	echo "build.sh: $out/bin is up to date"
	exit 0
fi

mkdir -p "$out/bin" "$out/obj"
# the few settings the library expects from configure's config.h
cat >"$out/obj/config.h" <<'CFG'
#define _GNU_SOURCE 1
#define PACKAGE_VERSION "fuzz"
CFG

# the layers under the reading tools: common, the codecs (the decoders and
# the algorithm table), the reader with liberofs-forge's public calls, the
# check, erofsfuse's operations; none of the mkfs layers (source, build).
# Not diag.c: the harnesses print through fuzz-diag.c's quieter versions.
lib_sources=()
for layer in common codec read check fsops; do
	for f in "$top"/lib/$layer/*.c; do
		[ "$f" = "$top/lib/common/diag.c" ] || lib_sources+=("lib/$layer/$(basename "$f")")
	done
done
cflags=(-g -O1 -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Wno-unused-parameter
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-include "$out/obj/config.h" -I"$top/include" ${EXTRA_CFLAGS:-})
libs=(-llz4 -lxxhash -lpthread -llzma -lz -ldeflate -lzstd -lnettle)

# dump.erofs's library half, for fuzz-dump
dump_sources=(lib/dump/dumpsb.c lib/dump/dumpwalk.c lib/dump/dumpstat.c lib/dump/dumpinode.c)

# the tar source (fuzz-tar.c, run-tar.sh): parser, stream decoders, tree
# builder; and the image source (rebuild mode, --incremental's copy-up),
# which reads layers through the reader
tar_sources=(lib/source/tar.c lib/source/tarpax.c lib/source/tario.c lib/source/tarsrc.c lib/source/namedtree.c lib/source/tree.c lib/source/xattr.c lib/source/scan.c lib/source/android.c
	lib/source/fsconfig.c lib/source/fsconfig_tables.c lib/source/selinux.c lib/source/imgsrc.c lib/source/imglayer.c lib/source/copyup.c lib/source/nidmap.c lib/source/imgbase.c lib/common/diag.c)
for layer in common codec read; do
	for f in "$top"/lib/$layer/*.c; do
		[ "$f" = "$top/lib/common/diag.c" ] || tar_sources+=("lib/$layer/$(basename "$f")")
	done
done

# what the harnesses but fuzz-tar share: the walk and the quiet diagnostics
walk_sources=(tests/fuzz/fuzz-walk.c tests/fuzz/fuzz-diag.c)

# each source is compiled once, the harnesses' own too, on every core
obj_of() { local o=${1//\//_}; echo "$out/obj/${o%.c}.o"; }
all_sources=$(printf '%s\n' "${lib_sources[@]}" "${dump_sources[@]}" "${tar_sources[@]}" "${walk_sources[@]}" \
	$(for h in "${harnesses[@]}"; do echo "tests/fuzz/$h.c"; done) | sort -u)
# a failed compile leaves a mark: the status of a background job that ends
# before the loop waits for it may never reach a wait
rm -f "$out/obj/failed"
compile() { # SOURCE
	local o
	o=$(obj_of "$1")
	{ "$CC" "${cflags[@]}" -c "$top/$1" -o "$o.new" && mv "$o.new" "$o"; } || echo "$1" >>"$out/obj/failed"
}
for s in $all_sources; do
	while [ "$(jobs -pr | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
	compile "$s" &
done
wait
if [ -e "$out/obj/failed" ]; then
	echo "build.sh: did not compile: $(tr '\n' ' ' <"$out/obj/failed")" >&2
	exit 1
fi

link() { # HARNESS SOURCE...
	local h=$1 objs=() s
	shift
	for s in "$@"; do objs+=("$(obj_of "$s")"); done
	"$CC" "${cflags[@]}" "${objs[@]}" "${libs[@]}" -o "$out/bin/$h.new"
	mv "$out/bin/$h.new" "$out/bin/$h"
	echo "build.sh: $out/bin/$h"
}
for h in fuzz-reader fuzz-extract fuzz-fsck fuzz-dump fuzz-fsops fuzz-api; do
	srcs=("tests/fuzz/$h.c" "${walk_sources[@]}" "${lib_sources[@]}")
	if [ "$h" = fuzz-dump ] || [ "$h" = fuzz-fsck ]; then	# fsck -p names features as dump -s
		srcs+=("${dump_sources[@]}")
	fi
	link "$h" "${srcs[@]}"
done
link fuzz-tar tests/fuzz/fuzz-tar.c "${tar_sources[@]}"
echo "$CC ${EXTRA_CFLAGS:-}" >"$out/bin/built-with"
