#!/bin/bash
# Byte-for-byte reproducibility: the same tree gives the same image across
# runs, readdir and listxattr orders, and staging filesystems (ext4 or
# whatever holds $TMPDIR, versus tmpfs).
. "$(dirname "$0")/lib.sh"
require_root

tree=$WORK/tree
bash "$GEN_TREE" "$tree"
uuid=0f0e0d0c-0b0a-0908-0706-050403020100

"$MKFS" --quiet -U "$uuid" "$WORK/first.img" "$tree"
"$MKFS" --quiet -U "$uuid" "$WORK/second.img" "$tree"
if cmp -s "$WORK/first.img" "$WORK/second.img"; then
	pass "two builds of one tree are identical"
else
	fail "two builds of one tree differ: $(cmp "$WORK/first.img" "$WORK/second.img" | head -1)"
fi

# a copy made in reverse name order on tmpfs: other readdir order, other
# inode numbers, other filesystem; same content, owners, times and xattrs
staging=$WORK/tmpfs
mkdir "$staging"
if mount -t tmpfs -o size=512m,mode=0755 tmpfs "$staging" 2>/dev/null; then
	copy=$staging/tree
	mkdir "$copy"
	(cd "$tree" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | sort -r |
		while IFS= read -r name; do cp -a -- "$name" "$copy/"; done)
	touch -r "$tree" "$copy"
	chmod --reference="$tree" "$copy"
	same_manifest "tmpfs-copy" "$tree" "$copy"
	"$MKFS" --quiet -U "$uuid" "$WORK/tmpfs.img" "$copy"
	if cmp -s "$WORK/first.img" "$WORK/tmpfs.img"; then
		pass "a tmpfs copy in another order gives the identical image"
	else
		fail "the tmpfs copy gives another image: $(cmp "$WORK/first.img" "$WORK/tmpfs.img" | head -1)"
	fi
	umount "$staging"
else
	echo "note: cannot mount a tmpfs here; staging-filesystem case not run"
fi

# the same under -T and with another block size
"$MKFS" --quiet -T 0 -U "$uuid" -b 1024 "$WORK/t1.img" "$tree"
"$MKFS" --quiet -T 0 -U "$uuid" -b 1024 "$WORK/t2.img" "$tree"
if cmp -s "$WORK/t1.img" "$WORK/t2.img"; then
	pass "-T 0 -b 1024 builds are identical"
else
	fail "-T 0 -b 1024 builds differ"
fi

# every byte outside the written records is zero: an image of an empty tree
mkdir "$WORK/empty"
touch -d @0 "$WORK/empty"
"$MKFS" --quiet -T 0 -U clear "$WORK/empty.img" "$WORK/empty"
nonzero=$(od -An -v -tu1 -N 1024 "$WORK/empty.img" | tr -s ' ' '\n' | grep -cv '^0*$' || true)
if [ "$nonzero" = 0 ] && [ "$(stat -c %s "$WORK/empty.img")" = 4096 ]; then
	pass "an empty tree makes one 4096-byte block with zeroed boot area"
else
	fail "empty-tree image: $nonzero non-zero bytes in the first 1024, size $(stat -c %s "$WORK/empty.img")"
fi
# the other compressors: the prefix search of DEFLATE and zstd and the
# MicroLZMA encoder depend only on their input, so two builds with other
# worker counts are identical too
for z in "lzma -C 65536 -E ztailpacking" "deflate -E fragments" "zstd,9 -C 1048576 -E dedupe"; do
	# shellcheck disable=SC2086 # z is a list of options
	"$MKFS" --quiet -T 0 -U "$uuid" --workers=1 -z $z "$WORK/z1.img" "$tree"
	# shellcheck disable=SC2086
	"$MKFS" --quiet -T 0 -U "$uuid" --workers=4 -z $z "$WORK/z4.img" "$tree"
	if cmp -s "$WORK/z1.img" "$WORK/z4.img"; then
		pass "-z $z: --workers=1 and --workers=4 give identical images"
	else
		fail "-z $z: the image depends on the worker count"
	fi
done

# erofs-utils 1.9.4's options that change the layout (issue 29): the same
# image for every worker count too
for args in "-z lz4hc -E all-fragments,fragdedupe=full" "-z lz4hc -E fragments,fragdedupe=inode" \
	    "-z lzma,lc=0,lp=4,pb=4 -C 65536" "--chunksize=4096 -E force-chunk-indexes,nosbcrc" \
	    "-z lz4hc -E fragments,plain-xattr-prefixes --xattr-prefix=trusted.overlay. --root-xattr-isize=128" \
	    "--zfeature-bits=6 -z lz4 --fsalignblks=16" "--dsunit=8 -zlz4hc" "-zzstd -C65536 --max-extent-bytes=16384" \
	    "--zD -z lz4hc -E all-fragments --MZ=id" "--zD -m 4096 -z lzma"; do
	# shellcheck disable=SC2086 # args is a list of options
	"$MKFS" --quiet -T 0 -U "$uuid" --workers=1 $args "$WORK/a1.img" "$tree"
	# shellcheck disable=SC2086
	"$MKFS" --quiet -T 0 -U "$uuid" --workers=4 $args "$WORK/a4.img" "$tree"
	if cmp -s "$WORK/a1.img" "$WORK/a4.img"; then
		pass "$args: --workers=1 and --workers=4 give identical images"
	else
		fail "$args: the image depends on the worker count"
	fi
done

finish
