#!/bin/bash
# qemu-tests/fetch-kernel.sh: fetch and unpack a newer Debian kernel for the
# QEMU suite, without installing it and without touching the machine's apt
# sources or state.
#
# usage: fetch-kernel.sh SERIES [DEST]
#   SERIES  6.12  newest linux-image-6.12.*-amd64 of bookworm-backports
#           7     newest linux-image-7.*-amd64 of trixie-backports
#   DEST    where the kernel is unpacked (default:
#           $top_builddir/qemu-tests/kernels, top_builddir defaulting to $PWD)
#
# Prints one line "KVER ROOT": ROOT/boot/vmlinuz-KVER and
# ROOT/lib/modules/KVER/ (modules.dep, kernel/...) are the unpacked package.
# Exit 1 with the reason on stderr when the kernel cannot be fetched.
#
# apt runs with a private sources list, lists, cache and an empty dpkg
# status (all under $KERNEL_CACHE, default /var/tmp/erofs-forge-kernels),
# so the .deb files survive between runs; when the index cannot be fetched
# (offline CI rerun), the newest kernel of the series already unpacked in
# DEST is used.  KERNEL_MIRROR overrides http://deb.debian.org/debian.
#
# fetch-kernel.sh --debs SERIES PKG...: download (or reuse) the named
# packages of the series' suite the same private way, printing each .deb's
# path (kmod/build-7x.sh: linux-source-7.N and linux-headers-KVER).
set -euo pipefail

debs_only=()
if [ "${1:-}" = --debs ]; then
	shift
	series=${1:-}
	shift || true
	debs_only=("$@")
	[ ${#debs_only[@]} -gt 0 ] || { echo "usage: fetch-kernel.sh --debs 6.12|7 PKG..." >&2; exit 2; }
	set -- "$series"
fi
series=${1:-}
dest=${2:-${top_builddir:-$PWD}/qemu-tests/kernels}
cache=${KERNEL_CACHE:-/var/tmp/erofs-forge-kernels}
mirror=${KERNEL_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

fail() { echo "fetch-kernel.sh: $*" >&2; exit 1; }

case $series in
6.12) suite=bookworm-backports prefix=6.12. ;;
7) suite=trixie-backports prefix=7. ;;
*) echo "usage: fetch-kernel.sh 6.12|7 [DEST]" >&2; exit 2 ;;
esac

# an already unpacked kernel of this series (newest first), for offline reruns
unpacked() {
	local d
	for d in $(ls -d "$dest/$prefix"*/ 2>/dev/null | sort -rV); do
		d=${d%/}
		[ -f "$d/.complete" ] && { echo "${d##*/} $d/root"; return 0; }
	done
	return 1
}

state=$cache/apt-$suite
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$cache/debs" "$dest"
echo "deb [signed-by=$keyring] $mirror $suite main" > "$state/sources.list"
: > "$state/status"
apt_opts=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$state/lists" -o "Dir::State::status=$state/status"
	-o "Dir::Cache=$state/cache" -o APT::Architecture=amd64 -o Acquire::Languages=none
	-o Acquire::Retries=2)

# one fetcher per cache at a time (other worktrees may run the suite too)
exec 9> "$cache/.lock-$suite"
flock 9

if ! apt-get -q "${apt_opts[@]}" update > "$state/update.log" 2>&1 ||
   grep -qE '^(W|E): ' "$state/update.log"; then
	[ ${#debs_only[@]} -eq 0 ] || debs_offline=1	# the cached .debs may do
	[ -n "${debs_offline:-}" ] || ! unpacked || exit 0
	[ -n "${debs_offline:-}" ] ||
		fail "apt-get update of $suite failed: $(grep -E '^(W|E): ' "$state/update.log" | head -n 1)"
fi

# one .deb of the suite by package name, downloaded once into the cache
deb_of() {
	local deb
	deb=$(ls "$cache/debs/${1}_"*.deb 2>/dev/null | head -n 1 || true)
	if [ -z "$deb" ]; then
		(cd "$cache/debs" && apt-get -q "${apt_opts[@]}" download "$1" > "$state/download.log" 2>&1) ||
			fail "apt-get download $1 failed: $(tail -n 1 "$state/download.log")"
		deb=$(ls "$cache/debs/${1}_"*.deb 2>/dev/null | head -n 1 || true)
		[ -n "$deb" ] || fail "apt-get download $1 left no .deb"
	fi
	echo "$deb"
}

if [ ${#debs_only[@]} -gt 0 ]; then
	for p in "${debs_only[@]}"; do deb_of "$p"; done
	exit 0
fi

# the metapackage's candidate is the newest kernel the suite serves
image=$(apt-cache "${apt_opts[@]}" show --no-all-versions linux-image-amd64 2>/dev/null |
	sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*-amd64\).*/\1/p' | head -n 1)
[ -n "$image" ] || { unpacked && exit 0; fail "$suite lists no linux-image-amd64"; }
kver=${image#linux-image-}
[[ $kver == "$prefix"* ]] || fail "$suite's newest kernel is $kver, not $prefix*"

root=$dest/$kver/root
if [ -f "$dest/$kver/.complete" ]; then
	echo "$kver $root"
	exit 0
fi

# the image package and the packages of the same ABI it depends on (newer
# Debian kernels split vmlinuz and modules into linux-binary-* and
# linux-modules-*)
pkgs=$(apt-cache "${apt_opts[@]}" show --no-all-versions "$image" |
	sed -n 's/^Depends: //p' | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//' |
	grep -Fx -e "linux-binary-$kver" -e "linux-modules-$kver" -e "linux-base-$kver" || true)
pkgs="$image $pkgs"
debs=()
for p in $pkgs; do
	debs+=("$(deb_of "$p")")
done

tmp=$dest/$kver.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/root"
for deb in "${debs[@]}"; do
	dpkg-deb -x "$deb" "$tmp/root" || { rm -rf "$tmp"; fail "dpkg-deb -x $deb failed"; }
done
# merged-/usr packages ship usr/lib/modules
if [ ! -d "$tmp/root/lib/modules/$kver" ] && [ -d "$tmp/root/usr/lib/modules/$kver" ]; then
	mkdir -p "$tmp/root/lib/modules"
	ln -s "../../usr/lib/modules/$kver" "$tmp/root/lib/modules/$kver"
fi
# newer packages keep vmlinuz and config beside the modules
mkdir -p "$tmp/root/boot"
for f in vmlinuz config System.map; do
	[ -e "$tmp/root/boot/$f-$kver" ] || [ ! -f "$tmp/root/lib/modules/$kver/$f" ] ||
		ln -s "../lib/modules/$kver/$f" "$tmp/root/boot/$f-$kver"
done
[ -f "$tmp/root/boot/vmlinuz-$kver" ] || { rm -rf "$tmp"; fail "no boot/vmlinuz-$kver in $pkgs"; }
[ -d "$tmp/root/lib/modules/$kver/kernel" ] ||
	{ rm -rf "$tmp"; fail "no lib/modules/$kver/kernel in $pkgs"; }
# the packages leave modules.dep to depmod at install time
depmod -b "$tmp/root" "$kver" 2> "$tmp/depmod.log" && [ -s "$tmp/root/lib/modules/$kver/modules.dep" ] ||
	{ rm -rf "$tmp"; fail "depmod -b for $kver failed: $(head -n 1 "$tmp/depmod.log" 2>/dev/null)"; }
# dpkg-deb keeps no usr/share/doc or firmware worth the space
rm -rf "$tmp/root/usr/share/doc"
rm -rf "${dest:?}/$kver"
mv "$tmp" "$dest/$kver"
touch "$dest/$kver/.complete"
echo "$kver $root"
