#!/usr/bin/env python3
"""overlay-apply.py [--strip] OUT LAYER_DIR...: the tree overlayfs shows of
directory layers stacked bottom first, written to OUT (the oracle of the
rebuild-mode tests; it shares no code with mkfs).

- a 0:0 character device (a whiteout) deletes the lower entry; it is kept
  in OUT too, unless --strip, as it would hide what lies below the stack;
- a directory with trusted.overlay.opaque="y" replaces the lower directory
  wholesale; a directory over a directory merges into it, taking the upper
  one's mode, owner, times and xattrs (a lower opaque marker, or a whiteout
  it replaces, makes the merged one opaque: it still hides deeper layers);
- anything else replaces the lower entry;
- files that share an inode inside one layer stay hard links.
With --strip, whiteouts, opaque markers and empty trusted.overlay.origin
xattrs are left out (mkfs.erofs --ovlfs-strip=1)."""
import os
import shutil
import stat
import sys

OPAQUE = "trusted.overlay.opaque"
ORIGIN = "trusted.overlay.origin"


def is_whiteout(st):
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def xattrs(path):
    try:
        return {n: os.getxattr(path, n, follow_symlinks=False)
                for n in os.listxattr(path, follow_symlinks=False)}
    except OSError:
        return {}


def set_xattrs(path, values, strip):
    for name in os.listxattr(path, follow_symlinks=False):
        os.removexattr(path, name, follow_symlinks=False)
    for name, value in values.items():
        if strip and (name == OPAQUE or (name == ORIGIN and not value)):
            continue
        os.setxattr(path, name, value, follow_symlinks=False)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def attrs(src, dst, st, strip, extra=None):
    values = xattrs(src)
    if extra:
        values.update(extra)
    if not stat.S_ISLNK(st.st_mode):
        set_xattrs(dst, values, strip)
    os.lchown(dst, st.st_uid, st.st_gid)
    if not stat.S_ISLNK(st.st_mode):
        os.chmod(dst, stat.S_IMODE(st.st_mode))
    os.utime(dst, ns=(st.st_mtime_ns, st.st_mtime_ns), follow_symlinks=False)


def copy_leaf(src, dst, st, links, strip):
    key = (st.st_dev, st.st_ino)
    if st.st_nlink > 1 and key in links:
        os.link(links[key], dst)
        return
    if stat.S_ISREG(st.st_mode):
        shutil.copyfile(src, dst)
    elif stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src), dst)
    elif stat.S_ISFIFO(st.st_mode):
        os.mkfifo(dst)
    else:
        os.mknod(dst, st.st_mode, st.st_rdev)
    attrs(src, dst, st, strip)
    if st.st_nlink > 1:
        links[key] = dst


def merge(src, dst, links, strip):
    for name in sorted(os.listdir(src)):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        st = os.lstat(s)
        lower = os.lstat(d) if os.path.lexists(d) else None
        if is_whiteout(st):
            remove(d)
            if not strip:
                copy_leaf(s, d, st, links, strip)
            continue
        if stat.S_ISDIR(st.st_mode):
            opaque = xattrs(s).get(OPAQUE) == b"y"
            extra = None
            if lower and stat.S_ISDIR(lower.st_mode) and not opaque:
                if xattrs(d).get(OPAQUE) == b"y":
                    extra = {OPAQUE: b"y"}
            else:
                if lower and is_whiteout(lower):
                    extra = {OPAQUE: b"y"}
                remove(d)
                os.mkdir(d)
            merge(s, d, links, strip)
            attrs(s, d, st, strip, extra)
            continue
        remove(d)
        copy_leaf(s, d, st, links, strip)


def main():
    args = sys.argv[1:]
    strip = bool(args) and args[0] == "--strip"
    if strip:
        args = args[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    out, layers = args[0], args[1:]
    os.makedirs(out, exist_ok=True)
    for layer in layers:
        links = {}
        st = os.lstat(layer)
        lower_opaque = xattrs(out).get(OPAQUE) == b"y"
        if xattrs(layer).get(OPAQUE) == b"y":
            for name in os.listdir(out):
                remove(os.path.join(out, name))
            lower_opaque = False
        merge(layer, out, links, strip)
        attrs(layer, out, st, strip, {OPAQUE: b"y"} if lower_opaque else None)


main()
