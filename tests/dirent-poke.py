#!/usr/bin/env python3
# dirent-poke.py IMAGE DIR NAME EDIT...: damages one directory entry of an
# uncompressed EROFS image (4 KiB-aligned metadata, plain or inline
# directories) the way a hostile image would, for tests/merge-hostile.sh.
#   DIR    the directory's path from the root ("/" for the root)
#   NAME   the entry's name
#   EDIT   nid=N | nid=PATH (that path's nid) | type=T (EROFS_FT_*, 0-7) |
#          slash (the name's first byte becomes '/') | empty (the name
#          becomes empty: its name offset moved to its end)
# Also: IMAGE nid PATH prints a path's nid; IMAGE where NID prints
# "OFFSET SLOT" of its record (byte offset, and its 32-byte slot in the
# block); IMAGE move DIR NID moves a directory's record (its inline tail
# too) to slot NID, which must be free, and repoints its names and "..".
import struct
import sys


class Image:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.b = bytearray(f.read())
        sb = 1024
        self.bits = self.b[sb + 12]
        self.bs = 1 << self.bits
        self.root = struct.unpack_from("<H", self.b, sb + 14)[0]
        self.meta = struct.unpack_from("<I", self.b, sb + 40)[0] * self.bs

    def inode(self, nid):
        at = self.meta + nid * 32
        fmt, icount = struct.unpack_from("<HH", self.b, at)
        ext = fmt & 1
        layout = (fmt >> 1) & 7
        size = struct.unpack_from("<Q" if ext else "<I", self.b, at + 8)[0]
        raw = struct.unpack_from("<I", self.b, at + 16)[0]
        isize = 64 if ext else 32
        xs = 12 + 4 * (icount - 1) if icount else 0
        return at, layout, size, raw, isize + xs

    def blocks(self, nid):
        at, layout, size, raw, rec = self.inode(nid)
        if layout not in (0, 2):
            sys.exit("dirent-poke.py: nid %d: layout %d, not a plain directory" % (nid, layout))
        n = (size + self.bs - 1) // self.bs
        for i in range(n):
            m = min(self.bs, size - i * self.bs)
            if layout == 2 and i == n - 1:
                yield at + rec, m
            else:
                yield raw * self.bs + i * self.bs, m

    def entries(self, nid):
        for blk, m in self.blocks(nid):
            n = struct.unpack_from("<H", self.b, blk + 8)[0] // 12
            for j in range(n):
                e = blk + 12 * j
                no = struct.unpack_from("<H", self.b, e + 8)[0]
                end = struct.unpack_from("<H", self.b, e + 20)[0] if j + 1 < n else m
                name = bytes(self.b[blk + no:blk + end]).rstrip(b"\0")
                yield e, blk + no, name, j + 1 < n

    def entry(self, nid, name):
        for e in self.entries(nid):
            if e[2] == name.encode():
                return e
        sys.exit("dirent-poke.py: no entry %r in nid %d" % (name, nid))

    def nid_of(self, path):
        nid = self.root
        for c in [c for c in path.split("/") if c]:
            nid = struct.unpack_from("<Q", self.b, self.entry(nid, c)[0])[0]
        return nid

    def save(self):
        with open(self.path, "r+b") as f:
            f.write(self.b)


def main():
    img = Image(sys.argv[1])
    if sys.argv[2] == "nid":
        print(img.nid_of(sys.argv[3]))
        return
    if sys.argv[2] == "move":	# IMAGE move DIRPATH NID: the directory's record moved
        path, to = sys.argv[3].rstrip("/"), int(sys.argv[4])
        old = img.nid_of(path)
        at, layout, size, raw, rec = img.inode(old)
        n = rec + (size % img.bs if layout == 2 else 0)
        subdirs = [struct.unpack_from("<Q", img.b, e)[0]
                   for e, _, name, _ in img.entries(old)
                   if name not in (b".", b"..") and img.b[e + 10] == 2]
        new = img.meta + to * 32
        img.b[new:new + n] = img.b[at:at + n]
        img.b[at:at + n] = bytes(n)
        parent, _, name = path.rpartition("/")
        struct.pack_into("<Q", img.b, img.entry(img.nid_of(parent or "/"), name)[0], to)
        struct.pack_into("<Q", img.b, img.entry(to, ".")[0], to)
        for sub in subdirs:
            struct.pack_into("<Q", img.b, img.entry(sub, "..")[0], to)
        img.save()
        return
    if sys.argv[2] == "where":
        at = img.inode(int(sys.argv[3]))[0]
        print(at, (at % img.bs) // 32)
        return
    e, nameat, name, has_next = img.entry(img.nid_of(sys.argv[2]), sys.argv[3])
    for edit in sys.argv[4:]:
        key, _, val = edit.partition("=")
        if key == "nid":
            nid = int(val) if val.isdigit() else img.nid_of(val)
            struct.pack_into("<Q", img.b, e, nid)
        elif key == "type":
            img.b[e + 10] = int(val)
        elif key == "slash":
            img.b[nameat] = ord("/")
        elif key == "empty":
            struct.pack_into("<H", img.b, e + 8,
                             struct.unpack_from("<H", img.b, e + 8)[0] + len(name))
        else:
            sys.exit("dirent-poke.py: unknown edit " + edit)
    img.save()


main()
