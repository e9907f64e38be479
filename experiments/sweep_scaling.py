#!/usr/bin/env python3
"""The speedup of `tforge sweep` over 1, 2, 4, ... 64 ranks, simulated on our recordings.

A discrete-event simulation of the sweep's dispatcher (engine/sweep/sweep.c) with a simulated
clock: every evaluation costs the wall time its recording charged (compile + benchmark, as the
replay backend's wall_ms), on the rank it was sent to. The model follows the code: rank 0 runs
as many sessions at once as there are evaluating ranks (one a (recording, seed)); each session
proposes a batch (rank 0's proposer, serial), cuts it into one-candidate jobs that go to idle
ranks (a rank that has the job's task open first; each rank keeps two tasks open, and opening
another costs OPEN_MS), and proposes the next batch when every job is back; each result is
committed to the store by rank 0 (serial). Rank 0's costs are measured: `--measure DIR` reads
them from a sweep run alone (`tforge sweep` with the replay backend), else the defaults below
(the run of experiments/NOTES.md, "sweep scaling").

usage: sweep_scaling.py [--seeds S] [--budget B] [--batch N] [--measure DIR] RECORDING...
prints one line a rank count: the simulated hours, the speedup over one rank, the efficiency,
rank 0's busy share and the ranks' idle share.
"""
import argparse
import glob
import gzip
import heapq
import json
import math
import os
import random
import sys

PROPOSE_MS = 2.0  # rank 0: one batch proposed (bo, measured per batch)
COMMIT_MS = 2.5   # rank 0: one result received and committed to the store
OPEN_MS = 4700.0  # a rank opening a task's evaluator (a worker loads the task)
KEEP = 4          # the tasks a rank keeps open (sweep.c's CACHED_EVALUATORS)


def costs(path):
    """Each recorded configuration's wall time in ms, as the replay backend charges it."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        cache = json.load(f)["cache"]
    out = []
    for e in cache.values():
        compile_ms = e.get("compile_time")
        compile_ms = compile_ms if isinstance(compile_ms, (int, float)) else 0.0
        bench = e.get("benchmark_time")
        if not isinstance(bench, (int, float)):
            times = e.get("times") or []
            bench = sum(t for t in times if isinstance(t, (int, float)))
        out.append(compile_ms + bench)
    return out


def measured(directory):
    """Rank 0's costs from a sweep run alone: its result.json files' seconds split."""
    batches = evals = search = candidates = 0.0
    for path in glob.glob(os.path.join(directory, "*", "shape-*", "result.json")):
        r = json.load(open(path))
        s = r["seconds_split"]
        n = r["evaluations"]
        evals += n
        search += s["search"]
        candidates += s["candidates"] + s["baselines"]
        batches += max(1, math.ceil(n / max(1, r.get("batch", 1))))
    if not evals:
        sys.exit(f"{directory}: no result.json of a sweep")
    return 1e3 * search / batches, 1e3 * candidates / evals


def simulate(sessions, ranks, batch, propose_ms, commit_ms, open_ms, keep):
    """The sweep's makespan (ms) on `ranks` evaluating ranks, rank 0's busy ms, ranks' busy ms."""
    events = []  # (time, order, kind, data)
    order = [0]

    def at(t, kind, data):
        order[0] += 1
        heapq.heappush(events, (t, order[0], kind, data))

    server_free = 0.0  # rank 0's proposer and committer: one after another
    server_busy = 0.0

    def serve(t, ms):
        nonlocal server_free, server_busy
        start = max(t, server_free)
        server_free = start + ms
        server_busy += ms
        return server_free

    queue = []  # jobs: (session, cost)
    idle = list(range(ranks))
    opened = [[] for _ in range(ranks)]  # the two tasks each rank keeps open, latest last
    rank_busy = 0.0
    state = [{"left": list(s["evals"]), "pending": 0} for s in sessions]
    started = 0
    running = 0
    end = 0.0

    def propose(t, i):
        s = state[i]
        n = 1 if s.get("first", True) else batch  # the baseline is a batch of its own
        s["first"] = False
        jobs, s["left"] = s["left"][:n], s["left"][n:]
        s["pending"] = len(jobs)
        at(serve(t, propose_ms), "queue", (i, jobs))

    def start_sessions(t):
        nonlocal started, running
        while running < ranks and started < len(sessions):
            running += 1
            propose(t, started)
            started += 1

    def assign(t):
        """sweep.c's assign: an idle rank takes the first job of a task it has open, else the
        first of a task no rank has open, else the first (opening its task)."""
        nonlocal rank_busy
        for r in list(idle):
            if not queue:
                break
            anywhere = set(x for o in opened for x in o)
            pick = next((k for k, (i, _) in enumerate(queue) if sessions[i]["task"] in opened[r]),
                        None)
            if pick is None:
                pick = next((k for k, (i, _) in enumerate(queue)
                             if sessions[i]["task"] not in anywhere), 0)
            i, cost = queue.pop(pick)
            task = sessions[i]["task"]
            idle.remove(r)
            ms = cost
            if task not in opened[r]:
                ms += open_ms
                opened[r] = (opened[r] + [task])[-keep:]
            else:
                opened[r].remove(task)
                opened[r].append(task)
            rank_busy += ms
            at(t + ms, "back", (r, i))

    start_sessions(0.0)
    while events:
        t, _, kind, data = heapq.heappop(events)
        end = max(end, t)
        if kind == "queue":
            i, jobs = data
            queue.extend((i, c) for c in jobs)
        elif kind == "back":
            r, i = data
            idle.append(r)
            done = serve(t, commit_ms)
            s = state[i]
            s["pending"] -= 1
            if s["pending"] == 0:
                if s["left"]:
                    propose(done, i)
                else:
                    running -= 1
                    end = max(end, done)
                    start_sessions(done)
        assign(t)
    return end, server_busy, rank_busy


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("recordings", nargs="+")
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--budget", type=int, default=100)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--measure", help="a sweep's folder, run alone: rank 0's costs from it")
    p.add_argument("--open-ms", type=float, default=OPEN_MS)
    p.add_argument("--keep", type=int, default=KEEP, help="tasks a rank keeps open")
    a = p.parse_args()
    propose_ms, commit_ms = measured(a.measure) if a.measure else (PROPOSE_MS, COMMIT_MS)
    sessions = []
    for path in a.recordings:
        c = costs(path)
        for seed in range(a.seeds):  # the random strategy's draws: the costs do not depend on it
            rng = random.Random(seed)
            # a rank's evaluator is of one (task, settings): the seed is among the settings
            sessions.append({"task": (path, seed),
                             "evals": rng.sample(c, min(len(c), a.budget + 1))})
    n_evals = sum(len(s["evals"]) for s in sessions)
    print(f"{len(sessions)} sessions ({len(a.recordings)} recordings x {a.seeds} seeds), "
          f"{n_evals} evaluations, batch {a.batch}; rank 0: {propose_ms:.2f} ms a proposal, "
          f"{commit_ms:.2f} ms a commit; {a.open_ms:.0f} ms to open a task on a rank")
    print("ranks  hours    speedup  efficiency  rank0_busy  ranks_idle")
    one = None
    for ranks in (1, 2, 4, 8, 16, 32, 64):
        end, server, busy = simulate(sessions, ranks, a.batch, propose_ms, commit_ms, a.open_ms,
                                     a.keep)
        one = one or end
        print(f"{ranks:5d}  {end / 3.6e6:7.3f}  {one / end:7.2f}x  {one / end / ranks:9.0%}  "
              f"{server / end:10.1%}  {1 - busy / (end * ranks):10.1%}")


if __name__ == "__main__":
    main()
