#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: read the @@BENCH-* lines of a bench-cluster.sh run
(the run_vm.sh log), print the table of ours, in-tree and raw verbs with
ratios and the counts per operation, write bench.json (and ours.json,
intree.json, raw.json) and the chart (bench.svg, with gnuplot).

  bench-report.py LOG OUTDIR KERNEL STAMP SECONDS
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

LABELS = ("ours", "intree", "raw")
NAMES = {"ours": "ours", "intree": "in-tree", "raw": "raw"}

# Which perftest result stands for a rds-bench figure, and how.  perftest's
# result lines: ib_send_lat "bytes iters t_min t_max t_typical t_avg ...",
# the _bw tools "bytes iters BW_peak BW_average MsgRate[Mpps]".  perftest's
# MB/sec are 2^20 bytes; rds-bench's MB/s are 10^6: converted here.  Atomics
# from MsgRate (its BW column has too few digits at 8 bytes).
RAW_FOR = {
    "rtt": ("send_lat", None),
    "rtt_busy": ("send_lat", None),
    "rdma_write": ("write_bw", "size"),
    "rdma_read": ("read_bw", "size"),
    "atomic": ("atomic_bw", None),
    "atomic_silent": ("atomic_bw", None),
}


def size_of(s):
    """A size as rds-bench's -s takes it (4K, 1M, 65536)."""
    s = s.upper()
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:], 1)
    return int(s.rstrip("KM")) * mult


def parse(log):
    runs = {"ours": {}, "intree": {}}   # label -> round -> [result]
    raw = []                            # {round, test, size, rc, fields}
    cnt = {}                            # (label, round, test, size) -> {when: {}}
    mem = {}
    for line in open(log, errors="replace"):
        line = line.rstrip("\r\n")
        if not line.startswith("@@BENCH-"):
            continue
        tag, _, rest = line.partition(" ")
        f = rest.split()
        try:
            if tag == "@@BENCH-JSON" and len(f) >= 3:
                label, rnd = f[0], int(f[1])
                body = rest.split(None, 2)[2]
                d = json.loads(body)
                runs.setdefault(label, {}).setdefault(rnd, []).extend(d.get("results", []))
            elif tag == "@@BENCH-RAW" and len(f) >= 4:
                vals = [float(x) for x in f[4:]]
                raw.append({"round": int(f[0]), "test": f[1], "size": int(f[2]),
                            "rc": int(f[3]), "fields": vals})
            elif tag == "@@BENCH-CNT" and len(f) >= 5:
                k = (f[0], int(f[1]), f[2], size_of(f[3]))
                cnt.setdefault(k, {})[f[4]] = {
                    a: int(b) for a, b in (x.split("=", 1) for x in f[5:] if "=" in x)}
            elif tag == "@@BENCH-MEM" and len(f) >= 2:
                mem.setdefault(f[0], {})[f[1]] = {
                    a: int(b) for a, b in (x.split("=", 1) for x in f[2:])}
        except ValueError as e:
            print(f"bench: unreadable line ({e}): {line[:120]}")
    return runs, raw, cnt, mem


def raw_value(r, test):
    """The figure of one perftest result, in rds-bench's unit."""
    v = r["fields"]
    if r["rc"] != 0 or len(v) < 5:
        return None
    # Under TCG perftest now and then reports 0 for a run that did
    # iterations (its cycle-based clock): no figure then, see the notes.
    if test == "send_lat":
        return 2 * v[4] if v[4] > 0 else None   # typical one-way x 2: an RTT
    if test == "atomic_bw":
        return v[4] * 1e6 if v[4] > 0 else None  # op/s
    return v[3] * 1.048576 if v[3] > 0 else None  # MB/s (10^6)


def figure(test):
    """(column name, unit, True when lower is better) of a rds-bench test."""
    if test in ("rtt", "rtt_busy"):
        return ("p50 RTT", "us", True)
    if test == "rate":
        return ("round trips", "/s", False)
    if test in ("atomic", "atomic_silent"):
        return ("fetch-adds", "op/s", False)
    return ("payload", "MB/s", False)


def rds_value(r):
    if r is None or r.get("status") != "ok":
        return None
    if r["test"] in ("rtt", "rtt_busy"):
        return r["latency_us"]["p50"]
    if r["test"] in ("rate", "atomic", "atomic_silent"):
        return r["ops_per_sec"]
    return r["mb_per_sec"]


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def stats(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "n": len(vals), "values": vals}


def cell(s):
    if s is None:
        return "-"
    if s["n"] == 1:
        return fmt(s["median"])
    return f'{fmt(s["median"])} ({fmt(s["min"])}..{fmt(s["max"])})'


def ratio(a, b):
    if a is None or b is None or not b["median"]:
        return None
    return a["median"] / b["median"]


def main():
    log, out, kernel, stamp, secs = sys.argv[1:6]
    os.makedirs(out, exist_ok=True)
    runs, raw, cnt, mem = parse(log)
    if not any(runs.values()):
        print("bench: no rds-bench result in the log")
        return 1
    rounds = sorted({r for d in runs.values() for r in d} | {r["round"] for r in raw})

    # The rows: every (test, size) rds-bench reported, in run order.
    order = []
    for label in ("ours", "intree"):
        for rnd in sorted(runs.get(label, {})):
            for r in runs[label][rnd]:
                if (r["test"], r["size"]) not in order:
                    order.append((r["test"], r["size"]))

    def results(label, test, size):
        out_ = []
        for rnd in rounds:
            m = [r for r in runs.get(label, {}).get(rnd, [])
                 if r["test"] == test and r["size"] == size]
            out_.append(m[-1] if m else None)
        return out_

    def raw_of(test, size):
        if test not in RAW_FOR:
            return None, []
        rt, by = RAW_FOR[test]
        want = size if by == "size" else None
        rs = [r for r in raw if r["test"] == rt and (want is None or r["size"] == want)]
        return rt, rs

    rows = []
    notes = []
    for test, size in order:
        name, unit, lower = figure(test)
        row = {"test": test, "size": size, "figure": name, "unit": unit,
               "lower_is_better": lower}
        for label in ("ours", "intree"):
            rs = results(label, test, size)
            row[label] = stats([rds_value(r) for r in rs])
            for r in rs:
                if r and r.get("status") != "ok":
                    n = f'  {NAMES[label]} {test} {size}: {r["status"]}: {r.get("reason", "")}'
                    if n not in notes:
                        notes.append(n)
        rt, rs = raw_of(test, size)
        row["raw_test"] = rt
        row["raw"] = stats([raw_value(r, rt) for r in rs]) if rs else None
        for r in rs:
            if r["rc"] != 0 or len(r["fields"]) < 5:
                n = f'  raw {rt} {r["size"]}: round {r["round"]}: exit {r["rc"]}, no result'
            elif raw_value(r, rt) is None:
                n = (f'  raw {rt} {r["size"]}: round {r["round"]}: perftest reported 0 after'
                     f' {r["fields"][1]:.0f} iterations (left out)')
            else:
                continue
            if n not in notes:
                notes.append(n)
        row["ours/raw"] = ratio(row["ours"], row["raw"])
        row["intree/raw"] = ratio(row["intree"], row["raw"])
        row["ours/intree"] = ratio(row["ours"], row["intree"])
        rows.append(row)

    # ---- the table ----------------------------------------------------------
    print()
    print(f"rds-bench vs raw verbs, kernel {kernel}, {len(rounds)} interleaved round(s)"
          f" (ours, in-tree, raw), {secs} s per test, depth 8; median (min..max) over rounds.  TCG numbers: only ratios count.")
    print("raw = perftest on rxe0, same VMs: rtt vs 2 x ib_send_lat 64 B t_typical (rds-bench's"
          " rtt sends 48-byte messages, 1 in flight);")
    print("      rtt_busy = rtt with busy polling on both nodes (net.core.busy_poll and busy_read,"
          " RDS_BENCH_BUSY_US; in-tree ignores them);")
    print("      rdma_write/rdma_read SIZE vs ib_write_bw/ib_read_bw -s SIZE; atomic vs ib_atomic_bw"
          " (8 B fetch-add) op/s.")
    print("Ratios of medians; for p50 RTT lower is better (ours/raw 2.0 = twice the raw RTT),"
          " for the rest higher is better.")
    w = 26
    hdr = (f'{"test":<13} {"size":>7} {"unit":>5} | {"ours":>{w}} | {"in-tree":>{w}} | {"raw":>{w}} |'
           f' {"ours/raw":>8} {"in-tree/raw":>11} {"ours/in-tree":>12}')
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        def rt(x):
            return f"{x:.2f}x" if x is not None else "-"
        print(f'{r["test"]:<13} {r["size"]:>7} {r["unit"]:>5} | {cell(r["ours"]):>{w}} |'
              f' {cell(r["intree"]):>{w}} | {cell(r["raw"]):>{w}} |'
              f' {rt(r["ours/raw"]):>8} {rt(r["intree/raw"]):>11} {rt(r["ours/intree"]):>12}')
    if runs.get("intree") and not any(r["test"] == "atomic" for rr in runs["intree"].values() for r in rr):
        notes.append("  in-tree atomic: not run: Debian's in-tree RDS posts only masked atomics,"
                     " which rxe does not have; the message then stays queued and wedges the connection")
    if not raw:
        notes.append("  raw: no perftest result (is perftest in the guest image? run_vm.sh --perftest)")
    if notes:
        print("\n".join(notes))

    # ---- counts per operation -----------------------------------------------
    # Node 0's counter deltas over each test, divided by the test's ops
    # (rds-bench: completed requests; perftest: its iterations).
    per_op = []
    for (label, rnd, test, size), d in sorted(cnt.items()):
        if "before" not in d or "after" not in d:
            continue
        if label == "raw":
            m = [r for r in raw if r["round"] == rnd and r["test"] == test and r["size"] == size]
            ops = int(m[0]["fields"][1]) if m and len(m[0]["fields"]) >= 2 else 0
        else:
            # rate, rtt and atomic have no -s: their snapshots say size 0.
            m = [r for r in runs.get(label, {}).get(rnd, [])
                 if r["test"] == test and (r["size"] == size or not size)]
            ops = m[-1].get("ops", 0) if m else 0
            if m:
                size = m[-1]["size"]
        delta = {k: d["after"][k] - d["before"].get(k, 0) for k in d["after"]}
        per_op.append({"label": label, "round": rnd, "test": test, "size": size,
                       "ops": ops, "delta": delta})

    def count(label, test, size, fn):
        vals = []
        for c in per_op:
            if (c["label"], c["test"], c["size"]) == (label, test, size) and c["ops"] > 0:
                v = fn(c["delta"])
                if v is not None:
                    vals.append(v / c["ops"])
        return statistics.median(vals) if vals else None

    def pkts(dl):
        if "rxe.sent_pkts" not in dl:
            return None
        return dl["rxe.sent_pkts"] + dl.get("rxe.rcvd_pkts", 0)

    def ctr(name):
        return lambda dl: dl.get(name)

    def raw_count(rt, size):
        # The fixed-count runs (TEST.n) when there are: -D runs count
        # packets outside their measured window too.
        if not rt:
            return None
        v = count("raw", rt + ".n", size, pkts)
        return v if v is not None else count("raw", rt, size, pkts)

    count_rows = []
    if per_op:
        print("\ncounts per operation on node 0 (counter deltas / ops, median over rounds):"
              " wire = rxe sent+received packets,")
        print("txcq/rxcq = RDS ib_tx_cq_event/ib_rx_cq_event, ack = ib_ack_sent,"
              " copy = bytes the CPU copied on send (copy_from_user);")
        print("post = ib_tx_posts (send ring doorbells; ours only);")
        print("raw: per iteration of fixed-count perftest runs (-n, round 1)")
        hdr = (f'{"test":<13} {"size":>7} | {"wire ours":>9} {"in-tree":>7} {"raw":>6} |'
               f' {"txcq ours":>9} {"in-tree":>7} | {"rxcq ours":>9} {"in-tree":>7} |'
               f' {"ack ours":>8} {"in-tree":>7} | {"copy ours":>9} {"in-tree":>7} | {"post":>5}')
        print(hdr)
        print("-" * len(hdr))
        for test, size in order:
            rt, rs = raw_of(test, size)
            raw_size = rs[0]["size"] if rs else None
            c = {
                "test": test, "size": size,
                "wire": {"ours": count("ours", test, size, pkts),
                         "intree": count("intree", test, size, pkts),
                         "raw": raw_count(rt, raw_size)},
                "tx_cq_events": {m: count(m, test, size, ctr("ib_tx_cq_event")) for m in ("ours", "intree")},
                "rx_cq_events": {m: count(m, test, size, ctr("ib_rx_cq_event")) for m in ("ours", "intree")},
                "acks_sent": {m: count(m, test, size, ctr("ib_ack_sent")) for m in ("ours", "intree")},
                "copy_bytes": {m: count(m, test, size, ctr("copy_from_user")) for m in ("ours", "intree")},
                "tx_posts": {"ours": count("ours", test, size, ctr("ib_tx_posts"))},
                "slab_allocs": {m: count(m, test, size, ctr("alloc.slab")) for m in ("ours", "intree")},
                "page_allocs": {m: count(m, test, size, ctr("alloc.pages")) for m in ("ours", "intree")},
                "rx_copy_bytes": {m: count(m, test, size, ctr("copy_to_user")) for m in ("ours", "intree")},
            }
            count_rows.append(c)
            print(f'{test:<13} {size:>7} | {fmt(c["wire"]["ours"]):>9} {fmt(c["wire"]["intree"]):>7}'
                  f' {fmt(c["wire"]["raw"]):>6} | {fmt(c["tx_cq_events"]["ours"]):>9}'
                  f' {fmt(c["tx_cq_events"]["intree"]):>7} | {fmt(c["rx_cq_events"]["ours"]):>9}'
                  f' {fmt(c["rx_cq_events"]["intree"]):>7} | {fmt(c["acks_sent"]["ours"]):>8}'
                  f' {fmt(c["acks_sent"]["intree"]):>7} | {fmt(c["copy_bytes"]["ours"]):>9}'
                  f' {fmt(c["copy_bytes"]["intree"]):>7} | {fmt(c["tx_posts"]["ours"]):>5}')

    if count_rows:
        print("\nallocations and receive copies per operation on node 0 (median over rounds):"
              " slab = slab allocator calls")
        print("made by the rds and rds_rdma modules (call site), pages = page allocator calls"
              " with one of their")
        print("functions on the stack (hist triggers), rcopy = bytes the CPU copied on"
              " receive (copy_to_user)")
        hdr = (f'{"test":<13} {"size":>7} | {"slab ours":>9} {"in-tree":>7} |'
               f' {"pages ours":>10} {"in-tree":>7} | {"rcopy ours":>10} {"in-tree":>7}')
        print(hdr)
        print("-" * len(hdr))
        for c in count_rows:
            print(f'{c["test"]:<13} {c["size"]:>7} | {fmt(c["slab_allocs"]["ours"]):>9}'
                  f' {fmt(c["slab_allocs"]["intree"]):>7} | {fmt(c["page_allocs"]["ours"]):>10}'
                  f' {fmt(c["page_allocs"]["intree"]):>7} | {fmt(c["rx_copy_bytes"]["ours"]):>10}'
                  f' {fmt(c["rx_copy_bytes"]["intree"]):>7}')

    if mem:
        print("\nmemory on node 0: module text+data (/proc/modules), kernel slab idle -> after"
              " the tests (round 1)")
        for m in ("ours", "intree"):
            d = mem.get(m, {})
            if "idle" in d and "after" in d:
                print(f'  {NAMES[m]:<7} modules {d["idle"]["modules_bytes"] / 1024:7.0f} KiB,'
                      f' slab {d["idle"]["slab_kb"]} -> {d["after"]["slab_kb"]} kB'
                      f' ({d["after"]["slab_kb"] - d["idle"]["slab_kb"]:+d} kB)')

    # ---- JSON -----------------------------------------------------------------
    per_round = {m: {str(k): v for k, v in sorted(runs.get(m, {}).items())} for m in ("ours", "intree")}
    for m in ("ours", "intree"):
        with open(os.path.join(out, m + ".json"), "w") as f:
            json.dump({"label": m, "rounds": per_round[m]}, f, indent=1)
    with open(os.path.join(out, "raw.json"), "w") as f:
        json.dump({"label": "raw", "results": raw}, f, indent=1)
    combined = {
        "kernel": kernel, "when": stamp, "rounds": len(rounds), "seconds": float(secs),
        "mapping": {k: v[0] for k, v in RAW_FOR.items()},
        "summary": rows, "counts": count_rows, "runs": per_round, "raw": raw,
        "counters": per_op, "memory": mem,
    }
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(combined, f, indent=1)
    print(f"\nJSON: {out}/bench.json (summary, per-round results, counters);"
          f" {out}/ours.json, intree.json, raw.json")
    chart(rows, out, kernel)
    return 0


def chart(rows, out, kernel):
    """One small bar chart per row (ours, in-tree, raw; min..max as error
    bars), drawn by gnuplot into bench.svg."""
    gp = shutil.which("gnuplot")
    if not gp:
        print("chart: skipped (no gnuplot; scripts/install-deps.sh installs gnuplot-nox)")
        return
    rows = [r for r in rows if r["ours"] or r["intree"] or r["raw"]]
    if not rows:
        return
    cols = 4
    nrows = (len(rows) + cols - 1) // cols
    dat = os.path.join(out, "bench.dat")
    with open(dat, "w") as f:
        for i, r in enumerate(rows):
            f.write(f'# {r["test"]} {r["size"]}\n')
            for j, m in enumerate(LABELS):
                s = r[m]
                if s:
                    f.write(f'{j} "{NAMES[m]}" {s["median"]} {s["min"]} {s["max"]}\n')
                else:
                    f.write(f'{j} "{NAMES[m]}" NaN NaN NaN\n')
            f.write("\n\n")
    svg = os.path.join(out, "bench.svg")
    g = [f'set terminal svg size {cols * 300},{nrows * 240 + 40} dynamic font "sans,10"',
         f'set output "{svg}"',
         "set style fill solid 0.7 border -1", "set boxwidth 0.6", "set xrange [-0.6:2.6]",
         "set yrange [0:*]", "unset key", "set grid ytics",
         f'set multiplot layout {nrows},{cols} title "make bench, kernel {kernel}:'
         f' ours, in-tree, raw verbs (median, min..max)"']
    for i, r in enumerate(rows):
        what = "lower is better" if r["lower_is_better"] else "higher is better"
        size = f' {r["size"]}' if r["size"] else ""
        g.append(f'set title "{r["test"]}{size}: {r["figure"]} {r["unit"]}\\n({what})" noenhanced')
        g.append(f'plot "{dat}" index {i} using 1:3:($0 + 1):xtic(2) with boxes lc variable,'
                 f' "" index {i} using 1:3:4:5 with yerrorbars lc rgb "black" pt 0')
    g.append("unset multiplot")
    try:
        p = subprocess.run([gp], input="\n".join(g) + "\n", text=True,
                           capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"chart: gnuplot failed: {e}")
        return
    if p.returncode != 0 or not os.path.exists(svg):
        print(f"chart: gnuplot failed: {p.stderr.strip()[:300]}")
        return
    print(f"chart: {svg}")


if __name__ == "__main__":
    sys.exit(main())
