#!/bin/bash
# Round trip of the full test tree: mkfs.erofs -> fsck.erofs --extract (ours,
# and a second, independent reader: tests/second-reader.sh) -> the canonical
# manifests match.
. "$(dirname "$0")/lib.sh"
require_root

tree=$WORK/tree
bash "$GEN_TREE" "$tree"

for config in "" "-b 1024" "-b 512" "-E noinline_data" "-E force-inode-extended" "-x 0" "-x 100"; do
	label=${config// /}
	label=${label:-default}
	img=$WORK/$label.img
	# shellcheck disable=SC2086 # config is a list of options
	if ! "$MKFS" --quiet -U 6b1bbf1c-9c52-4a19-9f3d-6e4a4e9d3a11 $config "$img" "$tree"; then
		fail "$config: mkfs.erofs failed"
		continue
	fi
	ours_extract "$label" "$img" "$tree"
	# the second reader (with its limits left out of the comparison)
	# shellcheck disable=SC2086
	reader2_reads $config && reader2_extract "$label-reader2" "$img" "$tree"
done
finish
