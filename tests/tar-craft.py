#!/usr/bin/env python3
"""tar-craft.py CASE OUT: writes one crafted tar (valid or hostile) for the
tests.  Our own generator: every header is built field by field here, so a
test can break exactly one thing.  `tar-craft.py --list` prints the cases."""
import sys

BLOCK = 512


def octal(value, width):
    """A numeric field: octal digits, NUL-terminated."""
    return ("%0*o" % (width - 1, value)).encode() + b"\0"


def header(name, size=0, typeflag=b"0", link=b"", mode=0o644, uid=0, gid=0, mtime=1700000000,
           fields=None, fix_checksum=True):
    """A ustar header; fields: {offset: bytes} written over it before the checksum."""
    h = bytearray(BLOCK)
    h[0:100] = name[:100].ljust(100, b"\0")
    h[100:108] = octal(mode, 8)
    h[108:116] = octal(uid, 8)
    h[116:124] = octal(gid, 8)
    h[124:136] = octal(size, 12) if isinstance(size, int) else size
    h[136:148] = octal(mtime, 12)
    h[156:157] = typeflag
    h[157:257] = link[:100].ljust(100, b"\0")
    h[257:265] = b"ustar\x0000"
    for off, data in (fields or {}).items():
        h[off:off + len(data)] = data
    if fix_checksum:
        h[148:156] = b" " * 8
        h[148:156] = ("%06o" % sum(h)).encode() + b"\0 "
    return bytes(h)


def data(payload):
    return payload + b"\0" * (-len(payload) % BLOCK)


def pax(records, typeflag=b"x", name=b"./PaxHeaders/x"):
    body = b""
    for key, value in records:
        rec = b" " + key + b"=" + value + b"\n"
        n = len(rec) + 1
        while len(str(n)) + len(rec) != n:
            n += 1
        body += str(n).encode() + rec
    return header(name, len(body), typeflag) + data(body)


END = b"\0" * (2 * BLOCK)


def file_entry(name, payload, **kw):
    return header(name, len(payload), **kw) + data(payload)


CASES = {
    # valid: must build
    "ok-fields-without-nul": lambda: header(b"n" * 100, 5, fields={
        100: b"00000644", 108: b"00000000", 116: b"00000000", 124: b"00000000005",
        136: b"15000000000"}) + data(b"hello") + END,
    "ok-zeros": lambda: b"\0" * (64 * BLOCK),
    "ok-duplicates": lambda: (file_entry(b"a", b"first") + file_entry(b"a", b"second!") +
                              header(b"d/", 0, b"5") + file_entry(b"d/f", b"in d") +
                              header(b"d/", 0, b"5", mode=0o700) + END),
    "ok-missing-parents": lambda: file_entry(b"x/y/z/f", b"deep") + END,
    "ok-no-end-marker": lambda: file_entry(b"f", b"data"),
    "ok-hardlink": lambda: (file_entry(b"f", b"linked") + header(b"g", 0, b"1", link=b"f") +
                            file_entry(b"f", b"replaced") + END),
    # hostile: must fail with a message naming the entry and its offset
    "negative-size": lambda: header(b"f", b"\xff" * 12) + END,
    "overflowing-size": lambda: header(b"f", b"\x80" + b"\xff" * 11) + END,
    "absurd-size": lambda: header(b"f", b"\x80" + b"\0" * 4 + b"\x01" + b"\0" * 6) + END,
    "truncated-data": lambda: header(b"f", 100000) + b"x" * 1000,
    "truncated-header": lambda: file_entry(b"f", b"ok") + header(b"g")[:300],
    "bad-checksum": lambda: header(b"f", 0, fix_checksum=False) + END,
    "garbage": lambda: bytes((i * 7919 + 13) % 251 for i in range(4 * BLOCK)),
    "field-without-terminator": lambda: header(b"f", 0, fields={100: b"00000649"}) + END,
    "dotdot": lambda: file_entry(b"a/../../etc/passwd", b"x") + END,
    "absolute": lambda: file_entry(b"/etc/passwd", b"x") + END,
    "empty-name": lambda: file_entry(b"", b"x") + END,
    "symlink-then-beneath": lambda: (header(b"l", 0, b"2", link=b"/etc") +
                                     file_entry(b"l/passwd", b"x") + END),
    "name-over-path-max": lambda: pax([(b"path", b"d/" * 2100 + b"f")]) + file_entry(b"f", b"x")
    + END,
    "pax-record-too-long": lambda: header(b"p", 20, b"x") + data(b"999 path=abc\n1234567") + END,
    "pax-huge": lambda: header(b"p", 1 << 30, b"x") + END,
    "long-name-huge": lambda: header(b"././@LongLink", 1 << 30, b"L") + END,
    "hardlink-to-missing": lambda: header(b"g", 0, b"1", link=b"nothing") + END,
    "hardlink-to-dir": lambda: header(b"d", 0, b"5") + header(b"g", 0, b"1", link=b"d") + END,
    "root-not-dir": lambda: file_entry(b"./", b"x", typeflag=b"0") + END if False else
    file_entry(b".", b"x") + END,
    "extension-without-entry": lambda: pax([(b"path", b"f")]) + END,
    "sparse-past-end": lambda: pax([(b"GNU.sparse.size", b"10"), (b"GNU.sparse.offset", b"5"),
                                    (b"GNU.sparse.numbytes", b"100")]) +
    file_entry(b"s", b"y" * 100) + END,
    "pax-bad-mtime": lambda: pax([(b"mtime", b"12x.5")]) + file_entry(b"f", b"x") + END,
    "billion-zero-blocks": lambda: header(b"f", b"\x80" + b"\0" * 6 + b"\x7f" + b"\xff" * 4)
    + b"\0" * (4 * BLOCK),
}

if __name__ == "__main__":
    if sys.argv[1] == "--list":
        print("\n".join(CASES))
        sys.exit(0)
    with open(sys.argv[2], "wb") as out:
        out.write(CASES[sys.argv[1]]())
