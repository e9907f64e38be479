"""The suite: each realistic fixture tuned end to end as a user would, `tforge capture` of its
drive.py entry, then `tforge tune` of every task captured, the file's own launch config being the
baseline. Usage: run.py TFORGE OUT [NAME...] (all of drive.py's entries when none is named);
BUDGET (50), TIME (2m), SEED (1) and BACKEND (unset: tune's auto) go to every tune; BUDGET or TIME
set empty leaves that option to tune's default (no --time: no time limit). Prints the
table and writes it to OUT/suite.md. A failure at any step is a row, never an exception.
"""
import json
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVE = os.path.join(HERE, "drive.py")
RERUN = os.path.join(HERE, "rerun.py")

BUDGET, TIME = os.environ.get("BUDGET", "50"), os.environ.get("TIME", "2m")
SEED, BACKEND = os.environ.get("SEED", "1"), os.environ.get("BACKEND")
CAPTURE_TIMEOUT = 900  # on a GPU the autotuned matmul benchmarks its configs first


def seconds(text):
    """tune's --time (90s, 2m, 1h, or plain seconds) in seconds."""
    unit = {"s": 1, "m": 60, "h": 3600}.get(text[-1:], 1)
    return float(text.rstrip("smh")) * unit


def reason(text):
    """The engine's first error line (`tforge ...:`), else the last line: warnings come first."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("tforge")), lines[-1] if lines else
                "no message")[:200]


def run(argv, timeout):
    """(exit status, stdout, stderr); a timeout is status 124, as timeout(1) says it."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"killed after {timeout:.0f} s"


def short(config):
    """BLOCK_SIZE_M=64, num_warps=4 -> BM64 w4 (num_ctas=1 left out)."""
    names = {"num_warps": "w", "num_stages": "s", "num_ctas": "ctas"}
    return " ".join(f"{names.get(k) or re.sub(r'(BLOCK|GROUP)(_SIZE)?_?', lambda m: m[1][0], k)}{v}"
                    for k, v in (config or {}).items() if (k, v) != ("num_ctas", 1))


def tune(tforge, out, name, task):
    """Tunes one captured task; its row's measured fields, or a failed status."""
    runs = os.path.join(out, "runs", f"{name}_{os.path.basename(os.path.dirname(task))}")
    argv = [tforge, "tune", task, *(["--budget", BUDGET] if BUDGET else []),
            *(["--time", TIME] if TIME else []), "--seed", SEED,
            "--out", runs, "-q", "--json"] + (["--backend", BACKEND] if BACKEND else [])
    rc, stdout, stderr = run(argv, 2 * seconds(TIME) + 300 if TIME else 1800)
    try:
        r = json.loads(stdout) if rc == 0 else None
    except ValueError:
        r = None
    if r is None:
        return {"status": f"tune failed ({rc}): {reason(stderr)}"}
    history = r["history"]
    best = r["best"].get("config")
    return {"base_ms": r["baseline"].get("ms"), "best_ms": r["best"].get("ms"),
            "speedup": r.get("speedup"), "evals": len(history),
            "ok": sum(h["status"] == "ok" for h in history), "seconds": r["seconds"],
            "timed": r["timed"], "winner_ok": any(h["config"] == best and h["status"] == "ok"
                                                  for h in history),
            "rewrites": (r.get("transforms") or {}).get("winner") or "-",
            "busy": r.get("runner_busy_after_first_batch"), "split": r.get("seconds_split"),
            "take_home": take_home(r.get("take_home")), "status": "ok", **rerun(runs)}


def take_home(verdict):
    """The tune's own check of best_variant.py run as the user runs it: ok, or refused N."""
    if not verdict:
        return "-"
    refused = len(verdict.get("refused") or [])
    return ("ok" if verdict.get("verified") else "FAILED") + (f", {refused} refused"
                                                              if refused else "")


def rerun(runs):
    """best_variant.py re-run through the file's entry point in a fresh process, checked, and
    on a GPU timed against the file's own launch (rerun.py): {rerun_check, rerun_file_ms,
    rerun_winner_ms}, or {rerun_check: the error}."""
    rc, stdout, stderr = run([sys.executable, RERUN, runs], 600)
    try:
        got = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        got = {"error": f"rerun.py ({rc}): {reason(stderr)}"}
    if "error" in got:
        return {"rerun_check": got["error"]}
    row = {"rerun_check": got["check"] + (f": {got['message']}" if got["check"] != "ok" else "")}
    if "file_ms" in got:
        row.update(rerun_file_ms=got["file_ms"], rerun_winner_ms=got["winner_ms"])
    return row


def split(row):
    """Where a task's seconds went: capture (the entry's, shared by its tasks), then the tune's
    phases (result.json's seconds_split), rounded; compile times summed last."""
    t = row.get("split") or {}
    names = [("task", "load_task"), ("setup", "setup"), ("base", "baselines"),
             ("prof", "profile"), ("search", "search"), ("cand", "candidates"),
             ("final", "final_retiming"), ("win", "winner"), ("comp", "compile_summed")]
    cap = row.get("capture_s")
    return " ".join(([f"cap {cap:.0f}"] if cap is not None else []) +
                    [f"{short} {t[k]:.0f}" for short, k in names if k in t])


def entry_rows(tforge, out, name):
    """Captures entry `name`, then tunes each task it wrote: its rows."""
    argv = [tforge, "capture", "--out", os.path.join(out, "capture", name), "--json", "--",
            sys.executable, DRIVE, name]
    began = time.monotonic()
    rc, stdout, stderr = run(argv, CAPTURE_TIMEOUT)
    capture_s = time.monotonic() - began
    try:
        doc = json.loads(stdout)
    except ValueError:
        return [{"entry": name, "status": f"capture failed ({rc}): {reason(stderr)}"}]
    rows = []
    if doc.get("error") or not doc["tasks"]:
        rows.append({"entry": name, "status": "capture failed: "
                     + reason(doc.get("error") or "no Triton launch recorded")})
    for t in doc["tasks"]:
        row = {"entry": name, "kernel": t["kernel"], "baseline": short(t["baseline"]),
               "shape": " ".join(f"{k}={v}" for k, v in t["shape"].items()),
               "capture_s": capture_s}
        if t["check"] != "ok":
            row["status"] = f"check failed ({t['check']}): {reason(t.get('check_message'))}"
        else:
            row.update(tune(tforge, out, name, t["task"]))
        rows.append(row)
        print(table([row], header=False), flush=True)
    return rows


def rerun_cell(row):
    if "rerun_file_ms" not in row:
        return row.get("rerun_check", "-")
    a, b = row["rerun_file_ms"], row["rerun_winner_ms"]
    return f"{row['rerun_check']}: {a:.4f}, {b:.4f}, {speedup(a / b)}"


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def speedup(value):
    """Bold below 1: a kernel the tune left slower than its baseline must stand out."""
    return "-" if value is None else f"**{value:.2f}**" if value < 1 else f"{value:.2f}"


def table(rows, header=True):
    head = ["| entry | kernel | shape | baseline | baseline ms | best ms | speedup | evals (ok) "
            "| tune s | seconds: where | winner's rewrites | GPU busy | take-home | re-run: "
            "check: file ms, winner ms, speedup | status |", "|---" * 15 + "|"]
    lines = []
    for r in rows:
        cells = [r["entry"], r.get("kernel", "-"), r.get("shape", "-"), r.get("baseline", "-")]
        if "evals" in r:
            cells += [fmt(r["base_ms"], ".4f"), fmt(r["best_ms"], ".4f"), speedup(r["speedup"]),
                      f"{r['evals']} ({r['ok']})", f"{r['seconds']:.0f}", split(r), r["rewrites"],
                      fmt(r["busy"] if r["timed"] else None, ".2f"), r["take_home"],
                      rerun_cell(r)]
        else:
            cells += ["-"] * 10
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells + [r["status"]]) + " |")
    return "\n".join((head if header else []) + lines)


def summary(rows):
    tuned = [r for r in rows if "evals" in r]
    if not tuned:
        return "no task tuned"
    longest = max(r["seconds"] for r in tuned)
    home = (f"the tune's take-home check {passed_in(tuned, 'take_home')}, best_variant.py "
            f"re-run through the file's entry point in a fresh process "
            f"{passed_in(tuned, 'rerun_check')}")
    if not all(r["timed"] for r in tuned):
        return (f"interpret: correctness only (no times, no speedups). {len(tuned)} of "
                f"{len(rows)} tasks tuned, {sum(r['ok'] for r in tuned)} of "
                f"{sum(r['evals'] for r in tuned)} candidates passed their check, longest tune "
                f"{longest:.0f} s; {home}.")
    scored = [r for r in tuned if r["speedup"]]
    if not scored:
        return "no task has a speedup"
    geomean = math.exp(sum(math.log(r["speedup"]) for r in scored) / len(scored))
    slowest = min(scored, key=lambda r: r["speedup"])
    return (f"geomean speedup {geomean:.3f}x over {len(scored)} tasks tuned (of {len(rows)}); "
            f"minimum {slowest['speedup']:.3f}x ({slowest['entry']} {slowest['kernel']})"
            f"{', SLOWER THAN ITS BASELINE' if slowest['speedup'] < 1 else ''}; longest tune "
            f"{longest:.0f} s; winner passed in {sum(r['winner_ok'] for r in tuned)} of "
            f"{len(tuned)}; {home}{rerun_summary(tuned)}.")


def passed_in(tuned, column):
    """How many of the tuned rows passed the check in `column`, counting only those it ran in:
    a tune that timed nothing (the interpreter) names no winner, so its take-home check is "-",
    not a failure."""
    ran = [r.get(column, "-") for r in tuned if r.get(column, "-") != "-"]
    if not ran:
        return "not run"
    skipped = len(tuned) - len(ran)
    return (f"passed in {sum(v == 'ok' or v.startswith('ok,') for v in ran)} of {len(ran)}"
            + (f" (not run in {skipped})" if skipped else ""))


def rerun_summary(tuned):
    """The geometric mean of the re-runs' speedups: best_variant.py against the file's launch."""
    pairs = [(r["rerun_file_ms"], r["rerun_winner_ms"]) for r in tuned if "rerun_file_ms" in r]
    if not pairs:
        return ""
    geomean = math.exp(sum(math.log(a / b) for a, b in pairs) / len(pairs))
    return (f"; re-run from best_variant.py in a fresh process against the file's own launch: "
            f"geomean {geomean:.3f}x over {len(pairs)}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tforge, out = map(os.path.abspath, sys.argv[1:3])
    entries = subprocess.run([sys.executable, DRIVE, "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    names = sys.argv[3:] or entries
    unknown = [n for n in names if n not in entries]
    if unknown:
        sys.exit(f"unknown entries {unknown}; drive.py --list names them")
    os.makedirs(out, exist_ok=True)
    rows = []
    for name in names:  # the table is rewritten after every entry: a call cut short keeps its rows
        rows += entry_rows(tforge, out, name)
        text = (f"# Suite (BUDGET={BUDGET or 'default'} TIME={TIME or 'none'} SEED={SEED} "
                f"BACKEND={BACKEND or 'auto'})\n\n"
                f"{table(rows)}\n\n{summary(rows)}\n")
        with open(os.path.join(out, "suite.md"), "w") as f:
            f.write(text)
    print("\n" + text)


if __name__ == "__main__":
    main()
