#!/bin/bash
# tar-layers.sh: container layers (tests/tar-layer.py).  --aufs turns
# .wh.NAME into a 0:0 character device and .wh..wh..opq into
# trusted.overlay.opaque="y", and marks directories holding whiteouts with an
# empty trusted.overlay.origin; --ovlfs-strip=1 leaves all of it out; without
# --aufs the .wh. files are plain files.  erofs-utils 1.9.4, when present,
# makes the same trees of the same layer (but the root, which it makes 0777
# and dates with the build time).  The QEMU suite mounts the layer over its
# lower layer under overlayfs (qemu-tests/matrix, layer-*).
. "$(dirname "$0")/lib.sh"
require_root

ANCHOR=$top_srcdir/../shared/anchors/erofs-utils-1.9.4/mkfs.erofs
python3 "$top_srcdir/tests/tar-layer.py" "$WORK/layer"
TAR=$WORK/layer/upper.tar

# image_manifest NAME OPTIONS...: the manifest of what our fsck extracts
image_manifest() {
	local name=$1
	shift
	rm -rf "$WORK/x"
	"$MKFS" --tar=f --quiet "$@" "$WORK/$name.img" "$TAR" &&
		"$FSCK" --extract="$WORK/x" "$WORK/$name.img" >/dev/null &&
		"$MANIFEST" "$WORK/x" >"$WORK/$name.manifest"
}

has() { # LABEL MANIFEST REGEX
	if grep -qE "$3" "$2"; then pass "$1"; else fail "$1: no line /$3/ in $2"; fi
}

image_manifest aufs --aufs -zlz4hc -Enoinline_data --sort=none
m=$WORK/aufs.manifest
has "whiteout of a file" "$m" '^a/gone type=chr mode=0000 .* rdev=0:0$'
has "whiteout of a directory" "$m" '^d/sub type=chr mode=0000 .* rdev=0:0$'
has "whiteout at the top" "$m" '^e type=chr mode=0000 .* rdev=0:0$'
has "opaque directory" "$m" '^b type=dir .* xattrs=trusted.overlay.opaque=79$'
has "directory with whiteouts marked" "$m" '^a type=dir .* xattrs=trusted.overlay.origin=$'
if grep -q '\.wh\.' "$m"; then fail "--aufs: a .wh. name is left"; else pass "--aufs: no .wh. name left"; fi

image_manifest strip --aufs --ovlfs-strip=1
same_manifest "--ovlfs-strip=1: the layer's own files only" "$WORK/layer/upper-plain" "$WORK/x"

image_manifest plain
has "without --aufs: .wh. files stay files" "$WORK/plain.manifest" '^a/\.wh\.gone type=reg '
has "without --aufs: the opaque marker stays a file" "$WORK/plain.manifest" '^b/\.wh\.\.wh\.\.opq type=reg '

if [ -x "$ANCHOR" ]; then
	for opts in "--aufs" "--aufs --ovlfs-strip=1" ""; do
		# shellcheck disable=SC2086
		"$ANCHOR" --tar=f --quiet $opts "$WORK/theirs.img" "$TAR" >/dev/null 2>&1 ||
			{ fail "erofs-utils 1.9.4 --tar=f $opts failed"; continue; }
		rm -rf "$WORK/theirs"
		"$FSCK" --extract="$WORK/theirs" "$WORK/theirs.img" >/dev/null
		# shellcheck disable=SC2086
		image_manifest ours $opts
		"$MANIFEST" "$WORK/theirs" | sed 1d >"$WORK/theirs.manifest"
		if sed 1d "$WORK/ours.manifest" | diff -u "$WORK/theirs.manifest" - >&2; then
			pass "erofs-utils 1.9.4 '$opts': the same tree below the root"
		else
			fail "erofs-utils 1.9.4 '$opts': a different tree"
		fi
	done
else
	echo "note: erofs-utils 1.9.4 not in ../shared/anchors: no comparison with it"
fi
finish
