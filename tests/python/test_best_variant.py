"""The take-home files run as the user runs them (tforge_worker.takehome): best_variant.py with
the launch hook `launch_hook` gives it, imported in a fresh python and launched through the
file's own entry point on Triton's ordinary launch path; `verify` doing the same in a fresh
worker process and refusing what fails."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import EXAMPLES, FIXTURES, ROOT
from tforge_worker import takehome

WORKER = os.path.join(ROOT, "engine", "worker", "python")
VARLEN = os.path.join(ROOT, "tests", "fixtures", "tasks", "best_variant", "task.json")
CHECK = {"T": 120, "H": 2, "D": 32, "B1": 4, "L": 40}


def fresh(code, *argv):
    """`code` run by a python of its own (in the interpreter unless TRITON_INTERPRET=0 says
    the GPU); its stdout."""
    env = dict(os.environ, PYTHONPATH=WORKER)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *argv], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def take_home(folder, task, config, text=None, best=None):
    """A results folder as the tune writes it: best_variant.py (`text`, else the task's file,
    with the launch hook of `config` where launch_hook puts it) and best_config.py."""
    hook = takehome.launch_hook(task, config, text)
    if text is None:
        with open(takehome.get(task).spec["source"], encoding="utf-8") as f:
            text = f.read()
    raw = text.encode()
    with open(os.path.join(folder, "best_variant.py"), "wb") as f:
        f.write(raw[:hook["at"]] + hook["text"].encode() + raw[hook["at"]:])
    options = ("num_warps", "num_stages", "num_ctas", "maxnreg")
    best = best or "triton.Config(%r, %s)" % (
        {k: v for k, v in config.items() if k not in options},
        ", ".join(f"{k}={config[k]!r}" for k in options if k in config))
    with open(os.path.join(folder, "best_config.py"), "w") as f:
        f.write(f"import triton\n\nBEST = {best}\n")
    return hook


def verify(folder, task, config, shape):
    """takehome.verify in a fresh worker process."""
    return json.loads(fresh("""
        import json, sys
        from tforge_worker import takehome
        print(json.dumps(takehome.verify(*json.loads(sys.argv[1]))))
    """, json.dumps([str(folder), task, config, shape])).strip().splitlines()[-1])


# observes each launch below every wrapper of the file (set before it is imported)
OBSERVE = """
    import os, sys, torch, triton
    from triton.runtime.interpreter import InterpretedFunction
    seen = []
    for cls in (triton.runtime.JITFunction, InterpretedFunction):
        def observing(self, *args, _run=cls.run, **kwargs):
            seen.append((self.fn.__name__, kwargs))
            return _run(self, *args, **kwargs)
        cls.run = observing
    sys.path.insert(0, sys.argv[1])
    import best_variant
    DEV = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
"""


def test_a_function_that_hard_codes_its_options_runs_the_winners(tmp_path):
    """attention_varlen passes num_warps=4 and no maxnreg: the hook gives its launches the
    winner's, before the file's own demo, and the result is still right."""
    config = {"num_warps": 2, "maxnreg": 64}
    hook = take_home(tmp_path, VARLEN, config)
    text = (tmp_path / "best_variant.py").read_text()
    assert text.index("_fwd_varlen = _tforge_tuned_launches(") < hook["at"] + len(hook["text"])
    assert text.index("_tforge_tuned_launches(") < text.index('if __name__ == "__main__":')
    assert verify(tmp_path, VARLEN, config, CHECK) == {"status": "ok", "message": "",
                                                       "dropped": []}
    out = fresh(OBSERVE + """
    cu = torch.tensor([0, 40, 57, 90], dtype=torch.int32, device=DEV)
    q, k, v = (torch.randn(90, 2, 32, dtype=torch.float16, device=DEV) for _ in range(3))
    o = best_variant.attention_varlen(q, k, v, cu, 40)
    err = (o.float() - best_variant.reference(q, k, v, cu).float()).abs().max().item()
    print(err, [(kw["num_warps"], kw.get("maxnreg")) for n, kw in seen if n == "_fwd_varlen"])
    """, str(tmp_path))
    err, launches = out.split(" ", 1)
    assert float(err) < 2e-2 and launches.strip() == "[(2, 64)]"


def test_a_hard_coded_block_gets_the_grid_recomputed(tmp_path):
    """rows.add computes its grid from a BLOCK it hard-codes: with the winner's BLOCK the hook
    recomputes the grid from launch.grid, or most of the output would be left unwritten."""
    task = os.path.join(FIXTURES, "real_shapes", "add_task.json")
    config = {"BLOCK": 128, "num_warps": 8}
    hook = take_home(tmp_path, task, config)
    assert "_tforge_grid = _tforge_grid_of()" in hook["text"]
    assert verify(tmp_path, task, config, {"N": 3000})["status"] == "ok"
    out = fresh(OBSERVE + """
    a, b = torch.randn(3000, device=DEV), torch.randn(3000, device=DEV)
    assert torch.equal(best_variant.add(a, b), a + b)
    print([(kw["BLOCK"], kw["grid"]) for n, kw in seen if n == "_add_kernel"])
    """, str(tmp_path))
    assert out.strip() == "[(128, (24,))]"


def test_a_block_the_function_passes_positionally_takes_the_winners_in_its_slot(tmp_path):
    """fused_add_rmsnorm passes BLOCK_SIZE positionally: the hook puts the winner's there (by
    name on top, the launch would get it twice)."""
    from tforge_worker import capture
    got = capture.init(os.path.join(FIXTURES, "realistic", "fused_add_rmsnorm.py"),
                       str(tmp_path / "tasks"), kernel="_fused_add_rmsnorm_kernel", check=False)
    task = got["tasks"][0]["task"]
    config = {"BLOCK_SIZE": 512, "num_warps": 2}
    take_home(tmp_path, task, config)
    shape = got["tasks"][0]["check_shape"]
    assert verify(tmp_path, task, config, shape)["status"] == "ok"
    out = fresh(OBSERVE.replace("seen.append((self.fn.__name__, kwargs))",
                                "seen.append((self.fn.__name__, dict(kwargs, args=args)))") + """
    x, r, w = (torch.randn(*s, device=DEV) for s in ((3, 200), (3, 200), (200,)))
    best_variant.fused_add_rmsnorm(x, r, w, 1e-6)
    print([(kw["args"][6], "BLOCK_SIZE" in kw, kw["num_warps"]) for n, kw in seen
           if n == "_fused_add_rmsnorm_kernel"])
    """, str(tmp_path))
    assert out.strip() == "[(512, False, 2)]"  # in its positional slot, not given twice


def test_an_output_written_in_part_is_compared_where_the_reference_wrote(tmp_path):
    """varlen_pad leaves the padding rows of its torch.empty output unwritten: the take-home
    check compares the rows the reference wrote, as every candidate's check does."""
    from tforge_worker import capture
    got = capture.init(os.path.join(FIXTURES, "realistic", "varlen_pad.py"),
                       str(tmp_path / "tasks"), check=False)
    (t,) = got["tasks"]
    config = {k: v for k, v in t["baseline"].items() if k != "num_ctas"}
    take_home(tmp_path, t["task"], config)
    assert verify(tmp_path, t["task"], config, t["check_shape"])["status"] == "ok"


@pytest.mark.parametrize("entry, kernel", [
    ("rms_norm_module", "_rms_norm_fwd_kernel"),  # the function takes a config object
    ("pkg_fused_linear_xent", "cross_entropy_kernel"),  # an input that takes gradients
    ("l2norm_gpu_only", "l2norm_fwd_kernel")])  # the file asks for the device at import
def test_the_take_home_check_calls_the_function_as_the_task_does(tmp_path, entry, kernel):
    from tforge_worker import capture
    drive = os.path.join(ROOT, "experiments", "suite", "drive.py")
    got = capture.capture(["python", drive, entry], str(tmp_path / "tasks"), kernel=kernel,
                          check=False)
    t = got["tasks"][0]
    config = {k: v for k, v in t["baseline"].items() if k != "num_ctas"}
    take_home(tmp_path, t["task"], config)
    assert verify(tmp_path, t["task"], config, t["check_shape"])["status"] == "ok"


def test_a_decorator_that_drops_warmup_is_refused(tmp_path):
    """A launch decorator whose `run` drops Triton's keyword-only warmup passes tforge's own
    launches (through tforge_launch) but not `kernel[grid](...)`: the file fails as the user
    runs it, and verify says why."""
    task = takehome.get(VARLEN).spec
    with open(task["source"], encoding="utf-8") as f:
        source = f.read()
    decorator = textwrap.dedent("""\
        def _adapted(kernel):
            def launch(run, args, kwargs, grid):
                return run(args, kwargs, grid)

            plain = kernel.run

            def run(*args, grid, warmup=False, **kwargs):
                return plain(*args, grid=grid, **kwargs)

            kernel.run = run
            kernel.tforge_launch = launch
            return kernel


        @_adapted
        """)
    variant = source.replace("@triton.jit\ndef _fwd_varlen(", decorator + "@triton.jit\n"
                             "def _fwd_varlen(", 1)
    assert variant != source
    config = {"num_warps": 2, "maxnreg": 64}
    take_home(tmp_path, VARLEN, config, text=variant)
    verdict = verify(tmp_path, VARLEN, config, CHECK)
    assert verdict["status"] == "runtime" and "warmup" in verdict["message"], verdict


def test_a_wrapper_that_drops_an_option_is_said(tmp_path):
    """The attention example's wrapper is handed the config and passes no maxnreg: no hook (the
    tune ran it the same way), and verify names what the wrapper drops."""
    task = os.path.join(EXAMPLES, "attention", "task.json")
    config = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2, "num_stages": 1, "maxnreg": 64}
    assert take_home(tmp_path, task, config)["text"] == ""
    verdict = verify(tmp_path, task, config, {"Z": 1, "H": 2, "S": 40, "D": 16})
    assert verdict == {"status": "ok", "message": "", "dropped": ["maxnreg"]}


def test_an_autotuner_runs_the_winner_alone(tmp_path):
    """An autotuned kernel launched through the file's function: the hook leaves the autotuner
    the winner's config alone, so nothing is benchmarked and the winner runs."""
    task = os.path.join(ROOT, "tests", "transforms", "precision", "gemm_autotune.json")
    config = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 4,
              "num_warps": 2, "num_stages": 2}
    take_home(tmp_path, task, config)
    assert verify(tmp_path, task, config, {"M": 100, "K": 72, "N": 90}) == \
        {"status": "ok", "message": "", "dropped": []}
    out = fresh(OBSERVE + """
    a = torch.randn(100, 72, dtype=torch.float16, device=DEV)
    b = torch.randn(72, 90, dtype=torch.float16, device=DEV)
    best_variant.matmul(a, b)
    print([(kw["BLOCK_SIZE_M"], kw["num_warps"]) for n, kw in seen if n == "matmul_kernel"])
    """, str(tmp_path))
    assert out.strip() == "[(16, 2)]"


def test_a_best_config_that_differs_is_refused(tmp_path):
    config = {"num_warps": 2, "maxnreg": 64}
    take_home(tmp_path, VARLEN, config, best="triton.Config({}, num_warps=4, maxnreg=64)")
    verdict = verify(tmp_path, VARLEN, config, CHECK)
    assert verdict["status"] == "import" and "num_warps=4" in verdict["message"], verdict


@pytest.mark.parametrize("name", ["best_variant.py", "best_config.py"])
def test_a_file_that_does_not_import_is_refused(tmp_path, name):
    config = {"num_warps": 2, "maxnreg": 64}
    take_home(tmp_path, VARLEN, config)
    with open(tmp_path / name, "a") as f:
        f.write("\nimport a_module_nobody_has\n")
    verdict = verify(tmp_path, VARLEN, config, CHECK)
    assert verdict["status"] == "import" and "a_module_nobody_has" in verdict["message"]


def test_a_file_in_a_package_imports_as_part_of_it(tmp_path):
    """pkg/ops.py imports `.utils`: best_variant.py stands in for it inside its package, as a
    user drops it there, so its relative import resolves; the hook gives its launch the
    winner's num_warps in place of the one calculate_settings picks."""
    task = tmp_path / "task.json"
    task.write_text(json.dumps({
        "source": os.path.join(FIXTURES, "realistic", "pkg", "ops.py"),
        "kernel": "_layer_norm_fwd",
        "inputs": [{"name": "x", "shape": ["R", "C"], "dtype": "float32", "init": "randn"},
                   {"name": "w", "shape": ["C"], "dtype": "float32", "init": "randn"},
                   {"name": "b", "shape": ["C"], "dtype": "float32", "init": "randn"}],
        "outputs": [{"name": "y", "atol": 1e-4, "rtol": 1e-4}],
        "launch": {"call": "ops:layer_norm", "args": ["x", "w", "b"], "returns": ["y"]},
        "reference": "baseline",
        "shapes": {"tune": [{"R": 9, "C": 200}], "check": [{"R": 9, "C": 200}]}}))
    out = tmp_path / "out"
    out.mkdir()
    config = {"num_warps": 2}
    take_home(out, str(task), config)
    assert verify(out, str(task), config, {"R": 9, "C": 200}) == \
        {"status": "ok", "message": "", "dropped": []}


def test_the_launches_seen_keep_no_tensor_alive():
    """A file's demo that launches at import (softmax's example times a kernel on a new
    4096-wide tensor every call) must not have its tensors kept by the record of launches: on an
    H100 that filled 71 GiB and every winner's verify failed out of memory. The record keeps the
    launch's other arguments, which the dropped-keys check reads."""
    import gc
    import weakref

    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def double(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    launches = []
    with takehome._observed(launches):
        x = torch.ones(8)
        double[(1,)](x, 8, BLOCK=8)
        alive = weakref.ref(x)
        del x
        gc.collect()
    assert alive() is None
    (_, given), = launches
    assert given["n"] == 8 and given["BLOCK"] == 8 and "x_ptr" not in given
