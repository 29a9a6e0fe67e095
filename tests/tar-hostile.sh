#!/bin/bash
# tar-hostile.sh: --tar=f on crafted tars (tests/tar-craft.py).  Valid odd
# cases build what tar -x would make; each hostile one fails with a message
# naming the entry (when it has a name) and its header's offset, exit 1, no
# crash, and no image left behind, from a file and from a pipe.
. "$(dirname "$0")/lib.sh"

CRAFT=$top_srcdir/tests/tar-craft.py
img=$WORK/out.img

# expect_refused CASE PATTERN
expect_refused() {
	local case=$1 pattern=$2 how
	python3 "$CRAFT" "$case" "$WORK/$case.tar"
	for how in file pipe; do
		rm -f "$img"
		if [ "$how" = file ]; then
			expect_failure "$case ($how)" "$pattern" timeout 60 "$MKFS" --tar=f --quiet \
				"$img" "$WORK/$case.tar"
		else
			expect_failure "$case ($how)" "$pattern" timeout 60 "$MKFS" --tar=f --quiet \
				"$img" <"$WORK/$case.tar"
		fi
		grep -q "Segmentation\|Aborted\|sanitizer" "$WORK/err.txt" && fail "$case: crashed"
		[ ! -e "$img" ] || fail "$case ($how): an image was left behind"
		ls "$WORK"/.erofs* >/dev/null 2>&1 && fail "$case ($how): temporary files left"
	done
	return 0
}

expect_refused negative-size "entry 'f' \(header at byte 0\): bad size field"
expect_refused overflowing-size "entry 'f' \(header at byte 0\): bad size field"
expect_refused absurd-size "entry 'f' \(header at byte 0\): .*truncated"
expect_refused billion-zero-blocks "entry 'f' \(header at byte 0\): .*truncated"
expect_refused truncated-data "entry 'f' \(header at byte 0\): .*truncated"
expect_refused truncated-header "header at byte 1024: .*truncated"
expect_refused bad-checksum "header at byte 0: bad header checksum"
expect_refused garbage "header at byte 0: bad header checksum"
expect_refused field-without-terminator "entry 'f' \(header at byte 0\): bad mode field"
expect_refused dotdot "entry 'a/\.\./\.\./etc/passwd' \(header at byte 0\): name with a '\.\.'"
expect_refused absolute "entry '/etc/passwd' \(header at byte 0\): absolute name"
expect_refused empty-name "header at byte 0: empty name"
expect_refused symlink-then-beneath "entry 'l/passwd' \(header at byte 512\): .*symlink or not a directory"
expect_refused name-over-path-max "entry 'd/d/d.*\.\.\.' \(header at byte 5120\): name longer than PATH_MAX"
expect_refused pax-record-too-long "PAX header at byte 0: record at byte 0 is malformed or longer"
expect_refused pax-huge "header at byte 0: PAX header of 1073741824 bytes"
expect_refused long-name-huge "header at byte 0: GNU long name of 1073741824 bytes"
expect_refused hardlink-to-missing "entry 'g' \(header at byte 0\): hard link to a missing file"
expect_refused hardlink-to-dir "entry 'g' \(header at byte 512\): hard link to a missing file or to a dir"
expect_refused root-not-dir "entry '\.' \(header at byte 0\): the root is not a directory"
expect_refused extension-without-entry "entry 'f' \(header at byte 1024\): extension headers without"
expect_refused sparse-past-end "entry 's' \(header at byte 1024\): sparse map .* past the file's end"
expect_refused pax-bad-mtime "PAX header at byte 0: bad value in record 'mtime'"

# an lzma header asking for a 4 GiB dictionary (found by tests/fuzz/run-tar.sh)
printf '\x8b\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' >"$WORK/dict.lzma"
expect_failure "lzma stream with a 4 GiB dictionary" "dictionary needs more than 256 MiB" \
	"$MKFS" --tar=f --quiet --unxz "$img" "$WORK/dict.lzma"

# the valid odd ones: what tar -x makes of them
built() { # CASE: builds and extracts into $WORK/x
	python3 "$CRAFT" "$1" "$WORK/$1.tar"
	rm -rf "$WORK/x" "$img"
	if "$MKFS" --tar=f --quiet "$img" "$WORK/$1.tar" 2>"$WORK/err.txt" &&
	   "$FSCK" --extract="$WORK/x" "$img" >/dev/null 2>&1; then
		return 0
	fi
	fail "$1: not built or not extracted: $(head -2 "$WORK/err.txt")"
	return 1
}
check() { # LABEL CONDITION...
	local label=$1
	shift
	if "$@"; then pass "$label"; else fail "$label"; fi
}
if built ok-fields-without-nul; then
	check "fields filling their width, no NULs: a 100-byte name" \
		test "$(cat "$WORK/x/$(printf 'n%.0s' $(seq 100))")" = hello
fi
if built ok-duplicates; then
	check "duplicates: the later file wins" test "$(cat "$WORK/x/a")" = 'second!'
	check "duplicates: a directory given again keeps its files, takes the new mode" \
		test "$(cat "$WORK/x/d/f"):$(stat -c %a "$WORK/x/d")" = "in d:700"
fi
if built ok-missing-parents; then
	check "missing parents: made 0755" \
		test "$(cat "$WORK/x/x/y/z/f"):$(stat -c %a "$WORK/x/x/y")" = "deep:755"
fi
built ok-no-end-marker && check "no end-of-archive blocks: accepted" test "$(cat "$WORK/x/f")" = data
if built ok-hardlink; then
	check "a hard link keeps the file it named when the name is replaced later" \
		test "$(cat "$WORK/x/g"):$(cat "$WORK/x/f")" = "linked:replaced"
fi
# zeros: an empty archive; the reader stops at the end marker, not at the end of the pipe
if { head -c 100G /dev/zero 2>/dev/null || true; } | timeout 60 "$MKFS" --tar=f --quiet "$img" &&
   "$FSCK" "$img" >/dev/null; then
	pass "100 GB of zeros from a pipe: an empty archive, read no further"
else
	fail "100 GB of zeros: not an empty image in time"
fi
finish
