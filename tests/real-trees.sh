#!/bin/bash
# Real trees (/usr/share/doc, /etc): images pass our fsck.erofs and a second,
# independent one (tests/second-reader.sh), extract to the same tree, and two
# builds are byte-identical.
. "$(dirname "$0")/lib.sh"
require_root

for src in /usr/share/doc /etc; do
	[ -d "$src" ] || continue
	label=$(basename "$src")
	img=$WORK/$label.img
	if ! "$MKFS" --quiet -U clear "$img" "$src"; then
		fail "$src: mkfs.erofs failed"
		continue
	fi
	"$MKFS" --quiet -U clear "$img.2" "$src"
	if cmp -s "$img" "$img.2"; then pass "$src: two builds identical"; else fail "$src: two builds differ"; fi
	rm -f "$img.2"
	if "$FSCK" --extract="$WORK/$label" "$img" >"$WORK/fsck.out" 2>&1; then
		pass "$src: our fsck.erofs accepts the image"
		same_manifest "$label" "$src" "$WORK/$label"
	else
		fail "$src: our fsck.erofs rejected the image:"
		tail -5 "$WORK/fsck.out" >&2
	fi
	rm -rf "$WORK/$label"
	reader2_check "$src" "$img"
	rm -f "$img"
done
finish
