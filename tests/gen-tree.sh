#!/bin/bash
# gen-tree.sh DIR: generates the test tree used by the round-trip and QEMU
# tests: every file type, ownership and mode case, xattrs of every namespace,
# hard links, long and unicode names, a big and a deep directory, files at
# block edges, large and sparse files, identical files.  Needs root.
# Content is pseudo-random but fixed, so two runs give the same bytes.
set -euo pipefail

root=${1:?usage: gen-tree.sh DIR}
mkdir -p "$root"
cd "$root"

# deterministic bytes from a seeded generator: fixed_files reads lines
# "SEED COUNT PATH" and writes COUNT bytes of the generator seeded with SEED
# to each PATH, all in one python3 (a python3 start can cost a second on
# a CI host whose python3 is pyenv's shim; this script needs some 50 files)
fixed_files() {
	python3 -c 'import random,sys
for line in sys.stdin:
    seed, count, path = line.rstrip("\n").split(" ", 2)
    with open(path, "wb") as f:
        f.write(random.Random(seed).randbytes(int(count)))'
}

mkdir sizes mixed .parts
mkdir -p links/x
sizes="0 1 31 32 100 2048 4000 4063 4064 4095 4096 4097 8191 8192 8193 12288 65536 65537"
{
	for n in $sizes; do echo "size$n $n sizes/f$n"; done
	echo "big 3145728 sizes/random-3m"
	for t in 5000 20000 65536; do
		for r in 1 1733 4096 9000; do
			echo "mixed$t-$r $r .parts/tail$t-$r"
			echo "mixed$r-$t $r .parts/head$r-$t"
		done
	done
	echo "hard 10000 links/x/original"
	echo "xattr-big 3000 .parts/big-value"
} | fixed_files

# --- regular files around block edges, large and sparse ---
head -c 5000000 < <(yes 'compressible line of text for erofs-forge') >sizes/text-5m
# compressible and incompressible data in one file, ending at odd offsets
for t in 5000 20000 65536; do
	for r in 1 1733 4096 9000; do
		{ head -c "$t" sizes/text-5m; cat ".parts/tail$t-$r"; } >"mixed/text$t-random$r"
		{ cat ".parts/head$r-$t"; head -c "$t" sizes/text-5m; } >"mixed/random$r-text$t"
	done
done
truncate -s 100M sizes/sparse-100m
printf 'middle' | dd of=sizes/sparse-100m bs=1 seek=52428800 conv=notrunc status=none
truncate -s 8193 sizes/sparse-small

# --- identical files and hard links ---
mkdir -p same/a same/b links/y
for d in same/a same/b; do cp sizes/random-3m "$d/copy"; cp sizes/f4097 "$d/small"; done
ln links/x/original links/x/second
ln links/x/original links/y/third
echo single >links/y/solo

# --- symlinks ---
mkdir symlinks
ln -s ../sizes/f1 symlinks/relative
ln -s /etc/hostname symlinks/absolute
ln -s does-not-exist symlinks/dangling
ln -s "$(printf 'a%.0s' $(seq 1 255))" symlinks/name-length
target=$(printf 'segment%02d/' $(seq 0 399))
ln -s "${target:0:4000}" symlinks/target-4000
ln -s "$(printf 'b%.0s' $(seq 1 4095))" symlinks/target-4095

# --- special files ---
mkdir special
mknod special/null c 1 3
mknod special/sda1 b 8 1
mknod special/big-numbers c 300 70000
mknod special/blk-zero b 0 0
mkfifo special/fifo
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' special/socket

# --- modes and owners ---
mkdir modes
for m in 0000 0400 0644 0755 0777 4755 2755 6755 1755 7777; do
	echo "$m" >"modes/file-$m"
	chmod "$m" "modes/file-$m"
done
mkdir modes/sticky-dir modes/setgid-dir modes/closed-dir
chmod 1777 modes/sticky-dir
chmod 2775 modes/setgid-dir
echo inside >modes/closed-dir/file
chmod 0000 modes/closed-dir
mkdir owners
for ids in 0:0 1000:1000 65534:65534 65535:65535 65536:1 70000:70000 4294967294:12345; do
	f=owners/u${ids%%:*}-g${ids##*:}
	echo "$ids" >"$f"
	chown "$ids" "$f"
done
ln -s target owners/symlink-owned
chown -h 1234:5678 owners/symlink-owned

# --- xattrs of every namespace ---
mkdir xattrs
echo data >xattrs/user
setfattr -n user.mime_type -v text/plain xattrs/user
setfattr -n user.empty xattrs/user
setfattr -n user.binary -v 0x00ff10 xattrs/user
echo data >xattrs/trusted
setfattr -n trusted.overlay.opaque -v y xattrs/trusted
echo data >xattrs/security
setfattr -n security.test -v label_t xattrs/security
# a valid POSIX ACL: user::rw- user:1000:rwx group::r-- mask::rwx other::r--
echo data >xattrs/acl
setfattr -n system.posix_acl_access \
	-v 0x0200000001000600ffffffff02000700e803000004000400ffffffff10000700ffffffff20000400ffffffff \
	xattrs/acl
mkdir xattrs/acl-dir
setfattr -n system.posix_acl_default \
	-v 0x0200000001000700ffffffff04000500ffffffff20000500ffffffff xattrs/acl-dir
echo data >xattrs/big-value
setfattr -n user.big -v "0x$(od -An -v -tx1 .parts/big-value | tr -d ' \n')" xattrs/big-value
rm -r .parts
for i in 1 2 3 4 5 6; do
	echo "$i" >"xattrs/shared-$i"
	setfattr -n user.shared -v same-everywhere "xattrs/shared-$i"
	setfattr -n user.own -v "value-$i" "xattrs/shared-$i"
done
setfattr -n user.on-dir -v yes xattrs
ln -s user xattrs/symlink-with-xattr
setfattr -h -n trusted.symlink -v yes xattrs/symlink-with-xattr
many=xattrs/many
echo data >$many
for i in $(seq 1 40); do setfattr -n "user.attribute-number-$i" -v "value $i" $many; done

# --- names ---
mkdir names
long=$(printf 'L%.0s' $(seq 1 255))
echo long >"names/$long"
for n in 'héllo' '日本語のファイル' '🙂 emoji' 'with space' 'tab	in' $'new\nline' \
	'!bang' '#hash' '+plus' '-dash' ',comma' '..dots' '.hidden' '~tilde' 'UPPER' 'lower' \
	'%percent' 'back\slash' '=equals' ';semi'; do
	echo "$n" >"names/$n"
done

# --- a big directory and a deep one ---
mkdir big-dir
for i in $(seq 1 3000); do
	printf -v pad '%0*d' $((i % 40)) 0	# not $(printf): 3000 forks cost seconds on some hosts
	: >"big-dir/entry-$i-$pad"
done
deep=deep
for i in $(seq 1 60); do deep="$deep/level-$i"; done
mkdir -p "$deep"
echo bottom >"$deep/file"
mkdir empty-dir

# --- mtimes: nanoseconds, before 1970, after 2038, equal groups ---
mkdir times
touch -d '1960-06-01 12:00:00.123456789' times/before-1970
touch -d '2100-01-01 00:00:00.5' times/after-2038
touch -d '2001-02-03 04:05:06.000000007' times/nanoseconds
touch -h -d '1999-12-31 23:59:59.999999999' symlinks/relative
for i in 1 2 3 4 5; do echo "$i" >"times/same-$i"; touch -d '2020-01-01 00:00:00' "times/same-$i"; done

# directories last, so that filling them does not change their mtimes
find . -type d -exec touch -h -d '2024-05-06 07:08:09.101112131' {} +
touch -d '2010-10-10 10:10:10' xattrs
