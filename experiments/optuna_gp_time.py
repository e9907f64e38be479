#!/usr/bin/env python3
"""Optuna GPSampler's time per trial on the proposer benchmark's problem, to set beside
`tforge-bench-proposer` (N = 102,400 valid points, d = 8, n observations told first).

The space and objective follow experiments/bench_proposer.c: integer parameters with levels
5, 5, 4, 4, 4, 4, 4, 4 (102,400 points), a smooth objective over the levels scaled to [0, 1].
n completed trials at random points are added to the study first (no sampler time), then
`--trials` trials are asked and told one by one, each timed whole (the sampler's GP fit and
its acquisition search happen in ask). Prints the median and range.

    experiments/.venv-peers/bin/python experiments/optuna_gp_time.py [--n 200] [--trials 5]
"""
import argparse
import math
import random
import statistics
import time

import optuna

LEVELS = [5, 5, 4, 4, 4, 4, 4, 4]


def objective_of(levels):
    x = [v / (n - 1) for v, n in zip(levels, LEVELS)]
    return (1.0 + sum((1 + d % 4) * (e - 0.2 - 0.3 * (d % 3)) ** 2 for d, e in enumerate(x)) +
            0.1 * math.sin(3.0 * sum(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200, help="observations told before timing")
    ap.add_argument("--trials", type=int, default=5, help="trials timed")
    a = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = [f"p{d}" for d in range(len(LEVELS))]
    dists = {n: optuna.distributions.IntDistribution(0, L - 1) for n, L in zip(names, LEVELS)}
    study = optuna.create_study(sampler=optuna.samplers.GPSampler(seed=1))
    rng = random.Random(99)
    for _ in range(a.n):
        params = {n: rng.randrange(L) for n, L in zip(names, LEVELS)}
        study.add_trial(optuna.trial.create_trial(
            params=params, distributions=dists, value=objective_of(list(params.values()))))
    times = []
    for _ in range(a.trials):
        t0 = time.perf_counter()
        trial = study.ask()
        levels = [trial.suggest_int(n, 0, L - 1) for n, L in zip(names, LEVELS)]
        study.tell(trial, objective_of(levels))
        times.append(time.perf_counter() - t0)
    print(f"Optuna {optuna.__version__} GPSampler, N = 102400, d = 8, n = {a.n}: "
          f"{1e3 * statistics.median(times):.0f} ms a trial (median of {a.trials}; "
          f"{1e3 * min(times):.0f}-{1e3 * max(times):.0f})")


if __name__ == "__main__":
    main()
