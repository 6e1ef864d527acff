#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug kernel of the test matrix from Debian's
# linux-source-6.1: x86_64 defconfig + kvm_guest.config + ./config (what the
# RDS tests need) + ./config.debug (KASAN, lockdep, kmemleak, UBSAN, failslab, fail_page_alloc).
#
# The tree is cached outside the clone, under $RDS_CACHE_DIR (default
# /var/cache/rds-selftests), keyed by a hash of every input: the
# linux-source-6.1 package version, both fragments and the recipe number below. A build
# with the same inputs is reused; a changed input builds a new tree.
#
# Prints the path of the built tree (KDIR for our modules; it holds
# arch/x86/boot/bzImage) on its last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${RDS_CACHE_DIR:-/var/cache/rds-selftests}
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || { echo "missing $tarball (run scripts/install-deps.sh)" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
# Bump recipe when the way the tree is built changes.
recipe=1
key=$( { echo "$srcver $recipe"; cat "$here/config" "$here/config.debug"; } | sha256sum | cut -c1-16)
tree=$cache/debug-6.1-$key
if [ -f "$tree/.rds-build-ok" ]; then
	echo "debug kernel: cached ($tree)" >&2
	echo "$tree"
	exit 0
fi

log=$cache/debug-6.1-$key.log
mkdir -p "$cache"
rm -rf "$tree"
mkdir -p "$tree"
echo "debug kernel: building linux-source-6.1 $srcver into $tree (log: $log)" >&2
start=$(date +%s)
echo "debug kernel: extracting source" >&2
tar -xf "$tarball" -C "$tree" --strip-components=1
cd "$tree"
{
	make -s x86_64_defconfig
	scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config \
		"$here/config" "$here/config.debug"
	make -s olddefconfig
} >"$log" 2>&1
# Fail loudly when a required option did not survive olddefconfig.
missing=0
while read -r line; do
	case "$line" in CONFIG_*=y) ;; *) continue ;; esac
	grep -qx "$line" .config || { echo "debug kernel: $line not set" >&2; missing=1; }
done < <(cat "$here/config" "$here/config.debug")
[ "$missing" = 0 ] || exit 1
grep -q '^CONFIG_RDS=' .config && { echo "debug kernel: CONFIG_RDS must be off" >&2; exit 1; }

jobs=$(( $(nproc) + 1 ))
echo "debug kernel: compiling with -j$jobs (progress every 60 s)" >&2
make -j"$jobs" bzImage modules >>"$log" 2>&1 &
mk=$!
trap 'kill $mk 2>/dev/null || true' EXIT
while kill -0 $mk 2>/dev/null; do
	sleep 60 &
	wait $! || true
	kill -0 $mk 2>/dev/null || break
	n=$(find . -name '*.o' -newer .config 2>/dev/null | wc -l)
	echo "debug kernel: $(( $(date +%s) - start )) s, $n objects built" >&2
done
wait $mk || { echo "debug kernel: build failed, tail of $log:" >&2; tail -30 "$log" >&2; exit 1; }
trap - EXIT
touch "$tree/.rds-build-ok"
# Keep only the newest debug tree around.
for old in "$cache"/debug-6.1-*; do
	[ -d "$old" ] && [ "$old" != "$tree" ] && rm -rf "$old"
done
echo "debug kernel: built in $(( $(date +%s) - start )) s" >&2
echo "$tree"
