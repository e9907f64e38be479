"""Capture in the user's own environment: scripts written for the GPU alone on a CPU machine,
launchers in another folder (a package) than their kernels, the interpreter's gaps met in the
user's own script, and the report of what capture inferred and why."""

import json
import os
import shutil
import subprocess
import sys

import torch
import triton
import triton.testing

from conftest import FIXTURES, ROOT
from tforge_worker import capture

REALISTIC = os.path.join(FIXTURES, "realistic")
WORKER = os.path.join(ROOT, "engine", "worker", "python")


def test_a_script_written_for_the_gpu_alone_captures_without_one(tmp_path):
    # device queries at import, an autotuner benchmarking six configs, tensors made on "cuda",
    # torch.cuda.synchronize() and triton.testing.do_bench in the demo
    do_bench = triton.testing.do_bench
    got = capture.init(os.path.join(REALISTIC, "l2norm_gpu_only.py"), str(tmp_path))
    assert got["error"] is None, got["error"]
    (t,) = got["tasks"]
    assert t["launch"] == "call l2norm_gpu_only:l2norm"
    assert t["check"] == "ok", t.get("check_message")
    # the check ran the wrapper, which allocates its side output on "cuda", under the stand-in
    assert len(json.load(open(t["task"]))["launch"]["returns"]) == 2
    # the stand-in benchmark finds every config equally fast: the autotuner keeps its first
    assert t["baseline"]["BLOCK_N"] == 256 and t["baseline"]["num_warps"] == 4
    assert {"BLOCK_N", "num_warps"} <= set(t["space"]["params"])
    # and all of it is put back once the script is done
    assert triton.testing.do_bench is do_bench
    if not torch.cuda.is_available():
        try:
            torch.empty(1, device="cuda")
        except (RuntimeError, AssertionError):
            pass
        else:
            raise AssertionError("a cuda tensor outside the capture")


def _project(tmp_path):
    """A project with its package and a benchmark script in a folder of its own."""
    # a capture runs in a fresh process; here an earlier test's copy may still be imported
    for name in [m for m in sys.modules if m == "normpkg" or m.startswith("normpkg.")]:
        del sys.modules[name]
    proj = tmp_path / "proj"
    shutil.copytree(os.path.join(REALISTIC, "normpkg"), proj / "normpkg",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (proj / "benchmarks").mkdir()
    (proj / "benchmarks" / "bench_rmsnorm.py").write_text(
        "import os\nimport sys\n\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))\n\n"
        "import torch\n\nfrom normpkg.ops.norm import rmsnorm\n\n"
        "x = torch.randn(64, 192)\nw = torch.randn(192)\n"
        "y = rmsnorm(x, w)\n"
        "ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w\n"
        "torch.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)\n")
    return proj


def test_a_launcher_in_a_package_is_found_wherever_the_task_is_checked(tmp_path):
    proj = _project(tmp_path)
    got = capture.capture(["python", "benchmarks/bench_rmsnorm.py"], "tasks", cwd=str(proj),
                          check=False)
    assert got["error"] is None, got["error"]
    (t,) = got["tasks"]
    assert t["launch"] == "call normpkg.ops.norm:rmsnorm"
    doc = json.load(open(t["task"]))
    assert doc["python_path"] == [os.path.join("..", "..")]
    # moved elsewhere with its files, checked from another folder with no path set by hand
    moved = tmp_path / "elsewhere" / "copy"
    shutil.move(str(proj), str(moved))
    task = moved / os.path.relpath(t["task"], proj)
    env = {k: v for k, v in os.environ.items() if k not in ("TFORGE_PYTHONPATH", "PYTHONPATH")}
    env.update(PYTHONPATH=WORKER, TRITON_INTERPRET="1")
    out = subprocess.run(
        [sys.executable, "-c", "import json, sys\nfrom tforge_worker.worker import check_task\n"
         "print(json.dumps(check_task(sys.argv[1])))", str(task)],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result


def test_python_path_must_name_folders(tmp_path):
    from tforge_worker.task import TaskError, validate
    from conftest import ADD_TASK
    shutil.copy(os.path.join(FIXTURES, "planted.py"), tmp_path / "planted.py")
    doc = dict(ADD_TASK, python_path=["missing", 3])
    try:
        validate(doc, str(tmp_path / "task.json"))
    except TaskError as e:
        text = str(e)
    else:
        raise AssertionError("accepted")
    assert "python_path[0]: expected an existing folder" in text
    assert "python_path[1]: expected a folder, relative to the task file, got 3" in text


def _line_of(path, text):
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_an_alias_of_a_tl_function_is_an_interpreter_gap_at_the_users_line(tmp_path):
    path = os.path.join(REALISTIC, "gelu_tl_alias.py")
    got = capture.init(path, str(tmp_path))
    assert got["error_kind"] == "interpreter_gap"
    assert "alias of a triton.language function (fma = triton.language.math.fma)" in got["gap"]
    assert "write tl.fma" in got["gap"]
    assert got["error_at"] == f"{path}:{_line_of(path, 'inner = SQRT_2_OVER_PI * fma(')}"


def test_a_script_rejecting_bfloat16_results_names_the_interpreters_arithmetic(tmp_path):
    path = os.path.join(REALISTIC, "residual_add_bf16.py")
    got = capture.init(path, str(tmp_path))
    assert got["error_kind"] == "interpreter_gap"
    assert got["gap"].startswith("bfloat16 arithmetic")
    assert "residual_add_kernel (x_ptr, residual_ptr)" in got["gap"]
    assert got["error_at"] == f"{path}:{_line_of(path, 'torch.testing.assert_close(residual')}"
    (t,) = got["tasks"]  # what was captured before the failure is still written
    assert t["launch"] == "call residual_add_bf16:residual_add_"


def test_an_ordinary_failure_is_not_called_a_gap(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import torch\n\nraise ValueError('no data here')\n")
    got = capture.capture(["python", str(script)], "tasks", cwd=str(tmp_path))
    assert got["error_kind"] == "script" and "gap" not in got
    assert "ValueError: no data here" in got["error"]


def test_a_bfloat16_script_failing_for_its_own_reasons_is_not_called_a_gap(tmp_path):
    script = tmp_path / "fails_later.py"
    script.write_text(
        "import sys\n\nimport torch\n\n"
        f"sys.path.insert(0, {REALISTIC!r})\n"
        "from residual_add_bf16 import residual_add_\n\n"
        "x = torch.randn(256, dtype=torch.bfloat16)\n"
        "residual_add_(x, torch.randn(256, dtype=torch.bfloat16))\n"
        "open('/nonexistent/weights.bin')\n")
    got = capture.capture(["python", str(script)], "tasks", cwd=str(tmp_path), check=False)
    assert got["error_kind"] == "script" and "FileNotFoundError" in got["error"]
    assert len(got["tasks"]) == 1


def _by_what(explain, prefix):
    return [e for e in explain if e["what"].startswith(prefix)]


def test_the_report_says_what_was_inferred_and_where(tmp_path):
    path = os.path.join(REALISTIC, "rms_norm_liger.py")
    got = capture.init(path, str(tmp_path), check=False)
    (t,) = got["tasks"]
    explain = t["explain"]
    assert all(set(e) == {"what", "why", "line"} for e in explain)
    (launcher,) = _by_what(explain, "launcher ")
    assert launcher["what"] == "launcher rms_norm_forward"
    assert launcher["line"] == f"{path}:{_line_of(path, 'def rms_norm_forward(')}"
    assert "at " + f"{path}:{_line_of(path, '_rms_norm_forward_kernel[')}" in launcher["why"]
    (grid,) = _by_what(explain, "grid")
    assert "(15,)" in grid["what"]
    (block,) = _by_what(explain, "tuned BLOCK_SIZE")
    assert block["line"] == f"{path}:{_line_of(path, 'BLOCK_SIZE: tl.constexpr')}"
    assert "launched with 512" in block["why"]
    (check,) = _by_what(explain, "check shape ")
    assert "n_cols 300 -> 180" in check["why"]


def test_the_report_says_why_a_kernel_is_launched_directly(tmp_path):
    path = os.path.join(REALISTIC, "glu_act.py")
    got = capture.init(path, str(tmp_path), check=False)
    for t in got["tasks"]:
        (direct,) = _by_what(t["explain"], "kernel launched directly")
        assert "_launch takes arguments that are neither tensors nor plain values: kernel " \
            "(a Triton kernel)" in direct["why"]
        (grid,) = _by_what(t["explain"], "grid (")
        assert grid["what"] == f"grid {json.load(open(t['task']))['launch']['grid']}"


def test_the_report_says_where_a_launcher_in_a_package_is_imported_from(tmp_path):
    proj = _project(tmp_path)
    got = capture.capture(["python", "benchmarks/bench_rmsnorm.py"], "tasks", cwd=str(proj),
                          check=False)
    (t,) = got["tasks"]
    (item,) = _by_what(t["explain"], "python_path ")
    assert f"imported as normpkg.ops.norm from {proj}" in item["why"]
