#!/usr/bin/env python3
"""tar-headerball.py TAR OUT: the "headerball" of a tar, what
mkfs.erofs --tar=headerball reads: every header as the tar has it (PAX
records and GNU long names with their data), but no file data after the
headers.  Python's tarfile re-encodes the headers, so names, owners,
times, xattrs and link targets come out as in the tar."""
import sys
import tarfile


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with tarfile.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as out:
        for ti in src:
            if ti.sparse:
                sys.exit("tar-headerball.py: %s: a sparse member" % ti.name)
            out.write(ti.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
        out.write(b"\0" * 1024)


main()
