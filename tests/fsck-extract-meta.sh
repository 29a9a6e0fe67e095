#!/bin/bash
# fsck.erofs --extract sets owner, mode and size without a system call per
# file where the new file is already right, and only there.  A fresh target
# (empty, not set-group-ID, no default ACL) needs no fchown, fchmod or
# ftruncate for a file owned by the extracting user with a plain mode, and
# no dup of its directory's descriptor; the owner thread does not sleep
# once per file (futex).  Counted with strace -f -c, for --workers=1 and 2.
# Wherever the shortcut would be wrong the tree must still match the
# source: owners other than ours, set-ID bits, modes the umask would cut,
# files ending in a hole, a set-group-ID target and a default ACL on it.
. "$(dirname "$0")/fsck-common.sh"

[ -x "$OUR_MKFS" ] || skip "our mkfs.erofs is not built"
[ "$(id -u)" -eq 0 ] || skip "needs root (owners)"

SRC=$WORK/src
NFILES=400
mkdir -p "$SRC/a/b" "$SRC/c"
python3 - "$SRC" "$NFILES" <<'PY' || { fail "cannot build the source tree"; finish; }
import os, random, sys
rnd = random.Random(11)
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    sub = ("a", "a/b", "c", ".")[i % 4]
    p = os.path.join(d, sub, "f%03d" % i)
    with open(p, "wb") as f:
        f.write(bytes(rnd.choice(b"erofs \n") for _ in range(rnd.randint(0, 9000))))
    os.chmod(p, (0o644, 0o444, 0o600, 0o755)[i % 4])
PY
# the few that need the slow path
chown 1234:5678 "$SRC/a/f000"
chown 0:5678 "$SRC/c/f002"
chmod 4755 "$SRC/a/f004"
chmod 2755 "$SRC/c/f006"
chmod 1777 "$SRC/a/b/f005"
chmod 0666 "$SRC/f003"
truncate -s 100000 "$SRC/a/b/f001"	# ends in a hole
chown 42:42 "$SRC/c"
# an access ACL (user 1234 rw, mask r): set after the file is made, it
# decides the mode, which must still come out as the source's
setfattr -n system.posix_acl_access \
	-v 0x0200000001000600ffffffff02000600d204000004000400ffffffff10000400ffffffff20000000ffffffff \
	"$SRC/a/f008" 2>/dev/null || echo "no ACLs on $SRC: that case not tested"
IMG=$WORK/img
mkfs_or_fail "lz4hc image" "$IMG" "$SRC" -z lz4hc || finish

# extract LABEL TARGET OPTIONS...: extracted and the same as the source
extract() {
	local label=$1 target=$2
	shift 2
	if "$FSCK" "$@" --extract="$target" "$IMG" >"$WORK/$label.log" 2>&1; then
		compare_trees "$label" "$SRC" "$target"
	else
		fail "$label: $(head -2 "$WORK/$label.log")"
	fi
}

for w in 1 2; do
	extract "fresh-w$w" "$WORK/fresh$w" --workers=$w
	(umask 077 && extract "umask-077-w$w" "$WORK/umask$w" --workers=$w)
done

# a set-group-ID target: new files would take its group
mkdir "$WORK/sgid"
chgrp 4242 "$WORK/sgid" && chmod 2755 "$WORK/sgid"
extract "set-group-ID target" "$WORK/sgid/t" --workers=2
mkdir "$WORK/sgid/t2" && chmod 2755 "$WORK/sgid/t2"
chgrp 4242 "$WORK/sgid/t2"
extract "set-group-ID empty target" "$WORK/sgid/t2" --workers=2

# a default ACL (u::rwx g::--- o::---) would cut new files' modes; its
# inherited ACLs are not in the image, so only owners and modes compare
mkdir "$WORK/acl"
if setfattr -n system.posix_acl_default \
	-v 0x0200000001000700ffffffff04000000ffffffff20000000ffffffff "$WORK/acl" 2>/dev/null; then
	if "$FSCK" --workers=2 --extract="$WORK/acl" "$IMG" >"$WORK/acl.log" 2>&1; then
		(cd "$SRC" && find . -printf '%p %m %U %G %s\n' | sort) >"$WORK/acl.a"
		(cd "$WORK/acl" && find . -printf '%p %m %U %G %s\n' | sort) >"$WORK/acl.b"
		diff -u "$WORK/acl.a" "$WORK/acl.b" >"$WORK/acl.diff" &&
			pass "default ACL on the target: modes and owners match" ||
			{ fail "default ACL on the target: modes differ"; head "$WORK/acl.diff" >&2; }
	else
		fail "default ACL target: $(head -2 "$WORK/acl.log")"
	fi
else
	echo "no default ACL on $WORK (file system without ACLs): that case not tested"
fi

# the system calls per file of a fresh extraction
if command -v strace >/dev/null; then
	for w in 1 2; do
		strace -f -c -o "$WORK/strace$w" "$FSCK" --workers=$w --extract="$WORK/st$w" "$IMG" \
			>/dev/null 2>&1 || { fail "--workers=$w under strace"; continue; }
		calls() { awk -v s="$1" '$NF == s { print ($4 ~ /^[0-9]+$/) ? $4 : $3 }' "$WORK/strace$w"; }
		per=0
		for s in fchown fchmod ftruncate fcntl; do
			n=$(calls $s)
			per=$((per + ${n:-0}))
		done
		# 12 files need fchown/fchmod/ftruncate, and each of 4 directories both
		if [ "$per" -le $((NFILES / 10)) ]; then
			pass "--workers=$w: $per fchown/fchmod/ftruncate/fcntl calls for $NFILES files"
		else
			fail "--workers=$w: $per fchown/fchmod/ftruncate/fcntl calls for $NFILES files"
			grep -E ' (fchown|fchmod|ftruncate|fcntl)$' "$WORK/strace$w" >&2
		fi
		# a sleep and a wake-up per file were two futex calls per file
		n=$(calls futex)
		if [ "${n:-0}" -le $((NFILES / 4)) ]; then
			pass "--workers=$w: ${n:-0} futex calls for $NFILES files"
		else
			fail "--workers=$w: $n futex calls for $NFILES files"
		fi
	done
	compare_trees "strace-extracted" "$SRC" "$WORK/st2"
else
	echo "no strace: the system call count not tested"
fi
finish
