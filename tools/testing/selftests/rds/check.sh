#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [stock|6.12|debug] - everything `make check` runs.
#
#  1. W=1 builds against Debian's 6.1 and 6.12 headers: no warnings allowed.
#  2. sparse (C=2) against both: no warnings allowed; DKMS add/build/install
#     for both kernels.
#  3. The VM tiers: for each kernel, one cluster boot per peer flavour listed
#     in tests.txt (our modules on the peer; Debian's in-tree ones; ours on
#     a 3-node cluster; ours with ib_core.force_mr=1).
#  4. The harness self-test: a deliberate WARN must fail a run.
#
# With a kernel name, step 3 runs that tier only.  Ends with the line
# "N passed, N failed, N skipped"; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
K61=${RDS_K61:-6.1.0-57-amd64}
K612=${RDS_K612:-6.12.117+deb12-amd64}
only=${1:-}
case "$only" in ''|stock|6.12|debug) ;; *) echo "check.sh: tier stock|6.12|debug" >&2; exit 2 ;; esac

pass=0 fail=0 skip=0
failed=()
t0=$(date +%s)
note() { echo "check: $*"; }
count() { # NAME STATUS
	case "$2" in
	ok) pass=$((pass + 1)); echo "ok $1" ;;
	*) fail=$((fail + 1)); failed+=("$1"); echo "not ok $1" ;;
	esac
}

b=$top/build/check
mkdir -p "$b"

# ---- 1, 2: compile-time checks --------------------------------------------
static_check() { # NAME KDIR MAKEARGS...
	local name=$1 kdir=$2 dir=$b/$1
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	rsync -a --exclude .git --exclude /build "$top/" "$dir/src/"
	if ! make -C "$kdir" M="$dir/src" "$@" modules >"$dir/log" 2>&1; then
		cat "$dir/log"
		count "$name" fail
		return
	fi
	# Any diagnostic about our own sources counts (not kernel headers').
	if grep -E '(warning|error):' "$dir/log" | grep -F "$dir/src/" >"$dir/diag"; then
		sed 's/^/    /' "$dir/diag" | head -n 40
		count "$name" fail
	else
		count "$name" ok
	fi
}
note "compile checks"
static_check build-w1-6.1 "/usr/src/linux-headers-$K61" W=1
static_check build-w1-6.12 "/usr/src/linux-headers-$K612" W=1
static_check sparse-6.1 "/usr/src/linux-headers-$K61" C=2
static_check sparse-6.12 "/usr/src/linux-headers-$K612" C=2

# DKMS: add, build and install for both Debian kernels, then remove again
# (the VM tiers take the modules from the tree, not from /lib/modules).
dkms_check() {
	local ver name=rds-rdma k ok=1 d=$b/dkms
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
	dkms remove "$name/$ver" --all >/dev/null 2>&1
	rm -rf "/usr/src/$name-$ver" "$d"
	mkdir -p "$d"
	rsync -a --exclude .git --exclude /build "$top/" "$d/src/"
	if ! dkms add "$d/src" >"$d/log" 2>&1; then
		ok=0
	fi
	for k in "$K61" "$K612"; do
		[ "$ok" = 1 ] || break
		if ! dkms build -m "$name" -v "$ver" -k "$k" >>"$d/log" 2>&1 ||
		   ! dkms install -m "$name" -v "$ver" -k "$k" --force >>"$d/log" 2>&1; then
			ok=0
			break
		fi
		case "$(modinfo -k "$k" -n rds_rdma 2>/dev/null)" in
		*/updates/*) ;;
		*) echo "dkms: rds_rdma for $k is not ours" >>"$d/log"; ok=0 ;;
		esac
	done
	dkms remove "$name/$ver" --all >>"$d/log" 2>&1
	rm -rf "/usr/src/$name-$ver"
	for k in "$K61" "$K612"; do depmod "$k" 2>/dev/null; done
	if [ "$ok" = 1 ]; then
		count dkms-6.1-6.12 ok
	else
		tail -n 30 "$d/log"
		count dkms-6.1-6.12 fail
	fi
}
dkms_check

# ---- 3: VM tiers -------------------------------------------------------------
run_tier() { # KERNEL PEER
	local out=$b/vm-$1-$2.log line p f s
	note "tier $1, peers $2"
	"$here/run_vm.sh" --kernel "$1" --peer-mods "$2" 2>&1 | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	if [ -z "$line" ]; then
		count "tier-$1-$2" fail
		return
	fi
	p=$(echo "$line" | awk '{print $1}')
	f=$(echo "$line" | awk '{print $3}')
	s=$(echo "$line" | awk '{print $5}')
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + ${s:-0}))
	[ "$f" = 0 ] || failed+=("tier-$1-$2")
}
has_tests() { # KERNEL PEER
	awk -v k="$1" -v p="$2" '
		/^[ \t]*(#|$)/ { next }
		{ peer = ($3 == "") ? "ours" : $3
		  if (peer == p && ("," $2 ",") ~ ("," k ",|,all,")) n++ }
		END { exit n ? 0 : 1 }' "$here/tests.txt"
}
for k in stock 6.12 debug; do
	[ -z "$only" ] || [ "$only" = "$k" ] || continue
	for p in ours intree ours3 forcemr; do
		[ "$k" = debug ] && [ "$p" = intree ] && continue
		has_tests "$k" "$p" && run_tier "$k" "$p"
	done
done

# ---- 4: the splat detector must catch a WARN ---------------------------------
if [ -z "$only" ] || [ "$only" = stock ]; then
	note "harness self-test"
	if "$here/run_vm.sh" --kernel stock --expect-splat selftest_splat.sh \
		>"$b/selftest-splat.log" 2>&1; then
		count harness-splat-detector ok
	else
		cat "$b/selftest-splat.log"
		count harness-splat-detector fail
	fi
fi

# The failures again, last, where a reader of the log's tail sees them.
for f in "${failed[@]}"; do
	case "$f" in
	tier-*) t=${f#tier-}
		note "$f:"
		grep -aE '^  [^ ]+: not ok |^    # |^not ok |^    [^ ].*(BUG|WARNING|KASAN|UBSAN|kmemleak|lockdep)' \
			"$b/vm-${t%-*}-${t##*-}.log" 2>/dev/null | head -n 12 ;;
	esac
done
note "finished in $(( $(date +%s) - t0 )) s"
[ ${#failed[@]} -eq 0 ] || note "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
