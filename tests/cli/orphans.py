"""Workers die with the engine, whatever kills it. A real `tforge tune` (interpreter backend) is
killed while its worker spins in the user's launcher (tests/fixtures/tasks/spinning): by SIGKILL
and by SIGTERM (SIGINT and SIGHUP take the same path: tests/engine/worker_death.c kills an engine
with each of the four). A second later no process of that run may be left: not a
`tforge __worker`, nor the child process the launcher started. The run's processes are found by
a marker in their environment (ORPHAN_TEST_RUN), so no other process on the machine is touched.
SIGTERM must end the engine by that signal (the README's exit status for an interrupted run) and
leave the run resumable: `--resume` finishes it with what was committed before.
usage: orphans.py TFORGE SOURCE_DIR"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

tforge, src = sys.argv[1], sys.argv[2]
task = os.path.join(src, "tests/fixtures/tasks/spinning/task.json")
options = ["--backend", "interpret", "--strategy", "exhaustive", "--budget", "4", "--transforms",
           "none", "--timeout", "600", "-q"]
failures = []


def processes_of(run):
    """{pid: command line} of the live (not zombie) processes whose environment carries `run`."""
    found = {}
    marker = f"ORPHAN_TEST_RUN={run}".encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found[int(pid)] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stored(db):
    try:
        return sqlite3.connect(db).execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
    except sqlite3.Error:
        return 0


def default_signals():
    # a background job's SIGINT or nohup's SIGHUP may be ignored where this runs: not the engine's
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


class Run:
    """A tune of the spinning task, its processes marked in their environment with its name."""

    def __init__(self, work, sig):
        self.sig, self.name = sig, signal.Signals(sig).name
        self.out, spin_dir = os.path.join(work, self.name), os.path.join(work, self.name + "-spin")
        os.mkdir(spin_dir)
        self.note = os.path.join(spin_dir, "spinning")
        self.marker = f"{os.getpid()}-{self.name}"
        self.log = os.path.join(work, self.name + ".txt")
        env = dict(os.environ, SPIN_DIR=spin_dir, ORPHAN_TEST_RUN=self.marker)
        with open(self.log, "w") as log:
            self.engine = subprocess.Popen([tforge, "tune", task, *options, "--out", self.out],
                                           env=env, stdout=log, stderr=subprocess.STDOUT,
                                           preexec_fn=default_signals)

    def ready(self):
        return os.path.exists(self.note) or self.engine.poll() is not None

    def kill(self):
        """Kills the engine with its signal while its worker spins; True when nothing of the run
        is left a second after the engine has ended."""
        if self.engine.poll() is not None or not os.path.exists(self.note):
            self.engine.kill()
            self.engine.wait()
            with open(self.log) as log:
                failures.append(f"{self.name}: the worker never reached the spinning launcher"
                                f" (engine status {self.engine.returncode}):\n{log.read()}")
            return False
        worker, child = map(int, open(self.note).read().split())
        before = processes_of(self.marker)
        if worker not in before or child not in before:
            failures.append(f"{self.name}: the marker finds neither the spinning worker {worker}"
                            f" nor its child {child} among {before}")
        self.engine.send_signal(self.sig)
        self.engine.wait(timeout=60)
        if wait_for(lambda: not processes_of(self.marker), 1.0):
            return True
        left = processes_of(self.marker)
        failures.append(f"{self.name}: left a second after the engine ended: {left}"
                        f" (of {before})")
        for pid in left:  # not left spinning on the test machine
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return False


with tempfile.TemporaryDirectory() as work:
    # Both at once (a worker's start is most of the time), each killed as soon as it spins.
    runs = [Run(work, signal.SIGKILL), Run(work, signal.SIGTERM)]
    wait_for(lambda: any(r.ready() for r in runs), 120)
    survived = {}
    for r in sorted(runs, key=lambda r: not r.ready()):
        wait_for(r.ready, 120)
        survived[r.name] = r.kill()
    term = runs[1]
    if survived["SIGTERM"]:
        # the README: an interrupted run ends by its signal, a shell's 128 + N
        if term.engine.returncode != -signal.SIGTERM:
            failures.append(f"SIGTERM: the engine's status {term.engine.returncode}, expected"
                            f" killed by SIGTERM (a shell's 143)")
        committed = stored(os.path.join(term.out, "tforge.db"))
        if committed < 1:
            failures.append("SIGTERM: nothing committed before the spinning candidate")
        resumed = subprocess.run([tforge, "tune", task, *options, "--out", term.out, "--resume"],
                                 capture_output=True, text=True, timeout=300)
        result = os.path.join(term.out, "result.json")
        if resumed.returncode != 0 or not os.path.exists(result):
            failures.append(f"SIGTERM: --resume exited {resumed.returncode}:\n"
                            + resumed.stdout + resumed.stderr)
        else:
            with open(result) as f:
                r = json.load(f)
            total = stored(os.path.join(term.out, "tforge.db"))
            if not (len(r["history"]) == total >= committed + 1
                    and all(h["status"] == "ok" for h in r["history"])):
                failures.append(f"SIGTERM: resumed from {committed} committed, now {total}:"
                                f" {r['history']}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failed" if failures else
      "SIGKILL, SIGTERM: nothing of the run outlived the engine; the SIGTERM run resumed")
sys.exit(1 if failures else 0)
