#!/bin/bash
# --block-list-file: no block is listed under two files unless sharing was
# asked for (-E dedupe, --chunksize), as AOSP's block-map loader
# (common.GetUserImage) asserts; identical files then get blocks of their own,
# in the map and in the image, while images without a block list still store
# them once.  A hard-linked file is listed once, under the name erofs-utils
# gives it (hwtool2 beside hwtool; across directories, the directory its scan
# reads first).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/android-common.sh"
require_root

mk() { "$MKFS" --quiet -U clear -T 1230768000 --mount-point vendor "$@"; }

src=$WORK/vendor
mkdir -p "$src"/{lib64,bin/hw,xbin,etc}
fixed_bytes libbar 40000 >"$src/lib64/libbar.so"
cp "$src/lib64/libbar.so" "$src/lib64/libbar-copy.so"
{ fixed_bytes libbaz 9000; text_bytes libbaz 90000; } >"$src/lib64/libbaz.so"
cp "$src/lib64/libbaz.so" "$src/etc/libbaz.so.bak"
fixed_bytes hwtool 20000 >"$src/bin/hwtool"
ln "$src/bin/hwtool" "$src/bin/hwtool2"
fixed_bytes hal 12000 >"$src/bin/hw/halctl"
ln "$src/bin/hw/halctl" "$src/xbin/halctl2"	# bin/hw is read after xbin
text_bytes rc 300 >"$src/etc/small.rc"		# inline: no line

# map_shared MAP: "BLOCK NAME NAME..." for every block listed under more
# than one name (what GetUserImage refuses without allow_shared_blocks)
map_shared() {
	python3 - "$1" <<'PY'
import sys
owners = {}
for line in open(sys.argv[1]):
    name, *ranges = line.split()
    for r in ranges:
        a, _, b = r.partition("-")
        for blk in range(int(a), int(b or a) + 1):
            owners.setdefault(blk, []).append(name)
for blk in sorted(owners):
    if len(owners[blk]) > 1:
        print(blk, *owners[blk])
PY
}

# copies_in IMAGE FILE: how many times FILE's first block is stored, at a
# block boundary, in IMAGE
copies_in() {
	python3 - "$1" "$2" <<'PY'
import sys
img = open(sys.argv[1], "rb").read()
first = open(sys.argv[2], "rb").read(4096)
print(sum(img[i:i + 4096] == first for i in range(0, len(img), 4096)))
PY
}

ranges_of() { grep "^$2 " "$1" 2>/dev/null | cut -d' ' -f2- || true; }

# ---- no dedup option: every file its own blocks, plain or compressed ----
for variant in "plain:" "lz4hc:-z lz4hc,9" "legacy:-z lz4 -E legacy-compress" \
	"ztail:-z lz4hc -E ztailpacking"; do
	name=${variant%%:*}
	# shellcheck disable=SC2206 # the option words
	extra=(${variant#*:})
	map=$WORK/$name.map
	if ! mk "${extra[@]}" --block-list-file "$map" "$WORK/$name.img" "$src" 2>"$WORK/err"; then
		fail "$name: mkfs failed: $(cat "$WORK/err")"
		continue
	fi
	map_shared "$map" >"$WORK/shared"
	[ ! -s "$WORK/shared" ] && pass "$name: no block is listed under two files" ||
		fail "$name: blocks listed under two files: $(head -3 "$WORK/shared")"
	a=$(ranges_of "$map" /vendor/lib64/libbar.so) b=$(ranges_of "$map" /vendor/lib64/libbar-copy.so)
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] &&
		pass "$name: libbar.so ($a) and its copy ($b) have blocks of their own" ||
		fail "$name: libbar.so '$a', its copy '$b'"
	block_list_check "$name" "$WORK/$name.img" "$map" "$src" /vendor 4096 >"$WORK/kinds" ||
		fail "$name: block map problems"
	if [ "$name" = plain ]; then
		check_eq "plain: libbar.so is stored twice in the image" 2 \
			"$(copies_in "$WORK/$name.img" "$src/lib64/libbar.so")"
		[ "$(grep -c '^plain' "$WORK/kinds")" = "$(wc -l <"$map")" ] &&
			pass "plain: every listed block holds its file's bytes" ||
			fail "plain: $(grep -v '^plain' "$WORK/kinds" | head -3)"
	fi
	rm -rf "$WORK/x"
	"$FSCK" --extract="$WORK/x" "$WORK/$name.img" >/dev/null 2>&1 &&
		diff -r --no-dereference "$src" "$WORK/x" >/dev/null &&
		pass "$name: our fsck.erofs extracts the same tree" || fail "$name: extraction differs"
	reader2_fsck "$name" "$WORK/$name.img" "$src"
done

# ---- without a block list, identical files are still stored once ----
mk "$WORK/nomap.img" "$src" >/dev/null
check_eq "no block list: libbar.so is stored once" 1 "$(copies_in "$WORK/nomap.img" "$src/lib64/libbar.so")"
[ "$(stat -c %s "$WORK/nomap.img")" -lt "$(stat -c %s "$WORK/plain.img")" ] &&
	pass "no block list: the image is smaller ($(stat -c %s "$WORK/nomap.img") < $(stat -c %s "$WORK/plain.img") bytes)" ||
	fail "no block list: the duplicates were not shared"
# a block list sent to /dev/null counts as one too: the same image as plain
mk --block-list-file /dev/null "$WORK/null.img" "$src"
cmp -s "$WORK/null.img" "$WORK/plain.img" && pass "--block-list-file /dev/null: the same unshared image" ||
	fail "--block-list-file /dev/null gives another image"

# ---- asked for: -E dedupe (with or without -z) and --chunksize share ----
for variant in "dedupe:-E dedupe" "chunks:--chunksize 4096" "zdedupe:-z lz4hc -E dedupe"; do
	name=${variant%%:*}
	# shellcheck disable=SC2206
	extra=(${variant#*:})
	map=$WORK/$name.map
	mk "${extra[@]}" --block-list-file "$map" "$WORK/$name.img" "$src" 2>"$WORK/err" ||
		fail "$name: mkfs failed: $(cat "$WORK/err")"
	a=$(ranges_of "$map" /vendor/lib64/libbar.so) b=$(ranges_of "$map" /vendor/lib64/libbar-copy.so)
	[ -n "$a" ] && [ "$a" = "$b" ] && pass "$name: libbar.so and its copy share blocks $a" ||
		fail "$name: libbar.so '$a', its copy '$b'"
	block_list_check "$name" "$WORK/$name.img" "$map" "$src" /vendor 4096 >/dev/null ||
		fail "$name: block map problems"
	rm -rf "$WORK/x"
	"$FSCK" --extract="$WORK/x" "$WORK/$name.img" >/dev/null 2>&1 &&
		diff -r --no-dereference "$src" "$WORK/x" >/dev/null &&
		pass "$name: our fsck.erofs extracts the same tree" || fail "$name: extraction differs"
done
check_eq "-E dedupe: libbar.so is stored once" 1 "$(copies_in "$WORK/dedupe.img" "$src/lib64/libbar.so")"

# ---- hard links: listed once, under erofs-utils' name ----
for name in plain lz4hc; do
	map=$WORK/$name.map
	check_eq "$name: hwtool and hwtool2 in one directory: listed as hwtool2" "/vendor/bin/hwtool2" \
		"$(grep -o '^/vendor/bin/hwtool2* ' "$map" | tr -d ' ' || true)"
	check_eq "$name: bin/hw/halctl and xbin/halctl2: listed as xbin/halctl2" "/vendor/xbin/halctl2" \
		"$(grep -o '^/vendor/[a-z/]*/halctl2* ' "$map" | tr -d ' ' || true)"
done
# the name does not depend on the order the staging file system lists them
rev=$WORK/rev
mkdir -p "$rev"/{lib64,bin/hw,xbin,etc}
for f in etc/small.rc etc/libbaz.so.bak lib64/libbaz.so lib64/libbar-copy.so lib64/libbar.so; do
	cp -p "$src/$f" "$rev/$f"
done
cp -p "$src/bin/hwtool" "$rev/bin/hwtool2" && ln "$rev/bin/hwtool2" "$rev/bin/hwtool"
cp -p "$src/bin/hw/halctl" "$rev/xbin/halctl2" && ln "$rev/xbin/halctl2" "$rev/bin/hw/halctl"
touch -r "$src" "$rev"
mk --block-list-file "$WORK/rev.map" "$WORK/rev.img" "$rev"
cmp -s "$WORK/rev.map" "$WORK/plain.map" &&
	pass "links made the other way round: the same block list" ||
	{ fail "links made the other way round change the block list:"; diff "$WORK/plain.map" "$WORK/rev.map" >&2; }

# ---- an Android build (--mount-point with --fs-config-file or --product-out):
# the same bytes with and without a block list, as AOSP builds the tree at `m`
# time without one and at the dist step with one; sharing only when asked ----
vendor_rules() { # PATH TYPE
	if [ "$2" = d ]; then echo "0 2000 755 0"; else echo "0 0 644 0"; fi
}
canned_fs_config "$src" vendor/ vendor_rules >"$WORK/vendor_fs_config"
for z in "" "-z lz4hc -E fragments"; do
	label="--fs-config-file${z:+ $z}"
	mk $z --fs-config-file "$WORK/vendor_fs_config" "$WORK/m.img" "$src"
	mk $z --fs-config-file "$WORK/vendor_fs_config" --block-list-file "$WORK/dist.map" \
		"$WORK/dist.img" "$src"
	cmp -s "$WORK/m.img" "$WORK/dist.img" &&
		pass "$label: the same image with and without --block-list-file" ||
		fail "$label: the block list changes the image ($(stat -c %s "$WORK/m.img") vs $(stat -c %s "$WORK/dist.img") bytes)"
done
check_eq "Android build without a block list: libbar.so is not shared" 2 \
	"$(copies_in "$WORK/m.img" "$src/lib64/libbar.so")"
mk --fs-config-file "$WORK/vendor_fs_config" -E dedupe "$WORK/m-dedupe.img" "$src"
check_eq "Android build with -E dedupe: libbar.so is stored once" 1 \
	"$(copies_in "$WORK/m-dedupe.img" "$src/lib64/libbar.so")"
finish
