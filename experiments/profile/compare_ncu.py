"""Our profiler's counters against Nsight Compute's on the same kernels (issue 16: within 5%).

    python experiments/profile/compare_ncu.py TFORGE REFERENCE_DIR [--set full] [--runs 2]

For each kernel of ncu_reference.sh (the same task, config and shape), runs `TFORGE profile
--json` (the cupti profiler, in the GPU worker) a few times and prints, per metric, ncu's value,
our median and their ratio, against ncu with its cache control (caches flushed before each pass)
and, where NAME_noflush.csv is there, without it. REFERENCE_DIR holds ncu_reference.sh's CSV
files (taken in the same session, clocks left alone by both). Last, each kernel's DRAM bytes
beside the task's compulsory traffic (`bytes`).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess

KERNELS = {  # name: task, --set arguments, tuning shape (as ncu_reference.sh takes them)
    "matmul_best": ("experiments/kernels/matmul/task.json",
                    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8,
                     "num_stages": 4}, 0),
    "matmul_baseline": ("experiments/kernels/matmul/task.json", {}, 0),
    "attention_baseline": ("experiments/kernels/attention/task.json", {}, 0),
    "softmax_baseline": ("experiments/kernels/softmax/task.json", {}, 0),
    "vector_add_16M": ("experiments/kernels/vector_add/task.json", {}, 1),
    "tiny_add": ("experiments/profile/tiny_add/task.json", {}, 0),
}
# ours <- a function of ncu's metrics (name -> value)
METRICS = {
    "sm_pct": lambda n: n["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    "dram_pct": lambda n: n["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
    "dram_bytes": lambda n: n["dram__bytes.sum"],
    "dram_read_bytes": lambda n: n["dram__bytes_read.sum"],
    "dram_write_bytes": lambda n: n["dram__bytes_write.sum"],
    "l2_pct": lambda n: n["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
    "sm_clock_ghz": lambda n: n["sm__cycles_elapsed.avg.per_second"] / 1e9,
    "instructions": lambda n: n["sm__inst_executed.sum"],
    "occupancy_achieved": lambda n: n["sm__warps_active.avg.pct_of_peak_sustained_active"] / 100,
    "issue_pct": lambda n: n["sm__inst_issued.avg.pct_of_peak_sustained_active"],
    "kernel_ms": lambda n: n["gpu__time_duration.sum"] / 1e6,
    "l2_sectors_per_request": lambda n: n["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    / n["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
}


def ncu_values(path):
    with open(path) as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    head = rows[0]
    out = {}
    for r in rows[1:]:
        d = dict(zip(head, r))
        out[d["Metric Name"]] = float(d["Metric Value"].replace(",", ""))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tforge")
    ap.add_argument("reference")
    ap.add_argument("--set", default="core", help="the profiler's metric set")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    print("| kernel | metric | ncu | ours (median) | ours / ncu | ncu, no flush | ours / that |")
    print("|---|---|---|---|---|---|---|")
    worst, traffic = [], []
    for name, (task, config, shape) in KERNELS.items():
        ref = os.path.join(args.reference, f"{name}.csv")
        if not os.path.exists(ref):
            print(f"| {name} | (no reference {ref}) | | | | | |")
            continue
        theirs = ncu_values(ref)
        noflush = os.path.join(args.reference, f"{name}_noflush.csv")
        unflushed = ncu_values(noflush) if os.path.exists(noflush) else {}
        cmd = [args.tforge, "profile", task, "--json", "--shape", str(shape),
               "--profiler-option", f"set={args.set}"]
        for k, v in config.items():
            cmd += ["--set", f"{k}={v}"]
        runs, static = [], {}
        for _ in range(args.runs):
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                print(f"| {name} | tforge profile failed ({p.returncode}): "
                      f"{p.stderr.strip()[-300:]} | | | | | |")
                break
            doc = json.loads(p.stdout)
            if doc.get("counters") != "ok":
                print(f"| {name} | counters {doc.get('counters')}: {doc.get('note')} | | | | | |")
                break
            runs.append(doc["counter_metrics"])
            static = doc.get("static", {})
        if not runs:
            continue
        for metric, of in METRICS.items():
            ours = [r[metric] for r in runs if metric in r]
            try:
                ref_value = of(theirs)
            except (KeyError, ZeroDivisionError):
                continue
            if not ours:
                print(f"| {name} | {metric} | {ref_value:.4g} | (absent) | | | |")
                continue
            m = statistics.median(ours)
            ratio = m / ref_value if ref_value else float("nan")
            worst.append((abs(ratio - 1) if ref_value else 0, name, metric))
            try:
                other = of(unflushed)
                second = f"{other:.4g} | {m / other:.3f}" if other else f"{other:.4g} | "
            except (KeyError, ZeroDivisionError):
                second = " | "
            print(f"| {name} | {metric} | {ref_value:.4g} | {m:.4g} | {ratio:.3f} | {second} |",
                  flush=True)
        median_of = lambda m: statistics.median(r[m] for r in runs) \
            if all(m in r for r in runs) else None  # noqa: E731
        traffic.append((name, static.get("bytes"), theirs.get("dram__bytes.sum"),
                        unflushed.get("dram__bytes.sum"), median_of("dram_bytes"),
                        theirs.get("dram__bytes_read.sum"), median_of("dram_read_bytes"),
                        theirs.get("dram__bytes_write.sum"), median_of("dram_write_bytes")))
    if worst:
        w = max(worst)
        within = sum(1 for d, _, _ in worst if d <= 0.05)
        print(f"\n{within} of {len(worst)} within 5% of ncu (flushed); the farthest: {w[1]} "
              f"{w[2]} ({100 * w[0]:.1f}% off)")
    mb = lambda v: f"{v / 1e6:.2f}" if v else "-"  # noqa: E731
    print("\n| kernel | compulsory MB (task) | ncu MB | ncu MB, no flush | ours MB | ncu read | "
          "ours read | ncu written | ours written |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, *values in traffic:
        print(f"| {name} | " + " | ".join(mb(v) for v in values) + " |")


if __name__ == "__main__":
    main()
