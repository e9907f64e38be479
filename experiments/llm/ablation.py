"""The ablation the paper reports: each task tuned twice with the same seed, budget, strategy
and backend, once with the rules alone (no --llm) and once with the rules plus a model (`--llm
openai` at the user's endpoint), then a table per task: best time and speedup of each run, the
model's proposals made, verified (their first evaluation checked correct) and won, what asking
cost. Usage: ablation.py TFORGE OUT TASK.json [TASK.json...]

The model, from the environment: ENDPOINT (required: the server's base URL, the part before
/chat/completions), MODEL (the model asked for; unset: the server's one), KEY_ENV (the *name* of
the variable holding the API key; unset: none sent), LLM_OPTIONS (more `K=V` options of the
openai plugin, space-separated, such as "max_tokens=1024 timeout=600"). The runs: BACKEND
(unset: tune's auto), STRATEGY (bo: the model is asked by bo and forge), BUDGET (50), SEED (1),
LLM_BUDGET (3), PATIENCE (unset: tune's default; the model is asked when the incumbent stalls),
TUNE_TIMEOUT (3600 s for each tune). Writes OUT/NAME/rules/ and OUT/NAME/model/ (each a results
folder), OUT/ablation.md (the tables, also printed) and OUT/ablation.json. A tune that fails is
a row with its reason; the exit status is 1 when any did.
"""
import json
import os
import subprocess
import sys

ENDPOINT, MODEL, KEY_ENV = (os.environ.get(k) for k in ("ENDPOINT", "MODEL", "KEY_ENV"))
LLM_OPTIONS = os.environ.get("LLM_OPTIONS", "").split()
BACKEND, STRATEGY = os.environ.get("BACKEND"), os.environ.get("STRATEGY", "bo")
BUDGET, SEED = os.environ.get("BUDGET", "50"), os.environ.get("SEED", "1")
LLM_BUDGET, PATIENCE = os.environ.get("LLM_BUDGET", "3"), os.environ.get("PATIENCE")
TUNE_TIMEOUT = float(os.environ.get("TUNE_TIMEOUT", "3600"))
ARMS = (("rules", "rules"), ("model", "rules + model"))


def task_names(paths):
    """Each task's folder name (kernels/softmax/task.json: softmax), its file stem where two
    share a folder name."""
    names = [os.path.basename(os.path.dirname(os.path.abspath(p))) for p in paths]
    return [n if names.count(n) == 1 else
            f"{n}-{os.path.splitext(os.path.basename(p))[0]}" for n, p in zip(names, paths)]


def tune_argv(tforge, task, out, arm):
    argv = [tforge, "tune", task, "--strategy", STRATEGY, "--budget", BUDGET, "--seed", SEED,
            "--out", out, "-q"]
    if BACKEND:
        argv += ["--backend", BACKEND]
    if PATIENCE:
        argv += ["--patience", PATIENCE]
    if arm == "model":
        argv += ["--llm", "openai", "--llm-budget", LLM_BUDGET,
                 "--llm-option", f"endpoint={ENDPOINT}"]
        options = ([f"model={MODEL}"] if MODEL else []) + \
                  ([f"key_env={KEY_ENV}"] if KEY_ENV else []) + LLM_OPTIONS
        for o in options:
            argv += ["--llm-option", o]
    return argv


def failure(text):
    """The engine's first error line (`tforge ...:`), else the last line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("tforge")),
                lines[-1] if lines else "no message")[:200]


def run_arm(tforge, task, out, arm):
    """The numbers of one tune: a dict; "failed" holds the reason where it did not finish."""
    try:
        p = subprocess.run(tune_argv(tforge, task, out, arm), capture_output=True, text=True,
                           timeout=TUNE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"failed": f"tune took over {TUNE_TIMEOUT:.0f} s"}
    if p.returncode != 0:
        return {"failed": f"exit {p.returncode}: {failure(p.stderr + p.stdout)}"}
    r = json.load(open(os.path.join(out, "result.json")))
    row = {"evaluations": r["evaluations"], "seconds": r["seconds"], "timed": r["timed"],
           "best_ms": r["best"].get("ms"), "speedup": r.get("speedup")}
    llm = r.get("llm")
    if llm:
        proposals = llm["proposals"]
        row.update(
            model=llm["model"], requests=llm["requests"], prompt_tokens=llm["prompt_tokens"],
            completion_tokens=llm["completion_tokens"], model_seconds=llm["seconds"],
            made=len(proposals),
            verified=sum(p.get("verification", {}).get("status") == "ok" for p in proposals),
            won=sum(bool(p.get("won")) for p in proposals),
            outcomes=[p.get("verification", {}).get("status", p["state"]) if p["state"] ==
                      "accepted" else f"{p['state']}: {p.get('reason', '')}"
                      for p in proposals])
    return row


def cell(value, form="{}"):
    return "-" if value is None else form.format(value)


def table(name, task, rows):
    lines = [f"### {name} (`{task}`)", "",
             "| run | best ms | speedup | evaluations | proposals made | verified | won "
             "| model requests | tokens (prompt + completion) | model s | tune s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for arm, label in ARMS:
        row = rows[arm]
        if "failed" in row:
            lines.append(f"| {label} | failed: {row['failed']} |" + " |" * 9)
            continue
        has_model = "model" in row
        tokens = (f"{row['prompt_tokens']:.0f} + {row['completion_tokens']:.0f}"
                  if has_model else None)
        lines.append(
            f"| {label} | {cell(row['best_ms'], '{:.4g}')} | {cell(row['speedup'], '{:.3g}x')} "
            f"| {row['evaluations']} | {cell(row.get('made'))} | {cell(row.get('verified'))} "
            f"| {cell(row.get('won'))} | {cell(row.get('requests'), '{:.0f}')} "
            f"| {cell(tokens)} | {cell(row.get('model_seconds'), '{:.1f}')} "
            f"| {row['seconds']:.1f} |")
        if not row["timed"]:
            notes.append(f"{label}: the backend does not time (correctness only): no best time")
        for i, outcome in enumerate(row.get("outcomes", []), 1):
            notes.append(f"model `{row['model']}`, proposal {i}: {outcome}")
    return "\n".join(lines + [""] + [f"- {n}" for n in notes] + [""])


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    if not ENDPOINT:
        sys.exit("ablation.py: ENDPOINT is not set: the model's server, such as "
                 "http://127.0.0.1:8080/v1")
    tforge, out, tasks = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    results, sections = {}, [
        f"# Rules only against rules plus a model\n\nEndpoint {ENDPOINT}, model "
        f"{MODEL or '(the server default)'}; strategy {STRATEGY}, backend {BACKEND or 'auto'}, "
        f"budget {BUDGET}, seed {SEED}, model asked at most {LLM_BUDGET} times a run.\n"]
    print(sections[0], flush=True)
    for name, task in zip(task_names(tasks), tasks):
        rows = {arm: run_arm(tforge, task, os.path.join(out, name, arm), arm) for arm, _ in ARMS}
        results[name] = {"task": task, **rows}
        sections.append(table(name, task, rows))
        print(sections[-1], flush=True)
    with open(os.path.join(out, "ablation.md"), "w") as f:
        f.write("\n".join(sections))
    with open(os.path.join(out, "ablation.json"), "w") as f:
        json.dump({"endpoint": ENDPOINT, "model": MODEL, "strategy": STRATEGY,
                   "backend": BACKEND, "budget": BUDGET, "seed": SEED,
                   "llm_budget": LLM_BUDGET, "tasks": results}, f, indent=1)
    return 1 if any("failed" in r[arm] for r in results.values() for arm, _ in ARMS) else 0


if __name__ == "__main__":
    sys.exit(main())
