#!/bin/sh
# What `make bench` runs on node 0 of a two-node cluster: rds-bench against
# node 1 with our modules on both nodes, then with Debian's in-tree
# rds/rds_rdma on both.  Each run's JSON goes out on one "@@BENCH-JSON
# LABEL" line for bench.sh on the host.
D=${RDS_BENCH_SECONDS:-2}
SIZES=${RDS_BENCH_SIZES:-4K,64K,1M}

mods_everywhere() { # ours|intree
	rds-mods unload && rds-mods load "$1" &&
		rds-peer 1 "rds-mods unload && rds-mods load $1" >/dev/null
}

# Memory on node 0: module sizes (/proc/modules) and kernel slab in kB.
mem() { # LABEL WHEN
	mods=$(awk '$1 == "rds" || $1 == "rds_rdma" { s += $2 } END { print s + 0 }' /proc/modules)
	slab=$(awk '$1 == "Slab:" { print $2 }' /proc/meminfo)
	echo "@@BENCH-MEM $1 $2 modules_bytes=$mods slab_kb=$slab"
}

run() { # LABEL [rds-bench options]
	label=$1; shift
	echo "==== rds-bench, $label modules on both nodes"
	mem "$label" idle
	rds-peer 1 "rds-bench -S -Q -d 600 $RDS_PEER_ADDR >/tmp/bench-server.log 2>&1 & echo \$! >/tmp/bench-server.pid" >/dev/null
	sleep 1
	rds-bench -j -x -d "$D" -q 8 -s "$SIZES" -I "$RDS_LOCAL_ADDR" "$@" "$RDS_PEER_ADDR" \
		>/tmp/bench-$label.json 2>/tmp/bench-$label.err
	rc=$?
	mem "$label" after
	sed 's/^/  /' /tmp/bench-$label.err
	echo "@@BENCH-JSON $label $(tr -d '\n' </tmp/bench-$label.json)"
	echo "  rds-bench exit status $rc"
	# -x stopped it; make sure, or its socket keeps the modules busy.
	rds-peer 1 "kill \$(cat /tmp/bench-server.pid) 2>/dev/null; true" >/dev/null
}

run ours
if mods_everywhere intree; then
	# Not atomics: the in-tree module posts masked atomics, which rxe
	# lacks; the message then stays queued and wedges the connection
	# (and the module cannot be unloaded any more).
	run intree -m rate,bw,rtt,rdma
else
	echo "  loading the in-tree modules failed"
fi
mods_everywhere ours >/dev/null 2>&1
exit 0
