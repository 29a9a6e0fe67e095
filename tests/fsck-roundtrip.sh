#!/bin/bash
# fsck.erofs round trips: images of a tree with every file type, owner, mode,
# mtime and xattr case are built by our mkfs.erofs (and Debian's, when it is
# installed, with its chunked layouts), plain and LZ4-compressed, checked,
# extracted and compared with the source tree.  Also the command line:
# options, exit codes, -p.  (tests/fsck-compressed.sh covers compression
# in depth.)
. "$(dirname "$0")/fsck-common.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (devices, owners, trusted xattrs)"

SRC=$WORK/src
mkdir -p "$SRC"
(
	set -e
	cd "$SRC"
	: >empty
	printf x >one
	head -c 4095 /dev/urandom >edge-4095
	head -c 4096 /dev/urandom >edge-4096
	head -c 4097 /dev/urandom >edge-4097
	head -c 200000 /dev/urandom >big
	# sparse: data, a hole, data, a trailing hole
	truncate -s 3M sparse
	printf 'head' | dd of=sparse conv=notrunc status=none
	head -c 5000 /dev/urandom | dd of=sparse bs=4096 seek=300 conv=notrunc status=none
	truncate -s 1M zeros
	mkdir -p dir/sub/deeper many
	printf 'shared' >dir/linked
	ln dir/linked hard1
	ln dir/linked dir/sub/hard2
	ln -s edge-4095 rel-link
	ln -s /nonexistent/absolute abs-link
	ln -s "$(printf 'L%.0s' $(seq 1 3000))" long-link
	mkfifo fifo
	mknod chr c 1 7
	mknod blk b 7 200000
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock 2>/dev/null ||
		mknod sock p
	for i in $(seq 1 300); do printf '%s' "$i" >"many/entry-with-a-long-name-$i"; done
	touch "$(printf 'n%.0s' $(seq 1 200))"
	touch -- 'space name' "$(printf 'new\nline')" 'ünïcödé' '-dash' '.hidden'
	chmod 4755 edge-4095; chmod 2750 edge-4096; chmod 1777 dir/sub; chmod 0 one
	chmod 0555 dir/sub/deeper
	chown 1234:5678 big; chown 70000:80000 edge-4097; chown -h 42:43 rel-link
	setfattr -n user.color -v blue big
	setfattr -n user.bin -v 0x00ff00ff big
	setfattr -n trusted.t -v secret dir
	setfattr -n security.s -v label edge-4096
	for f in edge-4095 edge-4096 edge-4097; do setfattr -n user.common -v same "$f"; done
	setfattr -n trusted.lnk -v 1 -h rel-link
	# ACLs written as raw xattr values (no setfacl needed)
	setfattr -n system.posix_acl_access -v 0x02000000010007000000000002000700e8030000040005000000000010000700000000002000050000000000 dir
	setfattr -n system.posix_acl_default -v 0x0200000001000700000000000400050000000000080005006400000010000500000000002000050000000000 dir
	touch -h -d '2001-02-03 04:05:06.123456789' big rel-link dir/sub
	touch -d '1969-12-31 23:59:58.5' edge-4097
	touch -d '2038-01-19 03:14:08' one
)
[ $? -eq 0 ] || { fail "cannot build the source tree"; finish; }

roundtrip() { # LABEL MKFS [OPTIONS...]
	local label=$1 mkfs=$2 img=$WORK/$1.img out=$WORK/$1.out
	shift 2
	if ! "$mkfs" "$@" "$img" "$SRC" >"$WORK/$label.mkfs.log" 2>&1; then
		fail "$label: mkfs failed: $(tail -1 "$WORK/$label.mkfs.log")"
		return
	fi
	if "$FSCK" "$img" >"$WORK/$label.fsck.log" 2>&1; then
		pass "$label: fsck finds no errors"
	else
		fail "$label: fsck: $(head -3 "$WORK/$label.fsck.log")"
	fi
	if "$FSCK" --extract="$out" "$img" >"$WORK/$label.x.log" 2>&1; then
		pass "$label: extraction succeeds"
	else
		fail "$label: extraction: $(head -3 "$WORK/$label.x.log")"
	fi
	compare_trees "$label" "$SRC" "$out"
	# hard links come back as hard links, sparse files stay sparse
	if [ "$(stat -c %i "$out/dir/linked")" = "$(stat -c %i "$out/dir/sub/hard2")" ] &&
	   [ "$(stat -c %h "$out/hard1")" = 3 ]; then
		pass "$label: hard links restored"
	else
		fail "$label: hard links not restored"
	fi
	if [ "$(stat -c %b "$out/zeros")" -lt 64 ] && [ "$(stat -c %b "$out/sparse")" -lt 256 ]; then
		pass "$label: holes and zero blocks extracted sparse"
	else
		fail "$label: sparse files extracted dense ($(stat -c %b "$out/sparse") blocks)"
	fi
	rm -rf "$out"
}

if [ -x "$OUR_MKFS" ]; then
	roundtrip ours "$OUR_MKFS" --quiet
	roundtrip ours-b512 "$OUR_MKFS" --quiet -b 512
	roundtrip ours-b1024 "$OUR_MKFS" --quiet -b 1024
	roundtrip ours-b2048 "$OUR_MKFS" --quiet -b 2048
	roundtrip ours-shared "$OUR_MKFS" --quiet -x 0
	roundtrip ours-noinline "$OUR_MKFS" --quiet -E noinline_data
	roundtrip ours-extended "$OUR_MKFS" --quiet -E force-inode-extended
	roundtrip ours-lz4 "$OUR_MKFS" --quiet -z lz4
	roundtrip ours-lz4hc-big "$OUR_MKFS" --quiet -z lz4hc -C 65536
	roundtrip ours-lz4hc-full "$OUR_MKFS" --quiet -z lz4hc -C 16384 -E legacy-compress
else
	fail "our mkfs.erofs is not built"
fi
if [ -n "$DEB_MKFS" ]; then
	roundtrip deb "$DEB_MKFS" --quiet
	roundtrip deb-chunk-map "$DEB_MKFS" --quiet --chunksize=4096
	roundtrip deb-chunk-map8k "$DEB_MKFS" --quiet --chunksize=8192 -Eforce-inode-blockmap
	roundtrip deb-chunk-idx "$DEB_MKFS" --quiet --chunksize=16384 -Eforce-chunk-indexes
	roundtrip deb-extended "$DEB_MKFS" --quiet -Eforce-inode-extended
	roundtrip deb-noinline "$DEB_MKFS" --quiet -Enoinline_data
	roundtrip deb-lz4 "$DEB_MKFS" --quiet -zlz4
	roundtrip deb-lz4hc-big "$DEB_MKFS" --quiet -zlz4hc -C65536
	roundtrip deb-lz4-full "$DEB_MKFS" --quiet -zlz4 -Elegacy-compress
else
	echo "Debian's mkfs.erofs not installed: its images are not tested"
fi

# ---- the command line ----
IMG=$WORK/ours.img
[ -f "$IMG" ] || IMG=$WORK/deb.img
cli() { # LABEL EXPECTED_RC GREP_PATTERN ARGS...
	local label=$1 want=$2 pat=$3 rc
	shift 3
	"$FSCK" "$@" >"$WORK/cli.log" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$WORK/cli.log"; then
		pass "cli: $label"
	else
		fail "cli: $label: rc $rc (want $want): $(head -2 "$WORK/cli.log")"
	fi
}
cli "-V" 0 'fsck.erofs' -V
cli "--version" 0 'fsck.erofs' --version
cli "--help" 0 'extract\[=DIR\]' --help
cli "-h" 0 'no-preserve-perms' -h
cli "no image" 2 'missing IMAGE'
cli "two images" 2 'unexpected argument' "$IMG" "$IMG"
cli "unknown option" 2 'unknown option' --frobnicate "$IMG"
cli "bad -d" 2 'invalid debug level' -d x "$IMG"
cli "-d 3 (separate)" 0 'superblock: block size' -d 3 "$IMG"
cli "-d3 (attached)" 0 'superblock: block size' -d3 "$IMG"
cli "-a -y -n ignored" 0 'no errors found' -a -y -n "$IMG"
cli "-p statistics" 0 'regular files: +3[0-9][0-9]' -p "$IMG"
cli "-p image size" 0 'image size: +[0-9]+ bytes' -p "$IMG"
cli "-p without compression" 0 'compressed files: +0$' -p "$IMG"
[ -f "$WORK/ours-lz4.img" ] &&
	cli "-p compression" 0 'compressed files: +[1-9][0-9]*, [0-9]+ bytes stored in [0-9]+ bytes \([0-9.]+%\)' -p "$WORK/ours-lz4.img"
cli "--extract without DIR" 0 'no errors found' --extract "$IMG"
cli "extraction options need DIR" 0 'ignored without --extract=DIR' --overwrite "$IMG"
cli "--extract= empty" 2 'needs a directory' --extract= "$IMG"
cli "missing image file" 2 'cannot open' "$WORK/nope.img"
cli "not an image" 1 'bad magic' "$SRC/big"
cli "a directory as image" 2 'neither a regular file' "$SRC"

# --no-preserve: owned by us, umask applied, no setuid
if "$FSCK" --extract="$WORK/np" --no-preserve "$IMG" >"$WORK/np.log" 2>&1 &&
   [ "$(stat -c %a "$WORK/np/edge-4095")" = "$(printf '%o' $((0755 & ~$(umask))))" ] &&
   [ "$(stat -c %u "$WORK/np/big")" = 0 ]; then
	pass "--no-preserve drops setuid and applies the umask"
else
	fail "--no-preserve: $(stat -c '%a %u' "$WORK/np/edge-4095" "$WORK/np/big" 2>&1)"
fi
finish
