#!/bin/bash
# The first README command: installs what is needed, builds, makes an image
# of this project's own source tree and checks it with our fsck.erofs and
# Debian's, then extracts it and compares the trees.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
bash "$top/scripts/install-deps.sh"
bash "$top/scripts/build.sh"
out=$(mktemp -d "${TMPDIR:-/tmp}/erofs-forge-demo.XXXXXX")
src=${1:-$top}
img=$out/source.erofs
"$build/mkfs/mkfs.erofs" --exclude-path=.git --exclude-path=build "$img" "$src"
"$build/fsck/fsck.erofs" -p "$img"
/usr/bin/fsck.erofs "$img" && echo "Debian's fsck.erofs: image is clean"
"$build/fsck/fsck.erofs" --extract="$out/extracted" "$img" >/dev/null
"$build/tools/erofs-manifest" "$out/extracted" >"$out/extracted.manifest"
(cd "$out/extracted" && find . -mindepth 1 | wc -l | sed 's/^/extracted entries: /')
echo "image: $img"
