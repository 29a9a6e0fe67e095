#!/bin/bash
# Compressed files with blocks smaller than a page (-b 512/1024/2048 with -z,
# Linux 6.8+): every layout round-trips through our fsck and a second reader,
# the image does not depend on --workers, compact index entries use
# max(lclusterbits, 12) value bits as the format fixes, and no extent
# reaches past an index delta's 2047 lclusters (a run of zeros would).
. "$(dirname "$0")/lib.sh"
require_root
. "$top_srcdir/tests/second-reader.sh"

tree=$WORK/tree
bash "$GEN_TREE" "$tree"
uuid=5d0f6c2a-7b1e-4c3d-8e9f-0a1b2c3d4e5f
for b in 512 1024 2048; do
	for config in "-z lz4" "-z lz4hc -C 16384" "-z lz4hc -E ztailpacking" \
		"-z lz4hc -C 65536 -E dedupe,ztailpacking" "-z lz4hc -E fragments,ztailpacking" \
		"-z lz4 -E all-fragments,legacy-compress"; do
		label="b$b${config// /}"
		img=$WORK/$label.img
		# shellcheck disable=SC2086 # config is a list of options
		if ! "$MKFS" --quiet -U "$uuid" -b "$b" --workers=1 $config "$img" "$tree"; then
			fail "-b $b $config: mkfs.erofs failed"
			continue
		fi
		# shellcheck disable=SC2086
		"$MKFS" --quiet -U "$uuid" -b "$b" --workers=3 $config "$WORK/w3.img" "$tree"
		cmp -s "$img" "$WORK/w3.img" || fail "-b $b $config: the image depends on --workers"
		if "$FSCK" --extract="$WORK/$label.out" --preserve "$img" >"$WORK/$label.log" 2>&1; then
			same_manifest "-b $b $config (ours)" "$tree" "$WORK/$label.out"
		else
			fail "-b $b $config: fsck: $(head -2 "$WORK/$label.log")"
		fi
		rm -rf "$WORK/$label.out"
		# shellcheck disable=SC2086
		reader2_reads -b "$b" $config && reader2_extract "$label" "$img" "$tree"
		rm -f "$img"
	done
done

# the format's own bits: a file's first compact entry is a HEAD1 at
# clusterofs 0, stored as 1 << 12 whatever the block size (6.8's lobits)
mkdir -p "$WORK/one"
head -c 100000 < <(yes "compressible line of text") >"$WORK/one/f"
for b in 1024 2048; do
	IMG=$WORK/one$b.img
	"$MKFS" --quiet -b "$b" -z lz4 -E^xattr-name-filter "$IMG" "$WORK/one"
	meta=$(( $(od -An -tu4 -j $((1024 + 0x28)) -N4 "$IMG") * b ))
	root=$(od -An -tu2 -j $((1024 + 0x0E)) -N2 "$IMG" | tr -d ' ')
	# the only file is the root's first child record: find it by scanning nids
	found=
	for nid in $(seq $((root + 1)) $((root + 8))); do
		io=$((meta + nid * 32))
		fmt=$(od -An -tu2 -j "$io" -N2 "$IMG" | tr -d ' ')
		mode=$(od -An -tu2 -j $((io + 4)) -N2 "$IMG" | tr -d ' ')
		[ $((mode & 0170000)) -eq $((0100000)) ] || continue
		isize=$(((fmt & 1) ? 64 : 32))
		hdr=$(((io + isize + 7) / 8 * 8))
		entry=$(od -An -tu2 -j $((hdr + 8)) -N2 "$IMG" | tr -d ' ')
		found=$entry
		break
	done
	if [ "$found" = 4096 ]; then
		pass "-b $b: first compact entry 0x1000 (HEAD1 above 12 value bits)"
	else
		fail "-b $b: first compact entry ${found:-not found}, want 4096 (HEAD1 << 12)"
	fi
done

# zeros: 16 KiB pclusters would swallow far more than 2047 512-byte lclusters
head -c 8000000 /dev/zero >"$WORK/one/zeros"
"$MKFS" --quiet -b 512 -z lz4hc -C 16384 "$WORK/zeros.img" "$WORK/one"
"$FSCK" --extract="$WORK/zeros.out" "$WORK/zeros.img" >"$WORK/zeros.log" 2>&1 &&
	cmp -s "$WORK/one/zeros" "$WORK/zeros.out/zeros" &&
	pass "-b 512 -C 16384: 8 MB of zeros round-trip (extents within an index delta's reach)" ||
	fail "-b 512 zeros: $(head -2 "$WORK/zeros.log")"
finish
