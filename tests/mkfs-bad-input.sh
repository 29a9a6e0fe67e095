#!/bin/bash
# Bad input: a clear message naming the path and the reason, a non-zero exit,
# and no image (nor temporary file) left behind.
. "$(dirname "$0")/lib.sh"
require_root

src=$WORK/src
mkdir -p "$src/dir"
echo data >"$src/dir/file"

no_image_left() { # LABEL IMAGE
	if compgen -G "$2*" >/dev/null; then
		fail "$1: left files behind: $(echo "$2"*)"
	else
		pass "$1: nothing left behind"
	fi
}

expect_failure "missing source" "$WORK/nope.*(No such file|cannot)" \
	"$MKFS" --quiet "$WORK/a.img" "$WORK/nope"
no_image_left "missing source" "$WORK/a.img"

expect_failure "source is a file" "$src/dir/file.*not a directory" \
	"$MKFS" --quiet "$WORK/b.img" "$src/dir/file"
no_image_left "source is a file" "$WORK/b.img"

expect_failure "image inside the source" "inside the source directory" \
	"$MKFS" --quiet "$src/dir/c.img" "$src"
no_image_left "image inside the source" "$src/dir/c.img"

expect_failure "image directory missing" "$WORK/missing/d.img.*No such file" \
	"$MKFS" --quiet "$WORK/missing/d.img" "$src"

# an unreadable file, as an unprivileged user (root reads everything)
if command -v setpriv >/dev/null; then
	chmod 0755 "$WORK"
	user_src=$WORK/user-src user_out=$WORK/user-out
	mkdir -p "$user_src/sub" "$user_out"
	echo secret >"$user_src/sub/secret"
	chmod 0000 "$user_src/sub/secret"
	chown -R 65534:65534 "$user_src" "$user_out"
	expect_failure "unreadable file" "sub/secret: cannot open: Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MKFS" --quiet "$user_out/e.img" "$user_src"
	no_image_left "unreadable file" "$user_out/e.img"
	chmod 0000 "$user_src/sub"
	expect_failure "unreadable directory" "sub: cannot open directory: Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MKFS" --quiet "$user_out/f.img" "$user_src"
	no_image_left "unreadable directory" "$user_out/f.img"
fi

# a full output filesystem
full=$WORK/full
mkdir "$full"
if mount -t tmpfs -o size=256k tmpfs "$full" 2>/dev/null; then
	head -c 1048576 /dev/zero >"$src/big"
	expect_failure "full output filesystem" "$full/g.img.*No space left" \
		"$MKFS" --quiet "$full/g.img" "$src"
	no_image_left "full output filesystem" "$full/g.img"
	umount "$full"
	rm "$src/big"
else
	echo "note: cannot mount a tmpfs here; full-filesystem case not run"
fi

# options
expect_failure "bad block size" "invalid block size 8192" "$MKFS" -b 8192 "$WORK/h.img" "$src"
expect_failure "odd block size" "invalid block size 3000" "$MKFS" -b 3000 "$WORK/h.img" "$src"
expect_failure "long label" "longer than 15 bytes" "$MKFS" -L 0123456789abcdef "$WORK/h.img" "$src"
expect_failure "bad uuid" "invalid UUID 'xyz'" "$MKFS" -U xyz "$WORK/h.img" "$src"
expect_failure "bad -E" "unknown extended option 'bogus'" "$MKFS" -E bogus "$WORK/h.img" "$src"
expect_failure "bad regex" "invalid --exclude-regex" "$MKFS" --exclude-regex='(' "$WORK/h.img" "$src"
expect_failure "bad number" "invalid timestamp '12x'" "$MKFS" -T 12x "$WORK/h.img" "$src"
expect_failure "missing source argument" "expected IMAGE and SOURCE_DIRECTORY" "$MKFS" "$WORK/h.img"
expect_failure "unknown option" "unrecognized option" "$MKFS" --no-such-option "$WORK/h.img" "$src"
no_image_left "option errors" "$WORK/h.img"
finish
