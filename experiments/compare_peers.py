#!/usr/bin/env python3
"""Compare tforge's strategies with peers (Optuna TPE, Optuna GPSampler, Kernel Tuner's
bayes_opt, scikit-optimize) on recorded tuning spaces, with the same seeds, budgets and score.

Ours run through `tforge replay --json`. The peers run here against the same recorded values:
each asks for a configuration (parameters as level indices, strings as categories), a
configuration missing from the recording (invalid) or already evaluated is told back without
counting as an evaluation (our strategies never propose either), a recorded failure counts as an
evaluation without a value. A run that stops early (more than 20 x budget uncounted suggestions)
keeps its last best, as `tforge replay` does for a strategy that runs out. Every trace runs to
the same budget as ours (max(--budget, random search's 96% cut-off)) and is scored by a port of
include/tforge/score.h, checked against tforge's own score of its traces (printed).

Usage: experiments/.venv-peers/bin/python experiments/compare_peers.py [--seeds 50]
       [--budget 20] [--peers tpe,gp,kt,skopt] [--jobs J] [--out NAME] [--kept-only]
       [--peers-only] [--traces DIR] [FILES...]
Each peer's traces on a space are kept in experiments/results/peer_traces/ (or --traces): every
seed's as soon as it is done (<space>.<peer>.b<budget>.s<seeds>.json.seeds), all of them in one
file when the last is (a stopped run resumes from there, and a change to our strategies re-runs
only ours); Optuna's GPSampler, the slowest, also writes each trial to a journal beside them
(<...>.json.seed<N>.journal), so a seed stopped half-way goes on from its last trial. --jobs
runs that many seeds at once, over all spaces and peers, one thread each; --peers-only runs no
tforge (for a machine with many cores and no build). The table, with the seconds each strategy
spent per evaluation (of one seed's process), goes to experiments/results/<NAME>.md (default
peers_<budget>)."""
import argparse
import ast
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = "bo,random,annealing,genetic,coordinate,pattern"


# ---- the recorded space ----

def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        doc = json.load(f)
    params = doc["tune_params"]
    if isinstance(params, str):
        params = ast.literal_eval(params)
    names = doc.get("tune_params_keys") or list(params)
    values = {}
    for entry in doc["cache"].values():
        key = tuple(params[n].index(entry[n]) for n in names)
        t = entry.get("time")
        ok = isinstance(t, (int, float)) and math.isfinite(t) and \
            entry.get("tforge_status", "ok") == "ok"
        values[key] = float(t) if ok else None
    return doc, names, params, values


# ---- the score, ported from include/tforge/score.h ----

def random_curve(sorted_ok, n, budget):
    vm, v1 = sorted_ok[-1], sorted_ok[0]
    out = []
    for b in range(1, budget + 1):
        total, q = v1, 1.0
        for i in range(1, len(sorted_ok)):
            q *= (n - b - i + 1) / (n - i + 1)
            if q <= 0:
                break
            total += (sorted_ok[i] - sorted_ok[i - 1]) * q
            if q * (vm - sorted_ok[i]) < 1e-17 * abs(vm):
                break
        out.append(total)
    return out


def median(xs):
    s = sorted(xs)
    k = len(s)
    return s[k // 2] if k % 2 else 0.5 * (s[k // 2 - 1] + s[k // 2])


def score(traces, values, budget):
    ok = sorted(v for v in values.values() if v is not None)
    n, opt, worst, med = len(values), ok[0], ok[-1], median(ok)
    run_budget = len(traces[0])
    rand = random_curve(ok, n, run_budget)
    eps = 1e-12 * (worst - opt)
    cut = []
    for p in (0.5, 0.96):
        target = opt + (1 - p) * (med - opt)
        cut.append(next(b + 1 for b, f in enumerate(rand) if f <= target + eps))
    filled = [[worst if (x is None or math.isnan(x)) else x for x in t] for t in traces]
    mean = [sum(t[b] for t in filled) / len(filled) for b in range(run_budget)]
    s = [(mean[b] - rand[b]) / (opt - rand[b]) for b in range(run_budget)
         if cut[0] - 1 <= b <= cut[1] - 1 and abs(rand[b] - opt) > eps]
    at = [t[budget - 1] for t in filled]
    return {"score": sum(s) / len(s) if s else float("nan"),
            "p_within_5pct": sum(x <= 1.05 * opt for x in at) / len(at),
            "median_best_over_opt": median(at) / opt, "cutoffs": cut}


def run_budget_for(values, budget):
    ok = sorted(v for v in values.values() if v is not None)
    rand = random_curve(ok, len(values), len(values))
    target = ok[0] + 0.04 * (median(ok) - ok[0])
    end = next(b + 1 for b, f in enumerate(rand) if f <= target + 1e-12 * (ok[-1] - ok[0]))
    return max(budget, end)


# ---- the peers ----

class Run:
    """Counts evaluations of one peer's run and keeps its best-so-far trace."""

    def __init__(self, values, budget):
        self.values, self.budget = values, budget
        self.seen, self.trace, self.best, self.asked = {}, [], float("nan"), 0

    def done(self):
        return len(self.trace) >= self.budget or self.asked > 20 * self.budget + 100

    def evaluate(self, key):
        """(counted, value): value None for an invalid or failed configuration."""
        self.asked += 1
        if key not in self.values:
            return False, None
        if key in self.seen:
            return False, self.seen[key]
        v = self.values[key]
        self.seen[key] = v
        if v is not None and not v >= self.best:
            self.best = v
        self.trace.append(self.best)
        return True, v

    def result(self):
        last = self.trace[-1] if self.trace else float("nan")
        return self.trace + [last] * (self.budget - len(self.trace))


def run_optuna(kind, names, params, values, budget, seed, journal=None):
    """The trace and the seconds spent. With `journal` (a file), every trial is written there as
    it is told and a run that was stopped goes on from it: its trials are counted again in
    order, and the sampler continues from them (its random state starts afresh; a trial stopped
    half-suggested is told as failed)."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    state = optuna.trial.TrialState
    sampler = optuna.samplers.TPESampler(seed=seed) if kind == "tpe" else \
        optuna.samplers.GPSampler(seed=seed)
    storage = None
    if journal:
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend
        storage = JournalStorage(JournalFileBackend(journal))
    study = optuna.create_study(sampler=sampler, storage=storage, study_name="run",
                                load_if_exists=True)
    t0, before = time.time(), study.user_attrs.get("seconds", 0.0)
    run = Run(values, budget)
    numeric = {n: all(isinstance(v, (int, float)) for v in params[n]) for n in names}

    def key_of(p):
        return tuple(p[n] if numeric[n] else params[n].index(p[n]) for n in names)

    def evaluate(trial, key):
        _, v = run.evaluate(key)
        if v is None:
            study.tell(trial, state=state.FAIL)
        else:
            study.tell(trial, math.log(v))
        if journal:
            study.set_user_attr("seconds", before + time.time() - t0)

    for t in study.get_trials(deepcopy=False):  # a run taken up again
        if t.state in (state.COMPLETE, state.FAIL):
            run.evaluate(key_of(t.params))
        elif len(t.params) == len(names):
            evaluate(t.number, key_of(t.params))
        else:
            study.tell(t.number, state=state.FAIL)
    while not run.done():
        trial = study.ask()
        evaluate(trial, tuple(trial.suggest_int(n, 0, len(params[n]) - 1) if numeric[n] else
                              params[n].index(trial.suggest_categorical(n, params[n]))
                              for n in names))
    return run.result(), before + time.time() - t0


def run_skopt(names, params, values, budget, seed):
    import skopt
    free = [i for i, n in enumerate(names) if len(params[n]) > 1]  # skopt refuses a single level
    space = [skopt.space.Integer(0, len(params[names[i]]) - 1, name=names[i]) for i in free]
    opt = skopt.Optimizer(space, base_estimator="GP", random_state=seed, n_initial_points=10)
    run = Run(values, budget)
    worst = math.log(max(v for v in values.values() if v is not None))
    while not run.done():
        x = opt.ask()
        key = [0] * len(names)
        for i, level in zip(free, x):
            key[i] = int(level)
        _, v = run.evaluate(tuple(key))
        opt.tell(x, worst if v is None else math.log(v))  # skopt has no failed state
    return run.result()


def run_kt(path, doc, names, params, values, budget, seed):
    import random
    import numpy as np
    import kernel_tuner
    np.random.seed(seed)
    random.seed(seed)  # bayes_opt draws from both
    valid = {tuple(params[n][i] for n, i in zip(names, k)) for k in values}

    def recorded(p):  # in a list, Kernel Tuner passes each restriction a dict
        return tuple(p[n] for n in names) in valid
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        cache = f.name
    try:
        results, _ = kernel_tuner.tune_kernel(
            doc["kernel_name"], "__global__ void k() {}", doc.get("problem_size", [1]), [],
            params, restrictions=[recorded],
            simulation_mode=True, cache=cache, strategy="bayes_opt",
            strategy_options={"max_fevals": budget}, verbose=False, quiet=True)
    finally:
        os.unlink(cache)
    run = Run(values, budget)
    for r in results:
        run.evaluate(tuple(params[n].index(r[n]) for n in names))
    return run.result()


class NotKept(Exception):
    """--kept-only, and a peer's traces on a space were never kept."""


def run_peer(peer, path, budget, seed, journal):
    """One seed's trace and seconds (in a worker process with --jobs)."""
    doc, names, params, values = load(path)
    t0 = time.time()
    if peer in ("tpe", "gp"):
        return run_optuna(peer, names, params, values, budget, seed, journal)
    if peer == "skopt":
        trace = run_skopt(names, params, values, budget, seed)
    elif peer == "kt":
        trace = run_kt(path, doc, names, params, values, budget, seed)
    else:
        raise ValueError(f"unknown peer {peer!r} (known: tpe, gp, kt, skopt)")
    return trace, time.time() - t0


def run_peer_job(job):
    try:
        return job, run_peer(*job), None
    except Exception as e:  # reported with the job, not lost in the pool
        return job, None, f"{type(e).__name__}: {str(e)[:80]}"


class Kept:
    """One peer's traces on one space: the finished file, or the seeds done so far."""

    def __init__(self, traces_dir, peer, path, budget, seeds):
        space = os.path.basename(path).split(".")[0]
        self.peer, self.path, self.budget, self.seeds = peer, path, budget, seeds
        self.file = os.path.join(traces_dir, f"{space}.{peer}.b{budget}.s{seeds}.json")
        self.space, self.done = space, {}
        if os.path.exists(self.file):
            with open(self.file) as f:
                doc = json.load(f)
            # the seconds of a finished file are shared out evenly; only their sum is read
            for seed, trace in enumerate(doc["traces"], 1):
                self.done[seed] = (trace, doc["seconds"] / seeds)
        elif os.path.exists(self.file + ".seeds"):
            with open(self.file + ".seeds") as f:
                for line in f:
                    if line.strip():
                        r = json.loads(line)
                        self.done[r["seed"]] = (r["trace"], r["seconds"])

    def missing(self):
        return [s for s in range(1, self.seeds + 1) if s not in self.done]

    def journal(self, seed):
        """Optuna's GPSampler (up to 3.5 s a suggestion) writes its trials as it goes."""
        return f"{self.file}.seed{seed}.journal" if self.peer == "gp" else None

    def add(self, seed, trace, seconds):
        self.done[seed] = (trace, seconds)
        if self.journal(seed) and os.path.exists(self.journal(seed)):
            os.unlink(self.journal(seed))
        with open(self.file + ".seeds", "a") as f:
            f.write(json.dumps({"seed": seed, "seconds": seconds, "trace": trace}) + "\n")
        if not self.missing():
            traces, seconds = self.result()
            with open(self.file + ".part", "w") as f:
                json.dump({"space": self.space, "peer": self.peer, "run_budget": self.budget,
                           "seeds": self.seeds, "seconds": seconds, "traces": traces}, f)
            os.replace(self.file + ".part", self.file)
            os.unlink(self.file + ".seeds")

    def result(self):
        if self.missing():
            raise NotKept()
        return ([self.done[s][0] for s in range(1, self.seeds + 1)],
                sum(self.done[s][1] for s in range(1, self.seeds + 1)))


def run_missing(kept, jobs):
    """Runs every missing seed of every kept set, `jobs` at a time; returns {kept: error}."""
    todo = [(k.peer, k.path, k.budget, seed, k.journal(seed)) for k in kept
            for seed in k.missing()]
    for k in kept:
        os.makedirs(os.path.dirname(k.file), exist_ok=True)
    by_job = {(k.peer, k.path, k.budget): k for k in kept}
    errors = {}
    if jobs > 1:
        import multiprocessing
        pool = multiprocessing.get_context("spawn").Pool(jobs, maxtasksperchild=1)
        results = pool.imap_unordered(run_peer_job, todo)
    else:
        pool, results = None, map(run_peer_job, todo)
    for (peer, path, budget, seed, _), done, error in results:
        k = by_job[(peer, path, budget)]
        if error:
            errors[k] = error
            print(f"{k.space} {peer} seed {seed}: {error}", file=sys.stderr)
        else:
            k.add(seed, *done)
            print(f"{k.space} {peer} seed {seed}: {done[1]:.1f} s", file=sys.stderr, flush=True)
    if pool:
        pool.close()
        pool.join()
    return errors


# ---- ours ----

def run_ours(path, budget, seeds):
    out = subprocess.run([os.path.join(ROOT, "build/bin/tforge"), "replay", "--cache", path,
                          "--strategy", OURS, "--budget", str(budget), "--seeds", str(seeds),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--peers", default="tpe,gp,kt,skopt")
    ap.add_argument("--jobs", type=int, default=1, help="seeds run at once (processes)")
    ap.add_argument("--out", help="the table's name under experiments/results (no .md)")
    ap.add_argument("--kept-only", action="store_true",
                    help="peers only from kept traces (others: 'not run'); ours are run")
    ap.add_argument("--peers-only", action="store_true", help="run no tforge strategy")
    ap.add_argument("--traces", default=os.path.join(ROOT, "experiments/results/peer_traces"),
                    help="where the peers' traces are kept")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # one thread a seed; --jobs gives the parallelism
    files = a.files or sorted(
        [os.path.join(ROOT, "data/h200", f)
         for f in os.listdir(os.path.join(ROOT, "data/h200"))] +
        [os.path.join(ROOT, "../shared/data/ktcache", f)
         for f in os.listdir(os.path.join(ROOT, "../shared/data/ktcache"))
         if f.endswith(".json.gz")])
    peers = [p for p in a.peers.split(",") if p]
    spaces = [(path,) + load(path) for path in files]
    kept = {(path, p): Kept(a.traces, p, path, run_budget_for(values, a.budget), a.seeds)
            for path, _, _, _, values in spaces for p in peers}
    errors = {} if a.kept_only else run_missing(list(kept.values()), a.jobs)
    rows = []
    for path, doc, names, params, values in spaces:
        budget_run = run_budget_for(values, a.budget)
        table = {}
        if not a.peers_only:
            ours = run_ours(path, a.budget, a.seeds)
            assert ours["run_budget"] == budget_run, (ours["run_budget"], budget_run)
            for s in ours["strategies"]:
                mine = score([[float("nan") if x is None else x for x in t]
                              for t in s["traces"]], values, a.budget)
                print(f"{os.path.basename(path)} {s['strategy']}: tforge {s['score']:.4f}, "
                      f"port {mine['score']:.4f}", file=sys.stderr)
                table[s["strategy"]] = (s["score"], s["p_within_5pct"],
                                        s["median_best_over_opt"], s["seconds"])
        for p in peers:
            k = kept[(path, p)]
            if k in errors:  # a peer that cannot run is reported, not hidden
                table["peer:" + p] = (float("nan"),) * 3 + (f"failed: {errors[k]}",)
                continue
            try:
                traces, seconds = k.result()
                r = score(traces, values, a.budget)
                table["peer:" + p] = (r["score"], r["p_within_5pct"], r["median_best_over_opt"],
                                      seconds)
            except NotKept:
                table["peer:" + p] = (float("nan"),) * 3 + (
                    f"not run ({a.seeds - len(k.missing())} of {a.seeds} seeds)",)
            print(f"{os.path.basename(path)} {p}: {table['peer:' + p]}", file=sys.stderr)
        rows.append((os.path.basename(path), len(values), budget_run, a.seeds, table))
    os.makedirs(os.path.join(ROOT, "experiments/results"), exist_ok=True)
    out = os.path.join(ROOT, f"experiments/results/{a.out or f'peers_{a.budget}'}.md")
    with open(out, "w") as f:
        f.write(f"# Strategies and peers: score (p within 5% / median best/opt at {a.budget}; "
                "milliseconds per evaluation)\n\n"
                f"Seeds 1..{a.seeds}; each run to max({a.budget}, random search's 96% cut-off); "
                "methodology score as in include/tforge/score.h, the best of a row in bold. "
                "Written by experiments/compare_peers.py.\n\n")
        names = list(rows[0][4])
        f.write("| space | N | run budget | " + " | ".join(names) + " |\n")
        f.write("|---|---:|---:|" + "---:|" * len(names) + "\n")
        for name, n, b, seeds, table in rows:
            best = max((v[0] for v in table.values() if not isinstance(v[3], str)),
                       default=float("nan"))
            cells = []
            for k in names:
                sc, p5, med, sec = table.get(k, (float("nan"),) * 4)
                if isinstance(sec, str):
                    cells.append(sec)
                    continue
                text = f"{sc:.3f}"
                cells.append(f"{'**' + text + '**' if sc == best else text} ({p5:.2f} / "
                             f"{med:.3f}; {1e3 * sec / (seeds * b):.1f})")
            f.write(f"| {name} | {n} | {b} | " + " | ".join(cells) + " |\n")
    print(out)


if __name__ == "__main__":
    main()
