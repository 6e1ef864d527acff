#!/bin/sh
# What `make bench` runs on node 0 of a two-node cluster, in interleaved
# rounds: rds-bench against node 1 with our modules on both nodes, then with
# Debian's in-tree rds/rds_rdma on both, then the raw verbs ceilings
# (perftest on rxe0, no RDS); RDS_BENCH_ROUNDS times.  Each rds-bench test
# runs on its own, between two snapshots of node 0's RDS counters (rds-info
# -c) and rxe hardware counters.  For bench.sh on the host:
#   @@BENCH-JSON LABEL ROUND JSON           one rds-bench run (-j)
#   @@BENCH-RAW ROUND TEST SIZE RC LINE...  perftest's result line
#   @@BENCH-CNT LABEL ROUND TEST SIZE before|after NAME=VALUE...
#   @@BENCH-MEM LABEL WHEN NAME=VALUE...
#
# With "serve-raw" as first argument it is node 1's side of a perftest run
# (started through rds-peer): bench-cluster.sh serve-raw LIMIT TOOL ARGS...
D=${RDS_BENCH_SECONDS:-2}
SIZES=${RDS_BENCH_SIZES:-4K,64K,1M}
ROUNDS=${RDS_BENCH_ROUNDS:-3}
LAT_ITERS=${RDS_BENCH_LAT_ITERS:-1000}
BUSY_US=${RDS_BENCH_BUSY_US:-5000}
RAW_SIZES=${RDS_BENCH_RAW_SIZES:-65536 1048576}
# Which rds-bench tests (and their raw counterparts: rtt ib_send_lat,
# rdma_write ib_write_bw, rdma_read ib_read_bw, atomic ib_atomic_bw) run.
TESTS=$(echo "${RDS_BENCH_TESTS:-rate bw bw_zc rtt rdma_write rdma_read atomic atomic_silent}" | tr , ' ')
want() { case " $TESTS " in *" $1 "*) return 0 ;; esac; return 1; }
pick() { # TESTS...: those of them selected
	for t in "$@"; do want "$t" && printf '%s ' "$t"; done
}
PT_PORT=18515
# Whole seconds, rounded up, for limits and perftest's -D.
DI=$(awk -v d="$D" 'BEGIN { i = int(d); if (i < d) i++; print i }')

# The GID index of this node's IPv4 data address on rxe0 (RoCE v2).
gid_index() {
	for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
		case "$(cat "$g" 2>/dev/null)" in
		0000:0000:0000:0000:0000:ffff:c000:02*) echo "${g##*/}"; return 0 ;;
		esac
	done
	echo 0
}

if [ "$1" = serve-raw ]; then
	limit=$2; shift 2
	tool=$1; shift
	timeout -s KILL "$limit" "$tool" -d rxe0 -x "$(gid_index)" -F -p $PT_PORT "$@" \
		>/tmp/raw-server.log 2>&1 </dev/null &
	echo $! >/tmp/raw-server.pid
	exit 0
fi

# RDS_BENCH_OURS_PARAMS: rds_rdma.ko parameters for our modules on both
# nodes (for example rds_ib_mr_reg_on_conn=1).
mods_everywhere() { # ours|intree
	p=""
	[ "$1" = ours ] && p=${RDS_BENCH_OURS_PARAMS:-}
	# shellcheck disable=SC2086 # a list of PARAM=VALUE words
	rds-mods unload && rds-mods load "$1" $p &&
		rds-peer 1 "rds-mods unload && rds-mods load $1 $p" >/dev/null
}

# Memory on node 0: module sizes (/proc/modules) and kernel slab in kB.
mem() { # LABEL WHEN
	mods=$(awk '$1 == "rds" || $1 == "rds_rdma" { s += $2 } END { print s + 0 }' /proc/modules)
	slab=$(awk '$1 == "Slab:" { print $2 }' /proc/meminfo)
	echo "@@BENCH-MEM $1 $2 modules_bytes=$mods slab_kb=$slab"
}

# Allocations made by the RDS modules on node 0, ours and in-tree alike
# (both are rds and rds_rdma): hist triggers count the slab allocator's
# calls by call site and the page allocator's by stack, and allocs() sums
# the entries that name a function of either module.  Counts are
# cumulative; the report takes deltas over each test.
TR=/sys/kernel/tracing
SLAB_EVENTS="kmalloc kmalloc_node kmem_cache_alloc kmem_cache_alloc_node"
allocs_setup() {
	for e in $SLAB_EVENTS; do
		[ -w "$TR/events/kmem/$e/trigger" ] &&
			echo 'hist:keys=call_site.sym:vals=hitcount:size=8192' \
				>"$TR/events/kmem/$e/trigger" 2>/dev/null
	done
	[ -w "$TR/events/kmem/mm_page_alloc/trigger" ] &&
		echo 'hist:keys=stacktrace:vals=hitcount:size=16384' \
			>"$TR/events/kmem/mm_page_alloc/trigger" 2>/dev/null
	return 0
}
allocs() {
	[ -r "$TR/events/kmem/mm_page_alloc/hist" ] || return 0
	slab=0
	for e in $SLAB_EVENTS; do
		[ -r "$TR/events/kmem/$e/hist" ] || continue
		n=$(awk '/\[rds(_rdma)?\]/ && /hitcount:/ {
			for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1)
		} END { print s + 0 }' "$TR/events/kmem/$e/hist")
		slab=$((slab + n))
	done
	pages=$(awk '/stacktrace:/ { r = 0 } /\[rds(_rdma)?\]/ { r = 1 }
		/hitcount:/ { if (r) for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1); r = 0 }
		END { print s + 0 }' "$TR/events/kmem/mm_page_alloc/hist")
	printf ' alloc.slab=%s alloc.pages=%s' "$slab" "$pages"
}

# Node 0's counters on one line: RDS's (rds-info -c) and the RDS modules'
# allocations unless "nords", and rxe0's hardware counters as rxe.NAME.
counters() { # [nords]
	[ "$1" = nords ] || {
		rds-info -c 2>/dev/null | awk 'NF == 2 && $2 ~ /^[0-9]+$/ { printf " %s=%s", $1, $2 }'
		allocs
	}
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		[ -f "$f" ] && printf ' rxe.%s=%s' "${f##*/}" "$(cat "$f")"
	done
}

# Busy polling on both nodes (rtt_busy): net.core.busy_poll for poll(),
# which rds-bench waits in, and busy_read for blocking receives; the time
# must cover a round trip (TCG: about 1 ms).
busy() { # USEC (0: off)
	for k in busy_poll busy_read; do
		echo "$1" >/proc/sys/net/core/$k
		rds-peer 1 "echo $1 >/proc/sys/net/core/$k" >/dev/null
	done
}

# One rds-bench test between two counter snapshots.  rtt_busy is
# rds-bench's rtt with busy polling on.
bench_one() { # LABEL ROUND TEST [SIZE]
	label=$1 round=$2 test=$3 sz=${4:-0}
	szopt=
	[ "$sz" = 0 ] || szopt="-s $sz"
	mode=$test
	[ "$test" = rtt_busy ] && { mode=rtt; busy "$BUSY_US"; }
	echo "@@BENCH-CNT $label $round $test $sz before$(counters)"
	# shellcheck disable=SC2086 # szopt: no word or two
	timeout -s KILL $((DI * 3 + 60)) rds-bench -j -Q -d "$D" -q 8 -m "$mode" $szopt \
		-I "$RDS_LOCAL_ADDR" "$RDS_PEER_ADDR" >/tmp/bench.json 2>/tmp/bench.err
	rc=$?
	echo "@@BENCH-CNT $label $round $test $sz after$(counters)"
	[ "$test" = rtt_busy ] && busy 0
	sed "s/^/  $label $test $sz: /" /tmp/bench.err
	[ "$rc" = 0 ] || echo "  $label $test $sz: rds-bench exit status $rc"
	[ "$test" = rtt_busy ] &&
		sed -i 's/"test": *"rtt"/"test": "rtt_busy"/' /tmp/bench.json
	echo "@@BENCH-JSON $label $round $(tr -d '\n' </tmp/bench.json)"
}

run() { # LABEL ROUND TESTS (rate, bw and rtt, rdma_write, rdma_read, atomic)
	label=$1 round=$2 tests=$3
	echo "==== round $round: rds-bench, $label modules on both nodes"
	mem "$label" idle
	rds-peer 1 "rds-bench -S -Q -d 3600 $RDS_PEER_ADDR >/tmp/bench-server.log 2>&1 & echo \$! >/tmp/bench-server.pid" >/dev/null
	sleep 1
	for t in $tests; do
		case "$t" in
		bw|bw_zc|rdma_write|rdma_read)
			for s in $(echo "$SIZES" | tr , ' '); do bench_one "$label" "$round" "$t" "$s"; done ;;
		*) bench_one "$label" "$round" "$t" ;;
		esac
	done
	mem "$label" after
	# Or its socket keeps the modules busy.
	rds-peer 1 "kill \$(cat /tmp/bench-server.pid) 2>/dev/null; true" >/dev/null
}

# True once node 1's perftest server listens (IPv4 or IPv6 socket).
peer_listens() {
	port=$(printf '%04X' $PT_PORT)
	rds-peer -t 10 1 "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ':$port [0-9A-F:]* 0A '"
}

# One perftest: server on node 1, client here, both bounded.
raw_one() { # ROUND TEST SIZE TOOL ARGS...
	round=$1 test=$2 sz=$3 tool=$4; shift 4
	lim=$((DI * 3 + 70))
	rds-peer 1 "/tests/bench-cluster.sh serve-raw $((lim + 15)) $tool $*" >/dev/null
	i=0
	until peer_listens; do
		i=$((i + 1))
		[ $i -ge 40 ] && break
		sleep 0.25
	done
	echo "@@BENCH-CNT raw $round $test $sz before$(counters nords)"
	timeout -s KILL "$lim" "$tool" -d rxe0 -x "$(gid_index)" -F -p $PT_PORT "$@" \
		"$RDS_PEER_ADDR" >/tmp/raw.out 2>&1
	rc=$?
	echo "@@BENCH-CNT raw $round $test $sz after$(counters nords)"
	# The result line: starts with the size, then numbers only.
	line=$(awk -v s="$sz" '$1 == s && NF >= 5 { ok = 1
		for (i = 2; i <= NF; i++) if ($i !~ /^[0-9.]+$/) ok = 0
		if (ok) l = $0 } END { print l }' /tmp/raw.out)
	echo "@@BENCH-RAW $round $test $sz $rc $line"
	if [ "$rc" != 0 ] || [ -z "$line" ]; then
		echo "  raw $test $sz: $tool exit status $rc; its output:"
		tail -n 8 /tmp/raw.out | sed 's/^/    /'
		rds-peer 1 "tail -n 8 /tmp/raw-server.log" | sed 's/^/    server: /'
	fi
	# The server exits after its client; bounded wait, then kill.
	i=0
	while [ $i -lt 20 ] && rds-peer -t 10 1 "kill -0 \$(cat /tmp/raw-server.pid) 2>/dev/null"; do
		sleep 0.5
		i=$((i + 1))
	done
	rds-peer 1 "kill -9 \$(cat /tmp/raw-server.pid) 2>/dev/null; true" >/dev/null
}

raw() { # ROUND
	echo "==== round $1: raw verbs (perftest on rxe0)"
	if ! command -v ib_send_lat >/dev/null; then
		echo "  no perftest in this image (run_vm.sh --perftest)"
		return
	fi
	# -D: perftest measures between its two margins (-f, default 2 s
	# each); the run lasts the measured time plus both margins.
	rd=$((DI + 4))
	{ want rtt || want rtt_busy; } && raw_one "$1" send_lat 64 ib_send_lat -s 64 -n "$LAT_ITERS"
	want rdma_write && for s in $RAW_SIZES; do
		raw_one "$1" write_bw "$s" ib_write_bw -s "$s" -D "$rd"
	done
	want rdma_read && for s in $RAW_SIZES; do
		raw_one "$1" read_bw "$s" ib_read_bw -s "$s" -D "$rd"
	done
	{ want atomic || want atomic_silent; } && raw_one "$1" atomic_bw 8 ib_atomic_bw -D "$rd"
	# perftest -D also runs outside its measured window, so its counter
	# deltas per iteration are too high: in round 1, short runs of a
	# fixed count (-n) give the counts per op (tests named TEST.n).
	[ "$1" = 1 ] || return
	for s in $RAW_SIZES; do
		n=32
		[ "$s" -gt 65536 ] && n=5
		want rdma_write && raw_one "$1" write_bw.n "$s" ib_write_bw -s "$s" -n $n
		want rdma_read && raw_one "$1" read_bw.n "$s" ib_read_bw -s "$s" -n $n
	done
	{ want atomic || want atomic_silent; } && raw_one "$1" atomic_bw.n 8 ib_atomic_bw -n 500
	return 0
}

echo "rds-bench: $ROUNDS round(s), $D s per test, sizes $SIZES"
allocs_setup
r=1
while [ $r -le "$ROUNDS" ]; do
	if mods_everywhere ours; then
		run ours $r "$(pick rate bw bw_zc rtt rtt_busy rdma_write rdma_read atomic atomic_silent)"
	else
		echo "  loading our modules failed"
	fi
	if [ -z "$(pick rate bw bw_zc rtt rtt_busy rdma_write rdma_read)" ]; then
		:
	elif mods_everywhere intree; then
		# Not atomics: the in-tree module posts masked atomics, which
		# rxe lacks; the message then stays queued and wedges the
		# connection (and the module cannot be unloaded any more).
		run intree $r "$(pick rate bw bw_zc rtt rtt_busy rdma_write rdma_read)"
	else
		echo "  loading the in-tree modules failed"
	fi
	raw $r
	r=$((r + 1))
done
mods_everywhere ours >/dev/null 2>&1
exit 0
