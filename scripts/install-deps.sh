#!/bin/bash
# Installs the Debian 12 packages erofs-forge builds, tests and benchmarks with.
set -euo pipefail
packages=(
	build-essential autoconf automake libtool pkg-config
	liblz4-dev uuid-dev libselinux1-dev libxxhash-dev nettle-dev
	liblzma-dev zlib1g-dev libdeflate-dev libzstd-dev libfuse3-dev fuse3
	libarchive-tools
	attr python3 util-linux xxd time
	erofs-utils squashfs-tools
	qemu-system-x86 busybox-static cpio xz-utils
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	selinux-utils libcap2-bin
	dmsetup e2fsprogs
	clang libclang-rt-14-dev
	patch bison flex libelf-dev libssl-dev bc dwarves
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
