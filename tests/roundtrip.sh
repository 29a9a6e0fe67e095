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

# data first: a root too big to sit beside the superblock, over 2 MiB of
# data, puts nid 0 where the metadata area starts (meta_blkaddr > 0)
big=$WORK/bigroot
mkdir -p "$big/sub"
head -c 3000000 /dev/urandom >"$big/data"
seq 1 200000 >"$big/sub/numbers"
setfattr -n user.first -v "$(head -c 1500 /dev/zero | tr '\0' a)" "$big"
setfattr -n user.second -v "$(head -c 1500 /dev/zero | tr '\0' b)" "$big"
for config in "" "-z lz4hc -E ztailpacking"; do
	label=bigroot${config// /}
	# shellcheck disable=SC2086 # config is a list of options
	"$MKFS" --quiet $config "$WORK/$label.img" "$big"
	meta=$(od -An -t u4 -j $((1024 + 0x28)) -N 4 "$WORK/$label.img" | tr -d ' ')
	root=$(od -An -t u2 -j $((1024 + 0x0e)) -N 2 "$WORK/$label.img" | tr -d ' ')
	if [ "$meta" -gt 0 ] && [ "$root" -lt 65536 ]; then
		pass "$label: nid 0 at block $meta, after the data; root nid $root"
	else
		fail "$label: meta_blkaddr $meta, root nid $root"
	fi
	ours_extract "$label" "$WORK/$label.img" "$big"
	reader2_extract "$label-reader2" "$WORK/$label.img" "$big"
done
finish
