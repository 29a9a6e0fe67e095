#!/bin/bash
# Round trip of the full test tree: mkfs.erofs -> fsck.erofs --extract (ours,
# and Debian's as an independent reader) -> the canonical manifests match.
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
	rm -rf "$WORK/ours"
	if "$FSCK" --extract="$WORK/ours" "$img" >"$WORK/fsck.out" 2>&1; then
		same_manifest "$label-ours" "$tree" "$WORK/ours"
	else
		fail "$config: our fsck.erofs rejected the image:"
		tail -5 "$WORK/fsck.out" >&2
	fi
	# Debian's fsck.erofs (1.5) checks the image and extracts content, types,
	# times and targets; it does not restore hard links, xattrs or suid bits,
	# and reads 4096-byte blocks only.
	if [ -x /usr/bin/fsck.erofs ] && [[ $config != *-b* ]]; then
		rm -rf "$WORK/theirs"
		if /usr/bin/fsck.erofs --extract="$WORK/theirs" "$img" >"$WORK/theirs.out" 2>&1; then
			"$MANIFEST" --no-xattrs "$tree" | sed -E 's/ (mode|link)=[^ ]*//g' >"$WORK/a.m"
			"$MANIFEST" --no-xattrs "$WORK/theirs" | sed -E 's/ (mode|link)=[^ ]*//g' >"$WORK/b.m"
			if diff -u "$WORK/a.m" "$WORK/b.m" >"$WORK/theirs.diff"; then
				pass "$label-debian: Debian's fsck.erofs reads the same tree"
			else
				fail "$label-debian: Debian's fsck.erofs reads a different tree:"
				head -20 "$WORK/theirs.diff" >&2
			fi
		else
			fail "$config: Debian's fsck.erofs rejected the image:"
			tail -5 "$WORK/theirs.out" >&2
		fi
	fi
done
finish
