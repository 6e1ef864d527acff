#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_vm.sh - boot an RDS test cluster under QEMU and run selftests on it.
#
#   run_vm.sh [--kernel stock|6.12|debug] [--nodes N]
#             [--peer-mods ours|intree|ours3|forcemr] [--keep] [--expect-splat]
#             [--no-build] [--src DIR] [--show] [--perftest]
#             [--env VAR=VALUE]... [--limit SECONDS] [TEST...]
#
# Builds our modules for the kernel, the test binaries and the guest helper,
# packs one initramfs, boots N nodes in parallel (node 0 runs the tests, the
# others are peers), joined by QEMU dgram netdevs over unix socket paths: a
# data link (rxe), a control link (rds-peer), and on the debug kernel a
# third link with siw.  Two nodes are wired point to point; three or more
# through a small hub process (vm/hub.py).
#
# The modules and tests are built from a copy of the work tree (or of
# --src DIR, e.g. an export of a commit).
#
# --perftest adds Debian's perftest (ib_send_lat, ib_write_bw, ib_read_bw,
# ib_atomic_bw) with libibverbs and the rxe provider to the initramfs (make
# bench); --env puts VAR=VALUE in every selected test's environment (after
# its tests.txt words) and --limit replaces every selected test's limit.
# RDSVM_CMDLINE in run_vm.sh's environment adds kernel parameters to every
# node (for example slub_debug=FZPU,kmalloc-2k).
#
# Output: one line per test ("ok"/"not ok"/"skip"), then a summary line
# "N passed, N failed, N skipped".  A splat (WARNING, BUG, KASAN, UBSAN,
# lockdep, kmemleak, oops, hung task) in any node's log fails the run, and so
# does a node that does not finish in time.  Every QEMU started is killed by
# pid on any exit.  Logs are kept under build/vm-logs/ when the run fails
# (or with --keep).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
K61=${RDS_K61:-6.1.0-57-amd64}
K612=${RDS_K612:-6.12.117+deb12-amd64}

kernel=stock
nodes=2
peer_mods=ours
keep=0
expect_splat=0
build=1
src=
show=0
perftest=0
extra_env=()
limit_all=
tests=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--nodes) nodes=$2; shift 2 ;;
	--peer-mods) peer_mods=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--expect-splat) expect_splat=1; shift ;;
	--no-build) build=0; shift ;;
	--show) show=1; shift ;;
	--perftest) perftest=1; shift ;;
	--env)
		case "$2" in *=*) ;; *) echo "run_vm.sh: --env VAR=VALUE" >&2; exit 2 ;; esac
		extra_env+=("$2"); shift 2 ;;
	--limit)
		case "$2" in ''|*[!0-9]*) echo "run_vm.sh: --limit SECONDS" >&2; exit 2 ;; esac
		limit_all=$2; shift 2 ;;
	--src) src=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	-h|--help) sed -n '4,9p' "$0"; exit 0 ;;
	-*) echo "run_vm.sh: unknown option $1" >&2; exit 2 ;;
	*) tests+=("$1"); shift ;;
	esac
done
case "$nodes" in 2|3|4) ;; *) echo "run_vm.sh: --nodes 2..4" >&2; exit 2 ;; esac
# The PEER flavour of tests.txt; ours3 is our modules on 3 nodes;
# forcemr is ours on 2 nodes whose ib_core has force_mr=1 (the RDMA core
# then moves every RDMA READ and WRITE through MRs, as on iWARP).
flavour=$peer_mods
force_mr=
case "$peer_mods" in
ours|intree) ;;
ours3) peer_mods=ours; nodes=3 ;;
forcemr) peer_mods=ours; force_mr=1 ;;
*) echo "run_vm.sh: --peer-mods ours|intree|ours3|forcemr" >&2; exit 2 ;;
esac

log() { echo "run_vm[$kernel]: $*" >&2; }

case "$kernel" in
stock)	kver=$K61; kdir=/usr/src/linux-headers-$K61; vmlinuz=/boot/vmlinuz-$K61; mem=1024 ;;
6.12)	kver=$K612; kdir=/usr/src/linux-headers-$K612; vmlinuz=/boot/vmlinuz-$K612; mem=1024 ;;
debug)
	tree=$("$here/build-debug-kernel.sh" | tail -n 1) || exit 1
	kver=; kdir=$tree; vmlinuz=$tree/arch/x86/boot/bzImage; mem=2048 ;;
*) echo "run_vm.sh: --kernel stock|6.12|debug" >&2; exit 2 ;;
esac
[ "$kernel" = debug ] && [ "$peer_mods" = intree ] && {
	log "Debian's in-tree RDS modules do not exist for the debug kernel"; exit 2; }
for f in "$vmlinuz" "$kdir/Makefile"; do
	[ -e "$f" ] || { log "missing $f (run scripts/install-deps.sh)"; exit 1; }
done

b=$top/build
mkdir -p "$b"
work=$(mktemp -d /tmp/rdsvm.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build --------------------------------------------------------------
tsrc=${src:-$top}/tools/testing/selftests/rds
modb=$b/mod-$kernel
testb=$b/tests
if [ "$build" = 1 ]; then
	log "building modules against $kdir"
	# A fresh copy every time: stale objects of an older tree can link
	# modules without symbol versions.
	rm -rf "$modb"
	mkdir -p "$modb"
	rsync -a --delete --exclude .git --exclude /build --exclude '*.o' \
		--exclude '*.ko' --exclude '.*.cmd' "${src:-$top}/" "$modb/src/"
	make -s -C "$kdir" M="$modb/src" modules >"$modb/build.log" 2>&1 ||
		{ cat "$modb/build.log" >&2; log "module build failed"; exit 1; }
	mkdir -p "$modb/splat"
	cp "$here/vm/splat/rds_selftest_warn.c" "$here/vm/splat/Kbuild" "$modb/splat/"
	make -s -C "$kdir" M="$modb/splat" modules >"$modb/splat.log" 2>&1 ||
		{ cat "$modb/splat.log" >&2; log "splat module build failed"; exit 1; }
	mkdir -p "$modb/hostile"
	cp "$here/vm/hostile/rds_hostile.c" "$here/vm/hostile/Kbuild" "$modb/hostile/"
	make -s -C "$kdir" M="$modb/hostile" modules >"$modb/hostile.log" 2>&1 ||
		{ cat "$modb/hostile.log" >&2; log "hostile module build failed"; exit 1; }
	log "building tests"
	if [ -f "$tsrc/Makefile" ]; then
		make -s -C "$tsrc" O="$testb" >"$b/tests-build.log" 2>&1 ||
			{ cat "$b/tests-build.log" >&2; log "test build failed"; exit 1; }
	fi
	mkdir -p "$testb"
	if [ -f "${src:-$top}/tools/rds/Makefile" ]; then
		make -s -C "${src:-$top}/tools/rds" O="$b/tools" >"$b/tools-build.log" 2>&1 ||
			{ cat "$b/tools-build.log" >&2; log "tools build failed"; exit 1; }
	fi
	for t in rdsvm rds_demo jsoncheck; do
		gcc -static -O2 -Wall -o "$b/$t" "$here/vm/$t.c" ||
			{ log "$t build failed"; exit 1; }
	done
fi

# ---- which tests ----------------------------------------------------------
# tests.txt: NAME KERNELS [PEER [LIMIT [VAR=VALUE...]]]; '#' starts a comment.
runlist=$work/run.list
extra=${extra_env[*]:-}
: >"$runlist"
want() {
	local n
	[ ${#tests[@]} -eq 0 ] && return 0
	for n in "${tests[@]}"; do [ "$n" = "$1" ] && return 0; done
	return 1
}
if [ -f "$tsrc/tests.txt" ]; then
	while read -r name kernels peer limit envs; do
		case "$name" in ''|\#*) continue ;; esac
		peer=${peer:-ours}; limit=${limit:-300}
		[ "$peer" = "$flavour" ] || continue
		case ",$kernels," in *",all,"*|*",$kernel,"*) ;; *) continue ;; esac
		want "$name" || continue
		echo "$name ${limit_all:-$limit} $envs${extra:+ $extra}" >>"$runlist"
	done <"$tsrc/tests.txt"
fi
for n in "${tests[@]}"; do
	grep -q "^$n " "$runlist" || {
		# A test named on the command line but not listed (or hidden).
		if [ -x "$testb/$n" ] || [ -x "$tsrc/$n" ] || [ -x "$here/vm/$n" ]; then
			echo "$n ${limit_all:-300}${extra:+ $extra}" >>"$runlist"
		else
			log "no test $n"; exit 2
		fi
	}
done
ntests=$(wc -l <"$runlist")
log "$ntests test(s), $nodes nodes, peers run $peer_mods modules"

# ---- initramfs ----------------------------------------------------------
root=$work/root
mkdir -p "$root"/{bin,lib/modules-base,lib/rds/ours,tests,usr/bin}
cp /bin/busybox "$root/bin/busybox"
cp "$here/vm/init" "$root/init"
for f in rds-peer rds-mods rds-reboot rds-shutdown rds-reap rds-dataif rds-tap.sh rds-counter; do
	cp "$here/vm/$f" "$root/usr/bin/$f"
done
cp "$b/rdsvm" "$b/rds_demo" "$b/jsoncheck" "$root/usr/bin/"
[ -d "$b/tools" ] && cp "$b/tools"/* "$root/usr/bin/"
cp "$modb/src/net/rds/rds.ko" "$modb/src/net/rds/rds_rdma.ko" "$root/lib/rds/ours/"
cp "$modb/splat/rds_selftest_warn.ko" "$root/tests/"
cp "$modb/hostile/rds_hostile.ko" "$root/tests/"
cp "$runlist" "$root/tests/run.list"
# Test programs that other tests drive (ib_msg for the .sh recovery tests,
# rdma_ops for rdma_useonce, rds_stress for ib_ring.sh, rds_netem and
# rdma_stress for ib_lossy.sh, rds_hostile_rx for rds_hostile.sh,
# rds_restart and ib_restart.sh for ib_restart.sh and ib_restart_zc.sh,
# rds_cong and rdma_atomic for rds_faults.sh) go in whether or not they
# were selected.
for name in $(cut -d' ' -f1 "$runlist") ib_msg rdma_ops rds_stress rds_netem rdma_stress rds_hostile_rx \
	    rds_restart ib_restart.sh rds_cong rdma_atomic; do
	for d in "$testb" "$tsrc" "$here/vm"; do
		[ -x "$d/$name" ] && [ -f "$d/$name" ] && { cp "$d/$name" "$root/tests/"; break; }
	done
done
# Extra files a test needs at run time live next to it in build/tests.
[ -d "$testb/data" ] && cp -r "$testb/data" "$root/tests/"

# --perftest: the raw verbs tools, the libraries they and the rxe provider
# link (as ldd finds them on this host, at the same paths), the provider and
# its libibverbs.d entry, and an ld.so cache for the copied directories.
if [ "$perftest" = 1 ]; then
	prov=
	for f in /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so; do
		[ -f "$f" ] && prov=$f
	done
	if [ -z "$prov" ] || [ ! -f /etc/libibverbs.d/rxe.driver ]; then
		log "--perftest: no rxe provider (install ibverbs-providers)"
		exit 1
	fi
	elfs=("$prov")
	for t in ib_send_lat ib_write_bw ib_read_bw ib_atomic_bw; do
		f=$(command -v "$t") || { log "--perftest: no $t (install perftest)"; exit 1; }
		cp "$f" "$root/usr/bin/"
		elfs+=("$f")
	done
	libs=$(ldd "${elfs[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u)
	for l in $libs "$prov"; do
		mkdir -p "$root$(dirname "$l")"
		cp -L "$l" "$root$l"
	done
	mkdir -p "$root/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	printf '%s\n' /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu >"$root/etc/ld.so.conf"
	ldconfig -r "$root" 2>/dev/null || log "--perftest: ldconfig -r failed (no ld.so cache)"
fi

unpack_ko() { # FILE DEST
	case "$1" in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}
if [ "$kernel" != debug ]; then
	# The base modules of the Debian kernel: virtio NIC, rxe, rdma_cm, and
	# netem for the lossy-link test (ib_lossy.sh; the debug kernel has no
	# netem, and that test skips there).
	modprobe -S "$kver" --show-depends -a virtio_pci virtio_net crc32_generic \
		rdma_rxe rdma_cm sch_netem 2>/dev/null | awk '$1 == "insmod" && !s[$2]++ { print $2 }' |
	while read -r m; do
		bn=$(basename "$m"); bn=${bn%.xz}; bn=${bn%.zst}
		unpack_ko "$m" "$root/lib/modules-base/$bn"
		echo "$bn" >>"$root/lib/modules-base/order"
	done
	mkdir -p "$root/lib/rds/intree"
	# By path, not modinfo: ours may be installed under updates/ (DKMS).
	for m in rds rds_rdma; do
		f=$(ls /lib/modules/"$kver"/kernel/net/rds/"$m".ko* 2>/dev/null | head -n 1)
		[ -n "$f" ] || { log "no in-tree $m for $kver"; exit 1; }
		unpack_ko "$f" "$root/lib/rds/intree/$m.ko"
	done
fi
(cd "$root" && find . | cpio -o -H newc --quiet) >"$work/initramfs.cpio"

# ---- boot -----------------------------------------------------------------
accel=tcg
if [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; then
	[ -w /dev/kvm ] && accel=kvm
fi
links=(data ctl)
[ "$kernel" = debug ] && links+=(siw)
hubs=()
if [ "$nodes" -gt 2 ]; then
	for l in "${links[@]}"; do
		paths=()
		for ((i = 0; i < nodes; i++)); do paths+=("$work/n$i-$l.sock"); done
		python3 "$here/vm/hub.py" "$work/hub-$l.sock" "${paths[@]}" &
		pids+=($!)
	done
	for l in "${links[@]}"; do
		for ((t = 0; t < 50; t++)); do [ -S "$work/hub-$l.sock" ] && break; sleep 0.1; done
	done
fi

# q35, not the default i440FX: under TCG the debug kernel's ACPI interpreter
# times out (30 s each time) in the i440FX PCI interrupt routing method.
machine=q35
# ib_core.force_mr for a built-in ib_core (debug), RDSVM_FORCE_MR for
# /init, which insmods a modular one.
extra_cmdline=${force_mr:+RDSVM_FORCE_MR=1 ib_core.force_mr=1}
# RDSVM_CMDLINE: more kernel parameters for every node (slub_debug=...).
extra_cmdline+=${RDSVM_CMDLINE:+ $RDSVM_CMDLINE}

logdir=$work/logs
boot_cluster() {
	rm -rf "$logdir"
	mkdir -p "$logdir"
	qpids=()
	start=$(date +%s)
	for ((i = 0; i < nodes; i++)); do
		netargs=()
		k=1
		for l in "${links[@]}"; do
			if [ "$nodes" -gt 2 ]; then
				remote=$work/hub-$l.sock
			else
				remote=$work/n$((1 - i))-$l.sock
			fi
			netargs+=(-netdev "dgram,id=$l,local.type=unix,local.path=$work/n$i-$l.sock,remote.type=unix,remote.path=$remote"
				  -device "virtio-net-pci,netdev=$l,mac=52:54:00:00:0$i:0$k")
			k=$((k + 1))
		done
		if [ "$i" = 0 ]; then
			mods=ours; reboot=(-no-reboot)
		else
			mods=$peer_mods; reboot=()
		fi
		cmdline="console=ttyS0 panic=5 oops=panic loglevel=7 nokaslr no_timer_check $extra_cmdline"
		cmdline+=" RDSVM_NODE=$i RDSVM_NODES=$nodes RDSVM_KERNEL=$kernel"
		cmdline+=" RDSVM_MODS=$mods RDSVM_PEER_MODS=$peer_mods"
		qemu-system-x86_64 -machine "$machine" -accel "$accel" -cpu max -smp 2 -m "$mem" \
			-nodefaults -display none -no-user-config \
			-kernel "$vmlinuz" -initrd "$work/initramfs.cpio" -append "$cmdline" \
			-serial "file:$logdir/console-$i.log" -serial "file:$logdir/out-$i.log" \
			"${netargs[@]}" "${reboot[@]}" >"$logdir/qemu-$i.log" 2>&1 &
		pids+=($!)
		qpids+=($!)
		eval "qpid$i=$!"
	done

	# Node 0 powers off when its tests are done; the budget is the sum of the
	# test limits plus boot and shutdown time.
	budget=$((240 + 60 * nodes))
	while read -r _ limit _; do budget=$((budget + limit)); done <"$runlist"
	timed_out=0
	last_note=$start
	early_checked=0
	boot_hung=0
	# Every node reaches init within this (debug: about 90 s alone; a
	# node has been seen hanging in early boot, in the RCU-tasks self
	# tests under TCG: nothing of ours has run, so boot again).
	init_limit=120
	[ "$kernel" = debug ] && init_limit=420
	# A node hung there stops writing to its console: one whose console
	# has not grown for quiet_limit s before init is hung too, no need to
	# wait for init_limit (the longest quiet stretch of a healthy debug
	# boot is about 16 s).
	quiet_limit=75
	for ((i = 0; i < nodes; i++)); do
		eval "csize$i=0 cseen$i=$start"
	done
	while kill -0 "$qpid0" 2>/dev/null; do
		now=$(date +%s)
		# Once node 0 starts its first test (every peer answered, so all
		# are past init), a splat of early boot is known: stop at once
		# rather than after every test.
		if [ "$early_checked" = 0 ] &&
		   grep -aq '^@@RDSVM-BEGIN ' "$logdir/out-0.log" 2>/dev/null; then
			early_checked=1
			early_boot_failed && break
		fi
		if [ "$early_checked" = 0 ]; then
			for ((i = 0; i < nodes; i++)); do
				c=$logdir/console-$i.log
				grep -aq 'Run /init as init process' "$c" 2>/dev/null && continue
				sz=$(stat -c %s "$c" 2>/dev/null || echo 0)
				eval "old=\$csize$i seen=\$cseen$i"
				if [ "$sz" != "$old" ]; then
					eval "csize$i=$sz cseen$i=$now"
				elif [ $((now - seen)) -gt "$quiet_limit" ]; then
					log "node $i wrote nothing for $quiet_limit s before init"
					boot_hung=1
				fi
			done
			[ "$boot_hung" = 1 ] && break
		fi
		if [ "$early_checked" = 0 ] && [ $((now - start)) -gt "$init_limit" ]; then
			for ((i = 0; i < nodes; i++)); do
				grep -aq 'Run /init as init process' "$logdir/console-$i.log" 2>/dev/null && continue
				log "node $i did not reach init within $init_limit s"
				boot_hung=1
			done
			[ "$boot_hung" = 1 ] && break
		fi
		if [ $((now - start)) -gt "$budget" ]; then
			log "node 0 did not finish within $budget s"
			timed_out=1
			break
		fi
		# Progress, once a minute: which test node 0 is running.
		if [ $((now - last_note)) -ge 60 ]; then
			last_note=$now
			cur=$(grep -a '^@@RDSVM-BEGIN ' "$logdir/out-0.log" 2>/dev/null | tail -n 1 | tr -d '\r' | cut -d' ' -f2)
			cur=${cur%@@}
			done_n=$(grep -ac '^@@RDSVM-END ' "$logdir/out-0.log" 2>/dev/null)
			log "$((now - start)) s: ${cur:+running $cur, }$done_n/$ntests done"
		fi
		sleep 1
	done
	# Peers power off after node 0 told them to; give them a little while
	# (none when node 0 did not get as far as its own shutdown).
	peer_wait=60
	grep -aq '@@RDSVM node0: poweroff' "$logdir/out-0.log" 2>/dev/null || peer_wait=0
	for ((i = 1; i < nodes; i++)); do
		eval "p=\$qpid$i"
		for ((t = 0; t < peer_wait; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 1; done
	done
	log "cluster ran $(( $(date +%s) - start )) s"
}

# Splats: any of these in any node's kernel log fails the run.
splat_re='WARNING:|BUG:|KASAN:|UBSAN:|Oops|general protection fault|kernel BUG|'
splat_re+='unreferenced object|possible circular locking|possible recursive locking|'
splat_re+='inconsistent lock state|DEBUG_LOCKS_WARN_ON|INFO: task .* blocked|'
splat_re+='Call Trace:|Kernel panic|RDSVM-ERROR|sleeping function called from invalid context|'
splat_re+='suspicious RCU usage|refcount_t:|list_(add|del) corruption'

# True when a node's first boot went wrong before its init ran: node 0 died
# before reaching init, a node did not reach init in time, or any node
# logged a splat before init.  Nothing of
# ours has run by then (our modules load from init): a TCG timing hiccup of
# early boot under load, which gets another boot of the whole cluster.
early_boot_failed() {
	local i c
	[ "$boot_hung" = 1 ] && return 0
	grep -aq 'Run /init as init process' "$logdir/console-0.log" 2>/dev/null || return 0
	for ((i = 0; i < nodes; i++)); do
		c=$logdir/console-$i.log
		[ -f "$c" ] || continue
		# One awk, no pipe: with pipefail, grep -q closing the pipe
		# early made the awk die of SIGPIPE and hid the match.
		awk -v re="$splat_re" '/Run \/init as init process/ { exit }
			$0 ~ re { found = 1; exit } END { exit !found }' "$c" &&
			return 0
	done
	return 1
}

# Up to four boots: under load the debug kernel has met the same early
# KASAN report (rcu_is_watching, 0.01 s, TCG) on two boots in a row.
for attempt in 1 2 3 4; do
	boot_cluster
	early_boot_failed || break
	[ "$attempt" = 4 ] && break
	log "a node failed in early boot, before init (see below); booting the cluster again"
	cat "$logdir"/console-*.log | awk '/Run \/init as init process/ { exit } { print }' |
		grep -aE "$splat_re" | head -n 3 >&2
	for p in "${qpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	sleep 1
	rm -f "$work"/n*-*.sock
done

# ---- results ----------------------------------------------------------------
pass=0 fail=0 skip=0
timings=()
result() { # STATUS NAME [REASON]
	case "$1" in
	ok) pass=$((pass + 1)); echo "ok $2" ;;
	skip) skip=$((skip + 1)); echo "skip $2${3:+ # $3}" ;;
	*) fail=$((fail + 1)); echo "not ok $2${3:+ # $3}" ;;
	esac
}
out0=$logdir/out-0.log
tr -d '\r' <"$out0" >"$out0.clean" 2>/dev/null || : >"$out0.clean"
while read -r name _; do
	body=$(awk -v n="$name" '
		$0 == "@@RDSVM-BEGIN " n "@@" { on = 1; next }
		on && index($0, "@@RDSVM-END " n " ") == 1 {
			sub(/@@$/, ""); print "RC " $3; print "SECS " $4; on = 0; exit }
		on { print }' "$out0.clean")
	[ "$show" = 1 ] && printf '%s\n' "$body" | grep -vE '^(RC|SECS) '
	rcline=$(printf '%s\n' "$body" | grep '^RC ' | tail -n 1)
	rc=${rcline#RC }
	rc=${rc%@@}
	secs=$(printf '%s\n' "$body" | sed -n 's/^SECS //p' | tail -n 1)
	[ -n "$secs" ] && timings+=("$secs s $name")
	if [ -z "$rcline" ]; then
		result fail "$name" "did not finish"
		continue
	fi
	# Count kselftest subtests (top-level TAP lines) when there are any.
	sub_ok=$(printf '%s\n' "$body" | grep -Ec '^ok [0-9]+ ' || true)
	sub_skip=$(printf '%s\n' "$body" | grep -Ec '^ok [0-9]+ .*# SKIP' || true)
	sub_fail=$(printf '%s\n' "$body" | grep -Ec '^not ok [0-9]+ ' || true)
	if [ $((sub_ok + sub_fail)) -gt 0 ]; then
		# each subtest's verdict; under a failed one, the last few
		# diagnostic lines it printed (the failed expectations)
		printf '%s\n' "$body" | awk -v n="$name" '
			/^(not )?ok [0-9]+ / {
				print "  " n ": " $0
				if ($1 == "not")
					for (i = (k > 6 ? k - 6 : 0); i < k; i++)
						print "    " d[i % 6]
				k = 0; next }
			/^#/ { d[k % 6] = $0; k++ }'
		pass=$((pass + sub_ok - sub_skip)); skip=$((skip + sub_skip)); fail=$((fail + sub_fail))
		if [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$sub_fail" = 0 ]; then
			result fail "$name" "exit $rc"
		fi
		continue
	fi
	case "$rc" in
	0) result ok "$name" ;;
	4) result skip "$name" ;;
	137) result fail "$name" "killed after its time limit" ;;
	*) result fail "$name" "exit $rc" ;;
	esac
done <"$runlist"
[ "$timed_out" = 1 ] && result fail "cluster" "node 0 timed out"
# Where the tier's time went, slowest first (make check's budget is fixed).
[ ${#timings[@]} -gt 0 ] &&
	log "test times: $(printf '%s\n' "${timings[@]}" | sort -rn | head -n 12 | sed 's/ s / s /' | paste -sd, | sed 's/,/, /g')"

splats=0
for ((i = 0; i < nodes; i++)); do
	c=$logdir/console-$i.log
	[ -f "$c" ] || continue
	hits=$(grep -aE "$splat_re" "$c" "$logdir/out-$i.log" 2>/dev/null | head -n 5)
	if [ -n "$hits" ]; then
		splats=$((splats + 1))
		log "node $i: kernel report:"
		printf '%s\n' "$hits" | sed 's/^/    /' >&2
	fi
	grep -aq '@@RDSVM node[0-9]*: poweroff' "$logdir/out-$i.log" 2>/dev/null ||
		{ [ "$i" = 0 ] || [ "$timed_out" = 1 ] || log "node $i did not shut down cleanly"; }
done
if [ "$expect_splat" = 1 ]; then
	if [ "$splats" -gt 0 ]; then result ok "splat-detector"; else result fail "splat-detector" "no splat seen"; fi
else
	for ((i = 0; i < nodes; i++)); do
		if grep -aqE "$splat_re" "$logdir/console-$i.log" "$logdir/out-$i.log" 2>/dev/null; then
			result fail "no-splat-node$i" "see $b/vm-logs"
		else
			result ok "no-splat-node$i"
		fi
	done
fi

if [ "$fail" -gt 0 ] || [ "$keep" = 1 ]; then
	dest=$b/vm-logs/$kernel-$flavour-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$dest"
	cp -r "$logdir"/. "$dest/"
	log "logs kept in $dest"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
