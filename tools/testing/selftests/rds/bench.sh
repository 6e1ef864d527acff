#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: boot the two-node cluster and run, in interleaved rounds,
# rds-bench between the nodes with our modules on both, then with Debian's
# in-tree rds/rds_rdma on both, then perftest's raw verbs ceilings on rxe
# (vm/bench-cluster.sh); print one table of ours, in-tree and raw with
# medians, spreads and ratios, and the counts per operation; keep the JSON
# and a chart under build/bench/ (bench-report.py).
#   KERNEL=stock|6.12 (default stock)
#   RDS_BENCH_SECONDS per test (default 2), RDS_BENCH_ROUNDS (default 3),
#   RDS_BENCH_SIZES for bw and RDMA (default 4K,64K,1M),
#   RDS_BENCH_LAT_ITERS ib_send_lat iterations (default 1000),
#   RDS_BENCH_BUSY_US busy-poll time of rtt_busy (default 5000),
#   RDS_BENCH_OURS_PARAMS rds_rdma.ko parameters for our modules (default
#   none; e.g. rds_ib_mr_reg_on_conn=1),
#   RDS_BENCH_TESTS a comma list of the rds-bench tests (and their raw
#   counterparts) to run
#   (default rate,bw,bw_zc,rtt,rdma_write,rdma_read,atomic,atomic_silent;
#   rtt_busy, rtt with busy polling on both nodes, only when named)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
out=$top/build/bench
mkdir -p "$out"
log=$out/run.log
secs=${RDS_BENCH_SECONDS:-2}
rounds=${RDS_BENCH_ROUNDS:-3}
envs=()
for v in RDS_BENCH_SECONDS RDS_BENCH_ROUNDS RDS_BENCH_SIZES RDS_BENCH_LAT_ITERS RDS_BENCH_BUSY_US \
	 RDS_BENCH_OURS_PARAMS \
	 RDS_BENCH_TESTS; do
	[ -n "${!v:-}" ] && envs+=(--env "$v=${!v}")
done
# The guest's limit: per round 15 + 14 rds-bench tests and 6 perftest
# runs, each the test time plus its set-up (generous under TCG), and
# the module reloads.
secs_int=${secs%.*}
limit=$((120 + rounds * (35 * (${secs_int:-1} + 6) + 60)))
"$here/run_vm.sh" --kernel "${KERNEL:-stock}" --show --perftest --limit "$limit" \
	"${envs[@]}" bench-cluster.sh 2>&1 | tee "$log" |
	grep --line-buffered -v "^@@BENCH-"
rc=${PIPESTATUS[0]}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
python3 "$here/bench-report.py" "$log" "$out" "${KERNEL:-stock}" "$stamp" "$secs"
prc=$?
[ "$rc" = 0 ] && [ "$prc" = 0 ]
