#!/bin/bash
# Deep trees (issue 11, item 4): memory must stay O(inodes + depth) and time
# linear, whatever the path lengths.
#   wide: 800 nested directories with 255-byte names, 10,000 empty files at
#         the bottom (10,801 inodes): every file's path is 204 KB long, so
#         keeping a path per inode costs ~2 GB;
#   deep: 3,000 nested directories, files and hard links across the levels.
# Both are far past PATH_MAX: they are made by walking down with relative
# mkdir/chdir, and compared by a walk that does the same.  mkfs.erofs,
# fsck.erofs and fsck.erofs --extract must each peak under RSS_BOUND (the
# extraction also under a descriptor limit well below the depth), within a
# generous timeout, and the extraction must give the source tree back.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "$test_name: needs python3; skipped"; exit 77; }

RSS_BOUND_KB=${RSS_BOUND_KB:-204800}	# 200 MB
LIMIT=${DEEP_TIMEOUT:-600}		# seconds per command: a hang, not a time bound

# make_tree DIR DEPTH NAMELEN NFILES LINKS: walking down by relative names
make_tree() {
	python3 - "$@" <<'EOF'
import os, sys
root, depth, namelen, nfiles, links = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
	int(sys.argv[4]), sys.argv[5] == "links"
os.mkdir(root)
top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
os.chdir(top)
with open("top-file", "w") as f:
	f.write("at the top\n")
for i in range(depth):
	name = ("%05d" % i) + "d" * (namelen - 5)
	os.mkdir(name, 0o750 if i % 7 else 0o755)
	os.chdir(name)
	if links and i % 500 == 250:
		with open("level-file", "w") as f:
			f.write("level %d\n" % i)
		os.link("top-file", "link-to-top", src_dir_fd=top)	# a deep link to the top
		os.link("level-file", "link-from-level-%d" % i, dst_dir_fd=top)
for i in range(nfiles):
	open("f%05d" % i, "w").close()
if links:
	os.symlink("f00000" if nfiles else "top", "symlink")
EOF
}

# same_tree A B: the trees match (names, types, modes, owners, mtimes, sizes,
# bytes, symlink targets, hard-link groups), walked with two descriptors at a time
same_tree() {
	python3 - "$@" <<'EOF'
import os, stat, sys
def opendir(name, at):
	return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=at)
fds = [opendir(p, None) for p in sys.argv[1:3]]
stack, seq, groups = [], 0, [{}, {}]
names = sorted((e.name for e in os.scandir(fds[0])), reverse=True)
diff = None
def report(what):
	global diff
	diff = "entry %d (depth %d) %s" % (seq, len(stack), what)
while diff is None:
	if not names:
		if not stack:
			break
		up = [opendir("..", fd) for fd in fds]
		for fd in fds:
			os.close(fd)
		fds, names = up, stack.pop()
		continue
	name = names.pop()
	seq += 1
	st = [os.stat(name, dir_fd=fd, follow_symlinks=False) for fd in fds]
	for k in ("st_mode", "st_uid", "st_gid", "st_mtime_ns"):
		if getattr(st[0], k) != getattr(st[1], k):
			report("%s: %s %s != %s" % (name[:40], k, getattr(st[0], k), getattr(st[1], k)))
	if stat.S_ISREG(st[0].st_mode):
		data = []
		for fd in fds:
			f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
			data.append(os.read(f, 1 << 20))
			os.close(f)
		if data[0] != data[1]:
			report("%s: contents differ" % name[:40])
		if st[0].st_nlink > 1:
			for g, s in zip(groups, st):
				g.setdefault(s.st_ino, []).append(seq)
	elif stat.S_ISLNK(st[0].st_mode):
		if os.readlink(name, dir_fd=fds[0]) != os.readlink(name, dir_fd=fds[1]):
			report("%s: symlink targets differ" % name[:40])
	elif stat.S_ISDIR(st[0].st_mode):
		sub = [opendir(name, fd) for fd in fds]
		lists = [sorted((e.name for e in os.scandir(fd)), reverse=True) for fd in sub]
		if lists[0] != lists[1]:
			report("%s: entries differ" % name[:40])
		for fd in fds:
			os.close(fd)
		stack.append(names)
		fds, names = sub, lists[0]
if diff is None and sorted(groups[0].values()) != sorted(groups[1].values()):
	diff = "hard-link groups differ"
if diff:
	print(diff)
	sys.exit(1)
print("%d entries, %d hard-link groups" % (seq, len(groups[0])))
EOF
}

# peak_kb OUT CMD...: runs CMD with its output in OUT; prints its peak RSS (KB)
# and returns its exit status
peak_kb() {
	local out=$1
	shift
	python3 - "$out" "$@" <<'EOF'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
	rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
EOF
}

# bounded LABEL CMD...: CMD succeeds within the timeout, peaking under the bound
bounded() {
	local label=$1 kb rc=0
	shift
	kb=$(peak_kb "$WORK/cmd.log" timeout "$LIMIT" "$@") || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$label: exit $rc: $(tail -2 "$WORK/cmd.log" | cut -c1-300)"
	elif [ "$kb" -gt "$RSS_BOUND_KB" ]; then
		fail "$label: peak RSS $((kb / 1024)) MB, over $((RSS_BOUND_KB / 1024)) MB"
	else
		pass "$label: peak RSS $((kb / 1024)) MB"
	fi
	return "$rc"
}

check_tree() { # LABEL DEPTH NAMELEN NFILES LINKS
	local label=$1 src=$WORK/$1 img=$WORK/$1.img out=$WORK/$1.out
	make_tree "$src" "$2" "$3" "$4" "$5" || { fail "$label: cannot make the tree"; return; }
	bounded "$label: mkfs.erofs" "$MKFS" --quiet "$img" "$src"
	[ -s "$img" ] || { fail "$label: no image"; return; }
	bounded "$label: fsck.erofs" "$FSCK" "$img"
	# a descriptor limit far below the depth: the walk may not hold one per level
	bounded "$label: fsck.erofs --extract (ulimit -n 256)" \
		bash -c 'ulimit -n 256 && exec "$@"' - "$FSCK" --extract="$out" "$img" &&
		if result=$(same_tree "$src" "$out"); then
			pass "$label: extracted tree matches the source ($result)"
		else
			fail "$label: extracted tree differs: $result"
		fi
	rm -rf "$src" "$out" "$img"
}

check_tree wide 800 255 10000 nolinks
check_tree deep 3000 64 20 links
finish
