#!/bin/bash
# Configures and builds out of tree in ./build (or $BUILD_DIR).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || ./autogen.sh >/dev/null 2>&1
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j"$(nproc)" >/dev/null
make -j"$(nproc)" tools/erofs-manifest >/dev/null
echo "build: $build/mkfs/mkfs.erofs and $build/fsck/fsck.erofs"
