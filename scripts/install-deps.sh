#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, with apt, whatever the build and the VM tests need and is missing.
# Idempotent: does nothing (and needs no network) when everything is there.
# perftest and ibverbs-providers are the raw verbs ceilings of make bench
# (copied into its guests), gnuplot-nox draws its chart.
#
# Kernel versions are pinned here, never taken from the host's uname -r: the
# stock tier is Debian 12's linux-image-amd64 (6.1), the 6.12 tier Debian 12's
# linux-image-6.12-amd64; image and headers always of the same version.
set -euo pipefail

# The exact packages behind Debian 12's meta-packages, image and headers
# matched. Overridable for a newer point release.
K61=${RDS_K61:-6.1.0-57-amd64}
K612=${RDS_K612:-6.12.117+deb12-amd64}

pkgs=(
	qemu-system-x86 busybox-static sparse kmod cpio xz-utils zstd
	gcc make libc6-dev linux-libc-dev bc bison flex libelf-dev libssl-dev
	dwarves rsync python3 iproute2 dkms
	"linux-image-$K61" "linux-headers-$K61"
	"linux-image-$K612" "linux-headers-$K612"
	linux-source-6.1 linux-source-6.12
	perftest ibverbs-providers gnuplot-nox
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >&2
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
