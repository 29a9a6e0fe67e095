#!/bin/bash
# Makes the benchmark's many-small-files tree: 1,000,000 files of 1..4 KiB in
# 1,000 directories, with the same bytes on every run (fixed seed), so that
# images of it can be compared between tools and over time.  Most files are
# text-like (compressible, like sources and configs); one in eight is random
# bytes (incompressible, like already compressed data).
#
#   bench/gen-small-files.sh [DIR]   default $BENCH_DIR/small-1m
#                                    (BENCH_DIR default /var/tmp/erofs-bench)
#   FILES=N DIRS=M                   another size (FILES a multiple of DIRS)
#
# DIR is built as DIR.tmp and renamed when complete, so an existing DIR is a
# finished tree and is kept (cached); delete it to build it again.  The tree
# takes about 4 GB of disk (1,000,000 inodes and 4 KiB blocks).
set -euo pipefail
bench_dir=${BENCH_DIR:-/var/tmp/erofs-bench}
files=${FILES:-1000000}
dirs=${DIRS:-1000}
dir=${1:-$bench_dir/small-1m}
if [ -d "$dir" ]; then
	echo "gen-small-files: $dir exists (cached); delete it to build it again" >&2
	exit 0
fi
if [ "$dirs" -le 0 ] || [ $((files % dirs)) -ne 0 ]; then
	echo "gen-small-files: FILES ($files) must be a multiple of DIRS ($dirs)" >&2
	exit 1
fi
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.tmp"
echo "gen-small-files: writing $files files in $dirs directories into $dir ..." >&2
start=$SECONDS
python3 - "$dir.tmp" "$files" "$dirs" <<'EOF'
import os
import random
import sys

root, files, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per_dir = files // dirs
rng = random.Random(20240601)

# A corpus of text: lines of words from a small vocabulary with a skewed
# frequency, so that LZ4 finds matches the way it does in sources and configs.
# Files are slices of it at different offsets, so no two files are identical.
vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(2, 10)))
         for _ in range(2000)]
cum_weights = []
total = 0.0
for rank in range(len(vocab)):
	total += 1.0 / (rank + 1)
	cum_weights.append(total)
lines = []
size = 0
while size < 8 << 20:
	words = rng.choices(vocab, cum_weights=cum_weights, k=rng.randint(3, 12))
	line = "\t" * rng.randint(0, 3) + " ".join(words) + (";\n" if rng.random() < 0.5 else "\n")
	lines.append(line)
	size += len(line)
text = "".join(lines).encode()
noise = rng.randbytes(1 << 20)
max_size = 4096

flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
os.mkdir(root)
for d in range(dirs):
	path = os.path.join(root, "d%04d" % d)
	os.mkdir(path)
	for f in range(per_dir):
		i = d * per_dir + f
		length = 1024 + (i * 2654435761) % (max_size - 1024 + 1)	# 1..4 KiB
		if i % 8 == 7:
			start = (i * 40503) % (len(noise) - max_size)
			data = noise[start:start + length]
			name = "f%04d.bin" % f
		else:
			head = b"/* file %d */\n" % i
			start = (i * 7919 * 13) % (len(text) - max_size)
			data = head + text[start:start + length - len(head)]
			name = "f%04d.txt" % f
		fd = os.open(os.path.join(path, name), flags, 0o644)
		os.write(fd, data)
		os.close(fd)
EOF
mv "$dir.tmp" "$dir"
echo "gen-small-files: done in $((SECONDS - start)) s" >&2
