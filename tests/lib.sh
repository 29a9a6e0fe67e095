# Shared helpers for the shell tests (sourced).  The automake harness exports
# top_srcdir and top_builddir; run by hand, they default to the checkout and
# its ./build folder.
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
MKFS=${MKFS:-$top_builddir/mkfs/mkfs.erofs}
FSCK=${FSCK:-$top_builddir/fsck/fsck.erofs}
MANIFEST=${MANIFEST:-$top_builddir/tools/erofs-manifest}
GEN_TREE=$top_srcdir/tests/gen-tree.sh

# one scratch folder per test, removed on success or skip (77), kept on failure
test_name=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/erofs-forge-$test_name.XXXXXX")
failures=0
on_exit() {
	local rc=$?
	if { [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; } && [ "$failures" -eq 0 ]; then
		rm -rf "$WORK"
	else
		echo "$test_name: scratch files kept in $WORK" >&2
	fi
}
trap on_exit EXIT

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

pass() {
	echo "ok: $*"
}

# finish: exit status for the harness
finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$test_name: $failures check(s) failed" >&2
		exit 1
	fi
	exit 0
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$test_name: needs root (devices, ownership, trusted xattrs); skipped"
		exit 77
	fi
}

# same_manifest LABEL A_DIR B_DIR [manifest options]: the two trees match
same_manifest() {
	local label=$1 a=$2 b=$3
	shift 3
	"$MANIFEST" "$@" "$a" >"$WORK/$label.a.manifest"
	"$MANIFEST" "$@" "$b" >"$WORK/$label.b.manifest"
	if diff -u "$WORK/$label.a.manifest" "$WORK/$label.b.manifest" >"$WORK/$label.diff"; then
		pass "$label: trees match"
	else
		fail "$label: trees differ:"
		head -40 "$WORK/$label.diff" >&2
	fi
}

# ours_extract LABEL IMAGE SOURCE [OPTIONS...]: our fsck.erofs extracts the
# image (given OPTIONS too), and the tree matches SOURCE
ours_extract() {
	local label=$1 img=$2 src=$3
	rm -rf "$WORK/ours"
	if "$FSCK" "${@:4}" --extract="$WORK/ours" "$img" >"$WORK/ours.log" 2>&1; then
		same_manifest "$label-ours" "$src" "$WORK/ours"
	else
		fail "$label: our fsck.erofs rejected the image:"
		tail -5 "$WORK/ours.log" >&2
	fi
	rm -rf "$WORK/ours"
}

# expect_failure LABEL PATTERN CMD...: CMD fails and its stderr matches PATTERN
expect_failure() {
	local label=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$label: succeeded but should have failed"
	elif ! grep -qE -- "$pattern" "$WORK/err.txt"; then
		fail "$label: exit $rc but the message does not match /$pattern/:"
		cat "$WORK/err.txt" >&2
	else
		pass "$label: $(head -1 "$WORK/err.txt")"
	fi
}

# the second, independent reader (reader2_*)
. "$top_srcdir/tests/second-reader.sh"
