#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: boot the two-node cluster and run rds-bench between the nodes,
# with our modules on both, then with Debian's in-tree rds/rds_rdma on both;
# print a comparison table and keep the JSON under build/bench/.
#   KERNEL=stock|6.12 (default stock), RDS_BENCH_SECONDS per test (default 2)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
out=$top/build/bench
mkdir -p "$out"
log=$out/run.log
"$here/run_vm.sh" --kernel "${KERNEL:-stock}" --show bench-cluster.sh 2>&1 | tee "$log" |
	grep --line-buffered -v "^@@BENCH-\(JSON\|MEM\)"
rc=${PIPESTATUS[0]}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
for m in ours intree; do
	line=$(grep -a "^@@BENCH-JSON $m " "$log" | tail -n 1)
	[ -n "$line" ] && printf '%s\n' "${line#@@BENCH-JSON $m }" >"$out/$m.json"
done
grep -a '^@@BENCH-MEM ' "$log" | tr -d '\r' >"$out/mem.txt"
python3 - "$out" "${KERNEL:-stock}" "$stamp" <<'PY'
import json, os, sys
out, kernel, stamp = sys.argv[1:4]
mem = {}
for line in open(os.path.join(out, "mem.txt")):
    f = line.split()
    if len(f) >= 3:
        mem.setdefault(f[1], {})[f[2]] = {k: int(v) for k, v in (x.split("=") for x in f[3:])}
runs = {}
for m in ("ours", "intree"):
    p = os.path.join(out, m + ".json")
    try:
        runs[m] = json.load(open(p))
    except (OSError, ValueError) as e:
        print(f"bench: no usable result for {m}: {e}")
if not runs:
    sys.exit(1)
def key(r):
    return (r["test"], r["size"])
order, res = [], {}
for m, d in runs.items():
    for r in d["results"]:
        if key(r) not in order:
            order.append(key(r))
        res[(m,) + key(r)] = r
def cell(r):
    if r is None:
        return ("not run", "", "")
    if r["status"] != "ok":
        return (r["status"], "", "")
    return (f'{r["ops_per_sec"]:.0f}', f'{r["mb_per_sec"]:.2f}',
            f'{r["latency_us"]["p50"]:.0f}/{r["latency_us"]["p99"]:.0f}')
print()
print(f"rds-bench, kernel {kernel}, {next(iter(runs.values()))['duration']} s per test,"
      f" depth {next(iter(runs.values()))['depth']} (TCG numbers: compare, do not quote)")
hdr = f'{"test":<11} {"size":>8} | {"ours ops/s":>10} {"MB/s":>7} {"p50/p99 us":>15} | {"in-tree ops/s":>13} {"MB/s":>7} {"p50/p99 us":>15} | {"ours/in-tree":>12}'
print(hdr)
print("-" * len(hdr))
notes = []
for t, s in order:
    a, b = res.get(("ours", t, s)), res.get(("intree", t, s))
    ca, cb = cell(a), cell(b)
    ratio = ""
    if a and b and a["status"] == b["status"] == "ok" and b["ops_per_sec"] > 0:
        ratio = f'{a["ops_per_sec"] / b["ops_per_sec"]:.2f}x'
    print(f"{t:<11} {s:>8} | {ca[0]:>10} {ca[1]:>7} {ca[2]:>15} | {cb[0]:>13} {cb[1]:>7} {cb[2]:>15} | {ratio:>12}")
    for m, r in (("ours", a), ("in-tree", b)):
        if r and r.get("reason"):
            notes.append(f"  {m} {t} {s}: {r['status']}: {r['reason']}")
if "intree" in runs and not any(r["test"] == "atomic" for r in runs["intree"]["results"]):
    notes.append("  in-tree atomic: not run: Debian's in-tree RDS posts only masked atomics, which rxe"
                 " does not have; the message then stays queued and wedges the connection")
if notes:
    print("\n".join(notes))
if mem:
    print("\nmemory on node 0: module text+data (/proc/modules), kernel slab idle -> after the run")
    for m in ("ours", "intree"):
        d = mem.get(m, {})
        if "idle" in d and "after" in d:
            print(f'  {m:<7} modules {d["idle"]["modules_bytes"] / 1024:7.0f} KiB,'
                  f' slab {d["idle"]["slab_kb"]} -> {d["after"]["slab_kb"]} kB'
                  f' ({d["after"]["slab_kb"] - d["idle"]["slab_kb"]:+d} kB)')
combined = {"kernel": kernel, "when": stamp, "runs": runs, "memory": mem}
with open(os.path.join(out, "bench.json"), "w") as f:
    json.dump(combined, f, indent=1)
print(f"\nJSON: {out}/ours.json, {out}/intree.json, {out}/bench.json")
PY
prc=$?
[ "$rc" = 0 ] && [ "$prc" = 0 ]
