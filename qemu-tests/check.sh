#!/bin/bash
# Automake TEST wrapper for the QEMU kernel-verification suite (run.sh).
# Exit 0: all passed; 1: any failure (including a setup error); 77: skipped,
# only when QEMU itself is not installed.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QEMU=${QEMU:-qemu-system-x86_64}
if ! command -v "$QEMU" > /dev/null; then
	echo "check.sh: $QEMU not installed (apt-get install qemu-system-x86); skipped"
	exit 77
fi
export top_srcdir=${top_srcdir:-$(dirname "$here")}
export top_builddir=${top_builddir:-$PWD}
if bash "$here/run.sh"; then
	exit 0
fi
exit 1
