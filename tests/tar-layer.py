#!/usr/bin/env python3
"""tar-layer.py DIR: a container layer pair for the whiteout tests.

DIR/lower/      a small tree (the layer below)
DIR/upper.tar   a PAX layer over it, with aufs-style whiteouts (.wh.NAME)
                and an opaque directory (.wh..wh..opq), as image builders
                write them
DIR/merged/     what a container runtime shows: lower with upper applied
                (whiteouts delete, opaque hides the lower directory's
                entries, then upper's own entries are extracted)
DIR/upper-plain/  upper's own entries without whiteouts (--ovlfs-strip=1)
Times are fixed, so two runs give the same bytes."""
import io
import os
import shutil
import sys
import tarfile

T = 1700000000


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def lower(root):
    write(f"{root}/a/keep", b"kept\n")
    write(f"{root}/a/gone", b"deleted by a whiteout\n")
    write(f"{root}/b/x", b"hidden by opaque\n")
    write(f"{root}/b/sub/y", b"hidden too\n")
    write(f"{root}/c/old", b"old content\n")
    write(f"{root}/d/sub/file", b"a deleted directory\n")
    write(f"{root}/e", b"deleted at the top\n")
    write(f"{root}/big", bytes(range(256)) * 4096)
    os.symlink("a/keep", f"{root}/link")
    for dirpath, dirs, files in os.walk(root, topdown=False):
        for n in files + dirs:
            os.utime(os.path.join(dirpath, n), (T, T), follow_symlinks=False)
    os.utime(root, (T, T))


# (name, kind, data): kind "dir", "file", "wh" (whiteout), "opq"
UPPER = [
    ("a", "dir", None), ("a/.wh.gone", "wh", None),
    ("b", "dir", None), ("b/.wh..wh..opq", "opq", None), ("b/new", "file", b"new in b\n"),
    ("c", "dir", None), ("c/old", "file", b"new content\n"),
    (".wh.e", "wh", None),
    ("d", "dir", None), ("d/.wh.sub", "wh", None),
    ("f", "dir", None), ("f/newdir", "dir", None), ("f/newdir/file", "file", b"brand new\n"),
]


def upper_tar(path):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data in UPPER:
            info = tarfile.TarInfo(name)
            info.mtime = T + 100
            info.uname = info.gname = "root"
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                t.addfile(info)
            else:
                data = data or b""
                info.size, info.mode = len(data), 0o644
                t.addfile(info, io.BytesIO(data))


def apply(root, plain):
    """Applies UPPER over root (plain: whiteouts ignored, as --ovlfs-strip=1)."""
    for name, kind, _ in UPPER:
        parent, base = os.path.split(name)
        if kind == "wh" and not plain:
            victim = os.path.join(root, parent, base[4:])
            if os.path.isdir(victim) and not os.path.islink(victim):
                shutil.rmtree(victim)
            elif os.path.lexists(victim):
                os.unlink(victim)
        elif kind == "opq" and not plain:
            d = os.path.join(root, parent)
            for n in os.listdir(d):
                p = os.path.join(d, n)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
    for name, kind, data in UPPER:
        p = os.path.join(root, name)
        if kind == "dir":
            os.makedirs(p, exist_ok=True)
            os.chmod(p, 0o755)
        elif kind == "file":
            write(p, data)
    # times last: deleting and creating changed the directories'
    for name, kind, _ in reversed(UPPER):
        if kind in ("dir", "file"):
            os.utime(os.path.join(root, name), (T + 100, T + 100))


def main(out):
    os.makedirs(out)
    lower(f"{out}/lower")
    upper_tar(f"{out}/upper.tar")
    shutil.copytree(f"{out}/lower", f"{out}/merged", symlinks=True)
    apply(f"{out}/merged", False)
    os.utime(f"{out}/merged", (T + 100, T + 100))   # the layer's root, dated as its newest
    os.makedirs(f"{out}/upper-plain")
    apply(f"{out}/upper-plain", True)
    os.utime(f"{out}/upper-plain", (T + 100, T + 100))


if __name__ == "__main__":
    main(sys.argv[1])
