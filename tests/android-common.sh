# Helpers for the Android tests (sourced after lib.sh): trees shaped like the
# ones the Android build stages, fs_config files written the way the build
# writes them, and readers of what an image or an extracted tree holds.

command -v python3 >/dev/null || { echo "$test_name: needs python3; skipped"; exit 77; }

# deterministic bytes (seeded) and compressible text
fixed_bytes() { # SEED COUNT
	python3 -c 'import random,sys
sys.stdout.buffer.write(random.Random(sys.argv[1]).randbytes(int(sys.argv[2])))' "$1" "$2"
}
text_bytes() { # WORD COUNT
	head -c "$2" < <(yes "$1 android erofs-forge line of text")
}

# fs_config_bin OUT RECORD...: writes a binary etc/fs_config_dirs or
# etc/fs_config_files as the build's fs_config_generator does.  A RECORD is
# "MODE UID GID CAPS PATH" (MODE octal, CAPS any base).
fs_config_bin() {
	python3 - "$@" <<'PY'
import struct, sys
out, records = sys.argv[1], sys.argv[2:]
data = b""
for rec in records:
    mode, uid, gid, caps, path = rec.split(" ", 4)
    p = path.encode() + b"\0"
    p += b"\0" * (-len(p) % 8)
    data += struct.pack("<HHHHQ", 16 + len(p), int(mode, 8), int(uid), int(gid),
                        int(caps, 0)) + p
open(out, "wb").write(data)
PY
}

# canned_fs_config DIR PREFIX RULES: prints the canned fs_config of the tree
# DIR as the build's fs_config tool does (sorted paths, PREFIX before each,
# the root as an empty path, octal modes without a leading 0,
# "capabilities=0x..." on every line).  RULES is a function called as
# RULES PATH TYPE (d, f or l) that prints "UID GID MODE CAPS".
canned_fs_config() {
	local dir=$1 prefix=$2 rules=$3 rel type path
	(cd "$dir" && find . -mindepth 1 -printf '%P %y\n' | LC_ALL=C sort) |
	{
		echo " $($rules "" d | awk '{ printf "%s %s %s capabilities=%s", $1, $2, $3, $4 }')"
		while read -r rel type; do
			path=$prefix$rel
			$rules "$path" "$type" |
				awk -v p="$path" '{ printf "%s %s %s %s capabilities=%s\n", p, $1, $2, $3, $4 }'
		done
	}
}

# entries DIR: "path uid gid mode type" of every entry below DIR, the root as
# "/", sorted; symlinks report no mode (the host does not keep one).
entries() {
	(cd "$1" && find . -printf '/%P %U %G %m %y\n') |
		awk '$5 == "l" { $4 = "-" } { print }' | LC_ALL=C sort
}

# same_entries LABEL DIR: the owners, groups, modes and types under DIR
# (entries) are the list on standard input
same_entries() {
	cat >"$WORK/want"
	entries "$2" >"$WORK/got"
	if diff -u "$WORK/want" "$WORK/got" >"$WORK/d"; then
		pass "$1"
	else
		fail "$1: owners or modes differ:"
		cat "$WORK/d" >&2
	fi
}

# label PATH / caps PATH: what getfattr and getcap show ("-" when nothing)
label() {
	local v
	v=$(getfattr -h --absolute-names --only-values -n security.selinux "$1" 2>/dev/null) || v=-
	printf '%s\n' "${v:--}"
}
caps() {
	local v
	v=$(getcap "$1" 2>/dev/null | sed -e 's/^[^ ]* //' -e 's/^= *//')
	printf '%s\n' "${v:--}"
}

# xattr_hex PATH NAME: the raw value in hex (empty when absent)
xattr_hex() {
	getfattr -h --absolute-names -e hex --only-values -n "$2" "$1" 2>/dev/null | xxd -p | tr -d '\n' || true
}

# check LABEL WANT GOT
check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1: $3"
	else
		fail "$1: want '$2', got '$3'"
	fi
}

# extract_ours IMAGE DIR: our fsck.erofs extracts with owners, modes and xattrs
extract_ours() {
	rm -rf "$2"
	"$FSCK" --extract="$2" --preserve "$1" >"$WORK/fsck.out" 2>&1 ||
		{ fail "$(basename "$1"): our fsck.erofs --extract failed:"; tail -5 "$WORK/fsck.out" >&2; return 1; }
}

# reader2_fsck LABEL IMAGE SOURCE: the second, independent fsck.erofs
# (tests/second-reader.sh) checks and extracts the image, and the contents
# match SOURCE
reader2_fsck() {
	local label=$1 img=$2 src=$3
	[ -n "$READER2" ] || { echo "note: $label: $READER2_NAME: not cross-checked"; return 0; }
	rm -rf "$WORK/reader2"
	if "$READER2" --extract="$WORK/reader2" "$img" >"$WORK/reader2.log" 2>&1 &&
	   diff -r --no-dereference "$src" "$WORK/reader2" >"$WORK/reader2.diff" 2>&1; then
		pass "$label: $READER2_NAME --extract passes, same contents"
	else
		fail "$label: $READER2_NAME --extract:"
		tail -5 "$WORK/reader2.log" "$WORK/reader2.diff" >&2
	fi
	rm -rf "$WORK/reader2"
}

# block_list_check LABEL IMAGE MAP SOURCE PREFIX BLKSZ: every line names a
# regular file of SOURCE (PREFIX is the device path of the source root),
# ranges are well formed and inside the image, and for files stored plain
# (not compressed) the listed blocks hold the file's first bytes in order.
block_list_check() {
	python3 - "$@" <<'PY'
import os, sys
label, img, mapfile, src, prefix, blksz = sys.argv[1:7]
blksz = int(blksz)
size = os.path.getsize(img)
bad = []
lines = open(mapfile).read().splitlines()
seen = set()
with open(img, "rb") as f:
    for line in lines:
        name, _, ranges = line.partition(" ")
        if not name.startswith(prefix) or not ranges:
            bad.append("malformed line: " + line); continue
        rel = name[len(prefix):].lstrip("/")
        path = os.path.join(src, rel)
        if not os.path.isfile(path) or os.path.islink(path):
            bad.append("not a regular file of the tree: " + name); continue
        if name in seen:
            bad.append("listed twice: " + name)
        seen.add(name)
        data = b""
        for r in ranges.split(" "):
            a, _, b = r.partition("-")
            a = int(a); b = int(b) if b else a
            if a <= 0 or b < a or (b + 1) * blksz > size:
                bad.append("bad range %s for %s" % (r, name)); break
            f.seek(a * blksz)
            data += f.read((b - a + 1) * blksz)
        content = open(path, "rb").read()
        plain = content[:len(data)] == data[:len(content)] and len(data) <= len(content) + blksz
        # an uncompressed file's blocks are its bytes; a compressed one's are not
        sys.stdout.write("%s %s %d\n" % ("plain" if plain else "packed", name, len(data) // blksz))
if bad:
    sys.stderr.write("%s: block list problems:\n  %s\n" % (label, "\n  ".join(bad[:10])))
    sys.exit(1)
PY
}

