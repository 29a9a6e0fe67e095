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
for mode in plain lz4hc; do
	img=$out/source-$mode.erofs
	opts=()
	[ "$mode" = lz4hc ] && opts=(-z lz4hc -E ztailpacking)
	echo "== mkfs.erofs ${opts[*]}"
	"$build/mkfs/mkfs.erofs" "${opts[@]}" --exclude-path=.git --exclude-path=build "$img" "$src"
	"$build/fsck/fsck.erofs" -p "$img"
	/usr/bin/fsck.erofs "$img" && echo "Debian's fsck.erofs: image is clean"
	"$build/fsck/fsck.erofs" --extract="$out/extracted-$mode" "$img" >/dev/null
	(cd "$out/extracted-$mode" && find . -mindepth 1 | wc -l | sed 's/^/extracted entries: /')
	echo "image: $img"
done
# both images hold the same tree
"$build/tools/erofs-manifest" "$out/extracted-plain" >"$out/plain.manifest"
"$build/tools/erofs-manifest" "$out/extracted-lz4hc" >"$out/lz4hc.manifest"
cmp -s "$out/plain.manifest" "$out/lz4hc.manifest" && echo "plain and lz4hc images extract to the same tree"
