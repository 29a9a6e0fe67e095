#!/bin/bash
# A source that changes under mkfs.erofs, and names with odd bytes.
#
# Files that grow, shrink, vanish or turn into something else between the
# scan and the data read: a clear message naming the file, a non-zero exit,
# and nothing left beside the image, for plain, compressed and chunked
# files.  The change is made by tests/mutate-shim.c (LD_PRELOAD) at the
# moment mkfs.erofs opens the file for its data, so every race is hit.
#
# Names with newlines, tabs, backslashes, control bytes, invalid UTF-8 and
# 255 bytes are legal: they round-trip through the image, and messages that
# name them stay one readable line.
. "$(dirname "$0")/lib.sh"
require_root

shim=$WORK/mutate-shim.so
if ! ${CC:-cc} -shared -fPIC -O1 -o "$shim" "$top_srcdir/tests/mutate-shim.c" -ldl \
	2>"$WORK/cc.err"; then
	cat "$WORK/cc.err" >&2
	fail "cannot build tests/mutate-shim.c"
	finish
fi

out=$WORK/out
mkdir "$out"

# nothing_left LABEL: no image, temporary image or spool left in $out
nothing_left() {
	if [ -n "$(ls -A "$out")" ]; then
		fail "$1: left files behind: $(ls -A "$out" | tr '\n' ' ')"
		rm -rf "${out:?}"/* "$out"/.[!.]* 2>/dev/null || true
	else
		pass "$1: nothing left behind"
	fi
}

# fresh_source: a small tree; dir/victim (300000 random bytes: data blocks,
# copied in the kernel, compressed in one segment, 74 chunks of 4 KiB) and
# dir/tiny (100 bytes, inline) are the files the shim changes
src=$WORK/src
fresh_source() {
	rm -rf "$src"
	mkdir -p "$src/dir" "$src/other"
	head -c 300000 /dev/urandom >"$src/dir/victim"
	head -c 100 /dev/urandom >"$src/dir/tiny"
	head -c 20000 /dev/urandom >"$src/other/before"
	head -c 50000 < <(yes 'text that compresses') >"$src/other/text"
}

# mutated LABEL PATTERN NAME ACTION NTH MKFS_OPTIONS...: mkfs.erofs, with
# NAME changed by ACTION at its NTH open, fails with a message matching
# PATTERN and leaves nothing behind
mutated() {
	local label=$1 pattern=$2 name=$3 action=$4 nth=$5
	shift 5
	fresh_source
	expect_failure "$label" "$pattern" env LD_PRELOAD="$shim" SHIM_NAME="$name" \
		SHIM_ACTION="$action" SHIM_NTH="$nth" timeout 60 "$MKFS" --quiet "$@" "$out/x.img" "$src"
	nothing_left "$label"
}

# the shim alone changes nothing: the image is built and reads back
fresh_source
if env LD_PRELOAD="$shim" SHIM_NAME=no-such-file SHIM_ACTION=delete \
	"$MKFS" --quiet "$out/ok.img" "$src" 2>"$WORK/err.txt" &&
	"$FSCK" --extract="$WORK/ok" "$out/ok.img" >/dev/null 2>&1; then
	same_manifest "shim control" "$src" "$WORK/ok"
else
	fail "shim control: mkfs.erofs or fsck.erofs failed: $(cat "$WORK/err.txt")"
fi
rm -rf "$out/ok.img" "$WORK/ok"

grew="file changed size during the build"
shrank="(file shrank|file changed size) during the build"
gone="cannot open: No such file or directory"
replaced="cannot open: replaced during the build: no longer a regular file"
# mode label and options: the plain writer, the compressor (which also
# fills the packed inode of -E all-fragments) and the chunker each open the
# file again and must name the change
for mode in "plain|" "lz4hc|-zlz4hc" "fragments|-zlz4hc -Eall-fragments" "chunks|--chunksize=4096"; do
	IFS='|' read -r label options <<<"$mode"
	replaced_here=$replaced
	for victim in victim tiny; do
		v="$src/dir/$victim"
		# shellcheck disable=SC2086 # options is a list
		{
		mutated "$label/$victim grows" "$v: $grew" "$victim" grow 1 $options
		mutated "$label/$victim shrinks" "$v: $shrank" "$victim" shrink 1 $options
		mutated "$label/$victim deleted" "$v: $gone" "$victim" delete 1 $options
		mutated "$label/$victim now a directory" "$v: $replaced_here" "$victim" dir 1 $options
		mutated "$label/$victim now a symlink" "$v: $replaced_here" "$victim" symlink 1 $options
		mutated "$label/$victim now a FIFO" "$v: $replaced_here" "$victim" fifo 1 $options
		}
	done
done

# incompressible: compressed first, then stored plain from the same open
# file, so read twice; the change comes between the compressor's read and
# the plain copy
between_reads() { # LABEL PATTERN ACTION
	local label=$1 pattern=$2 action=$3

	fresh_source
	expect_failure "$label" "$pattern" env LD_PRELOAD="$shim" SHIM_NAME=victim \
		SHIM_ACTION="$action" SHIM_WHEN=read SHIM_NTH=2 timeout 60 "$MKFS" --quiet -zlz4hc \
		"$out/x.img" "$src"
	nothing_left "$label"
}
between_reads "lz4hc/victim grows between the compressor and the plain copy" \
	"$src/dir/victim: $grew" grow
between_reads "lz4hc/victim shrinks between the compressor and the plain copy" \
	"$src/dir/victim: $shrank" shrink
# a file removed once open is read through its descriptor: imaged whole, as opened
fresh_source
cp "$src/dir/victim" "$WORK/victim.orig"
if env LD_PRELOAD="$shim" SHIM_NAME=victim SHIM_ACTION=delete SHIM_WHEN=read SHIM_NTH=2 \
	timeout 60 "$MKFS" --quiet -zlz4hc "$out/x.img" "$src" &&
	rm -rf "$WORK/x" && "$FSCK" --extract="$WORK/x" "$out/x.img" >/dev/null &&
	cmp -s "$WORK/x/dir/victim" "$WORK/victim.orig" && [ ! -e "$src/dir/victim" ]; then
	pass "lz4hc/victim deleted between reads: imaged as it was opened"
else
	fail "lz4hc/victim deleted between reads: not imaged as it was opened"
fi
rm -rf "$out/x.img" "$WORK/x"

# dedup reads files of equal size before anything else
fresh_source
dedup_case() { # ACTION PATTERN
	fresh_source
	cp "$src/dir/victim" "$src/other/copy"
	expect_failure "dedup/copy $1" "$src/other/copy: $2" env LD_PRELOAD="$shim" \
		SHIM_NAME=copy SHIM_ACTION="$1" timeout 60 "$MKFS" --quiet "$out/x.img" "$src"
	nothing_left "dedup/copy $1"
}
dedup_case delete "$gone"
dedup_case dir "$replaced"
dedup_case symlink "$replaced"
dedup_case fifo "$replaced"

# --- names with odd bytes round-trip ---
names=$WORK/names
python3 - "$names" <<'EOF'
import os, sys
root = os.fsencode(sys.argv[1])
os.mkdir(root)
def put(path, data=b"x"):
    with open(os.path.join(root, path), "wb") as f:
        f.write(data)
# every control byte, alone and inside a name
for b in list(range(1, 32)) + [127]:
    put(b"ctl-%02x-" % b + bytes([b]) + b"-end", b"%d\n" % b)
put(b"\n", b"just a newline")
put(b"\n\n", b"two newlines")
put(b"\nleading", b"")
put(b"trailing\n", b"t" * 5000)	# data blocks too
put(b"\t", b"tab")
put(b" ", b"space")
put(b"-", b"dash")
put(b"\\", b"one backslash")
put(b"\\n", b"backslash n, not a newline")
put(b"\\\\x41", b"two backslashes")
put(b"%41", b"percent")
# invalid UTF-8: stray bytes, a truncated sequence, overlong, surrogate
for i, raw in enumerate([b"\xff", b"\x80", b"\xc3(", b"\xe2\x82", b"\xc0\xaf",
                         b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"ok\xfe\xffok"]):
    put(b"bad-utf8-%d-" % i + raw, raw * 1000)
put("valid-utf8-héllo-日本-🙂".encode(), b"fine")
# 255 bytes: the longest name
put(b"L" * 255, b"long ascii")
put(("é" * 127 + "x").encode(), b"long utf-8")	# 255 bytes
put(b"\xff" * 255, b"long invalid")
put(b"\n" * 255, b"long newlines")
# directories with odd names, nested past PATH_MAX (one name at a time)
d = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
for level in range(18):
    name = (b"%02d\n" % level) + b"D" * 252
    os.mkdir(name, dir_fd=d)
    nd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=d)
    os.close(d)
    d = nd
fd = os.open(b"deep\tfile\n", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)
os.write(fd, b"deep" * 3000)
os.close(fd)
os.close(d)
os.mkdir(os.path.join(root, b"dir\nwith\nnewlines"))
put(b"dir\nwith\nnewlines/\x1b[31mred\x1b[0m", b"escape sequences")
# symlinks whose targets hold the same bytes; hard links with odd names
for i, target in enumerate([b"\n", b"to\nnewline", b"\xff\xfe", b"back\\slash", b"\t\x01\x7f"]):
    os.symlink(target, os.path.join(root, b"link-%d-\n" % i))
os.link(os.path.join(root, b"\n"), os.path.join(root, b"dir\nwith\nnewlines/hard\nlink"))
os.link(os.path.join(root, b"\n"), os.path.join(root, b"\xff-hard"))
EOF
for mode in "plain|" "lz4hc|-zlz4hc" "chunks|--chunksize=4096" "noinline|-E noinline_data"; do
	IFS='|' read -r label options <<<"$mode"
	rm -rf "$WORK/extracted"
	# shellcheck disable=SC2086 # options is a list
	if ! "$MKFS" --quiet $options "$out/names.img" "$names" 2>"$WORK/err.txt"; then
		fail "names/$label: mkfs.erofs failed: $(cat "$WORK/err.txt")"
	elif ! "$FSCK" --extract="$WORK/extracted" "$out/names.img" >/dev/null 2>"$WORK/err.txt"; then
		fail "names/$label: fsck.erofs --extract failed: $(head -3 "$WORK/err.txt")"
	else
		same_manifest "names-$label" "$names" "$WORK/extracted"
	fi
	rm -f "$out/names.img"
done
rm -rf "$WORK/extracted"

# --- messages that name such paths stay one readable line ---
# one_line LABEL ESCAPED: the last command's stderr ($WORK/err.txt) is one
# line, names the path as ESCAPED, and holds no control or stray bytes
one_line() {
	local lines
	lines=$(wc -l <"$WORK/err.txt")
	if [ "$lines" -ne 1 ]; then
		fail "$1: $lines lines of messages, not one:"
		cat -A "$WORK/err.txt" >&2
	elif ! grep -qF -- "$2" "$WORK/err.txt"; then
		fail "$1: the message does not name the path as '$2':"
		cat -A "$WORK/err.txt" >&2
	elif LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f\xff]' "$WORK/err.txt"; then
		fail "$1: control bytes in the message:"
		cat -A "$WORK/err.txt" >&2
	else
		pass "$1: $(head -1 "$WORK/err.txt")"
	fi
}
odd=$'héllo\nnew\tline\e[31mred\xff\x01'
odd_escaped='héllo\nnew\tline\x1b[31mred\xff\x01'

# a file that vanishes (as root, through the shim)
fresh_source
head -c 9000 /dev/urandom >"$src/dir/$odd"
expect_failure "odd name deleted" "cannot open: No such file" env LD_PRELOAD="$shim" \
	SHIM_NAME="$odd" SHIM_ACTION=delete "$MKFS" --quiet "$out/x.img" "$src"
one_line "odd name deleted: one line" "$src/dir/$odd_escaped: cannot open"
nothing_left "odd name deleted"

# an unreadable file, as an unprivileged user
if command -v setpriv >/dev/null; then
	fresh_source
	head -c 100 /dev/urandom >"$src/dir/$odd"
	chmod 0000 "$src/dir/$odd"
	chmod 0755 "$WORK"
	chown -R 65534:65534 "$src" "$out"
	expect_failure "odd name unreadable" "Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MKFS" --quiet "$out/x.img" "$src"
	one_line "odd name unreadable: one line" \
		"$src/dir/$odd_escaped: cannot open: Permission denied"
	nothing_left "odd name unreadable"
	chown 0:0 "$out"
fi
finish
