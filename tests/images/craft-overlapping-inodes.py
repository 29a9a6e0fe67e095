#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Crafts overlapping-chunk-tables.img: K inodes laid over each other's
chunk tables, which made fsck.erofs's work grow with K times the table.

    craft-overlapping-inodes.py OUT.img [K]      (the stored image: K = 2000)

512-byte blocks.  The root directory (nid 0) lists K regular files at nids
1, 3, 5, ...: extended, chunk-based inodes of 2^32 - 1 bytes in 128 KiB
chunks, so each has a table of 32768 four-byte block addresses starting
right after its 64-byte core, over the next 2048 inodes.  Read as table
entries, every word of such an inode is a valid block address or a hole:
i_format | xattr_icount = 9, i_mode = 0x81a4 (so the image is 33,188+
blocks, mostly zeros), the two halves of i_size = 0xFFFFFFFF (a hole) and
0, i_u = 8 (the chunk format), i_nlink = 1, the rest 0.  Every inode is
sound on its own; together, checking each one's data maps 32768 chunks
per inode.  fsck.erofs now claims each inode's metadata (core, xattrs, table)
and does not walk an inode reaching into metadata claimed before.
"""
import struct
import sys

out = sys.argv[1]
K = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
BITS = 9
BS = 1 << BITS
META_BLK = 4                   # nid 0 at byte 2048
FIRST = 33189                  # i_mode 0x81a4 read as a block address must exist

names = [b'.', b'..'] + [b'f%05d' % i for i in range(K)]
ents = [(0, 2), (0, 2)] + [(1 + 2 * i, 1) for i in range(K)]   # (nid, file type)


def dirblock(es):
    """One directory block: dirents, then names; returns (bytes, bytes used)."""
    n = len(es)
    b = bytearray(BS)
    off = 12 * n
    for j, (nm, (nid, ft)) in enumerate(es):
        struct.pack_into('<QHBB', b, 12 * j, nid, off, ft, 0)
        b[off:off + len(nm)] = nm
        off += len(nm)
    return b, off


allents = list(zip(names, ents))
blocks = []
i = 0
while i < len(allents):
    j = i + 1
    while j <= len(allents) and dirblock(allents[i:j])[1] <= BS:
        j += 1
    blocks.append(allents[i:j - 1])
    i = j - 1

# room for a 128 KiB chunk at the largest block address an inode word makes
nblocks = max(FIRST + len(blocks), 33188 + 256 + 1)
img = bytearray(nblocks * BS)
dirsize = 0
for b, es in enumerate(blocks):
    data, used = dirblock(es)
    img[(FIRST + b) * BS:(FIRST + b + 1) * BS] = data
    dirsize = b * BS + used

base = META_BLK * BS
# root: compact, FLAT_PLAIN directory, data at block FIRST
struct.pack_into('<HHHHIIIIHHI', img, base, 0, 0, 0o40755, 2, dirsize, 0, FIRST, 0, 0, 0, 0)
for v in range(K):
    off = base + (1 + 2 * v) * 32
    # i_format: extended (bit 0), CHUNK_BASED (4 << 1); i_xattr_icount,
    # i_mode, i_reserved, i_size, i_u (chunk format 8), i_ino, i_uid,
    # i_gid, i_mtime, i_mtime_nsec, i_nlink
    struct.pack_into('<HHHHQIIIIQII', img, off, (4 << 1) | 1, 0, 0o100644, 0,
                     0xFFFFFFFF, 8, 0, 0, 0, 0, 0, 1)
assert base + (1 + 2 * K) * 32 + 32768 * 4 < FIRST * BS

# superblock: magic, checksum (none), compat, blkszbits, extslots, root nid,
# inodes, build time, nsec, blocks, meta_blkaddr, xattr_blkaddr
sb = struct.pack('<IIIBBHQQIIII', 0xE0F5E1E2, 0, 0, BITS, 0, 0, K + 1, 0, 0,
                 nblocks, META_BLK, 0)
img[1024:1024 + len(sb)] = sb
struct.pack_into('<I', img, 1024 + 0x50, 0x4)   # feature_incompat: CHUNKED_FILE
with open(out, 'wb') as f:
    f.write(img)
