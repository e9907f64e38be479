"""Loading a task and checking a config: what a worker process runs.

Every entry point takes and returns JSON-able values (the task as the dict `load_task` returns,
or its path). A failed candidate is a status in the returned dict, never an exception; an
exception means the task itself (or the caller) is wrong.
"""

import builtins
import inspect
import math
import os

import torch
import triton
import triton.language as tl
from triton.compiler.errors import CompilationError
from triton.runtime.autotuner import Autotuner, Config, Heuristics
from triton.runtime.errors import OutOfResources, PTXASError

from . import loader
from .task import LAUNCH_OPTIONS, Problems, TaskError, eval_expression, python_names, read

# Triton's own defaults for a launch that names no options (CUDA backend).
DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3
_MESSAGE_LIMIT = 4000
_GRID_NAMES = {"triton", "tl", "torch", "math", "cdiv"} | set(dir(builtins))

_tasks = {}  # task id (absolute path of task.json) -> _Loaded


class _Loaded:
    """A task with its user module imported; lives as long as the worker process."""

    def __init__(self, spec, module, funcs, kernel):
        self.spec = spec
        self.module = module
        self.funcs = funcs  # "reference", "wrapper", "inputs_fn" -> callable
        self.kernel = kernel  # the object the file defines (jit, autotuned or heuristics)
        self.cache = {}  # what other modules keep per task (timing inputs)

    @property
    def base(self):
        return unwrap(self.kernel)


def unwrap(kernel):
    """The @triton.jit function under @triton.autotune / @triton.heuristics wrappers."""
    while isinstance(kernel, (Autotuner, Heuristics)):
        kernel = kernel.fn
    return kernel


def kernel_params(kernel):
    """[(name, is_constexpr, has_default, default)] of a jit (or interpreted) function."""
    fn = unwrap(kernel).fn
    out = []
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        constexpr = ann is tl.constexpr or (isinstance(ann, str) and ann.endswith("constexpr"))
        has_default = p.default is not inspect.Parameter.empty
        out.append((p.name, constexpr, has_default, p.default if has_default else None))
    return out


def _is_kernel(obj):
    from triton.runtime.interpreter import InterpretedFunction
    return isinstance(unwrap(obj), (triton.runtime.JITFunction, InterpretedFunction))


def _scalar(v):
    return v if isinstance(v, (bool, int, float, str)) or v is None else repr(v)


def _config_dict(cfg):
    d = {k: _scalar(v) for k, v in cfg.kwargs.items()}
    d["num_warps"] = cfg.num_warps
    d["num_stages"] = cfg.num_stages
    if cfg.num_ctas != 1:
        d["num_ctas"] = cfg.num_ctas
    if cfg.maxnreg is not None:
        d["maxnreg"] = cfg.maxnreg
    return d


def _resolve(spec, ref, module, extra):
    """A "module:function" reference: the kernel file itself, a file beside the task, or an
    importable module."""
    mod_name, func = ref.split(":")
    stem = os.path.splitext(os.path.basename(spec["source"]))[0]
    if mod_name == stem:
        mod = module
    elif mod_name in extra:
        mod = extra[mod_name]
    elif os.path.isfile(os.path.join(spec["dir"], mod_name + ".py")):
        mod, _ = loader.load(os.path.join(spec["dir"], mod_name + ".py"), inject={stem: module})
        extra[mod_name] = mod
    else:
        import importlib
        mod = importlib.import_module(mod_name)
    return getattr(mod, func, None)


def _check_semantics(p, spec, kernel):
    """Checks that need the imported kernel: configs, launch names, baseline."""
    params = kernel_params(kernel)
    names = [n for n, *_ in params]
    autotuned = isinstance(kernel, Autotuner)
    baseline, source = spec["baseline"], "task"
    if baseline is None and autotuned:
        baseline, source = [_config_dict(c) for c in kernel.configs], "autotune"
    elif baseline is None and "wrapper" in spec["launch"]:
        baseline, source = [{}], "wrapper"  # the wrapper applies its own defaults
    elif baseline is None:
        baseline = [{n: _scalar(d) for n, c, has, d in params if c and has}]
        baseline[0].update(num_warps=DEFAULT_NUM_WARPS, num_stages=DEFAULT_NUM_STAGES)
        source = "defaults"
    if "grid" not in spec["launch"]:
        return baseline, source
    allowed = f"a constexpr parameter of kernel '{spec['kernel']}' " \
              f"({', '.join(n for n, c, *_ in params if c)}) or a launch option"
    known = set(names) | set(LAUNCH_OPTIONS)
    for name in spec["space"]["params"]:
        if name not in known:
            p.add(f"space.params.{name}", allowed, has_got=False)
    for i, cfg in enumerate(baseline if source != "autotune" else []):
        for name in cfg:
            if name not in known:
                p.add(f"baseline[{i}].{name}", allowed, has_got=False)
    args = spec["launch"]["args"]
    if len(args) > len(names):
        p.add("launch.args", f"at most {len(names)} arguments (kernel '{spec['kernel']}' takes "
              f"{', '.join(names)})", len(args))
    config_names = set(spec["space"]["params"]) | {k for c in baseline for k in c}
    for n, c, has_default, _ in params[len(args):]:
        if not has_default and n not in config_names and not (autotuned and c):
            p.add("launch.args", f"a value for kernel parameter '{n}' (in launch.args, or as a "
                  "config parameter if it is a constexpr)", has_got=False)
    symbols = {k for s in spec["shapes"]["tune"] + spec["shapes"]["check"] for k in s}
    inputs = {i["name"] for i in spec["inputs"] or []}
    env = symbols | inputs | config_names | set(LAUNCH_OPTIONS) | _GRID_NAMES
    if spec["inputs"] is None:
        return baseline, source  # inputs_fn: the input names are known only once it runs
    for field, text in [("launch.grid", spec["launch"]["grid"])] + \
            [(f"launch.args[{i}]", a) for i, a in enumerate(args)]:
        for n in sorted(python_names(text) - env):
            p.add(field, f"names of shape symbols, inputs, config parameters or "
                  f"triton/tl/torch/math/cdiv; '{n}' is none of these", text)
    return baseline, source


def load_task(path):
    """Read, validate and import a task. Returns the normalised manifest (JSON-able) with the
    resolved baseline, the kernel's parameters and the lines the import filter dropped.
    Raises TaskError naming the file and field."""
    spec = read(path)
    p = Problems(spec["id"])
    try:
        module, dropped = loader.load(spec["source"])
    except loader.LoadError as e:
        raise TaskError([f"{spec['id']}: source: cannot import: {e}"]) from None
    kernel = getattr(module, spec["kernel"], None)
    if kernel is None or not _is_kernel(kernel):
        found = sorted(n for n, v in vars(module).items() if _is_kernel(v))
        p.add("kernel", f"a @triton.jit function of {spec['source']} "
              f"(found: {', '.join(found) or 'none'})", spec["kernel"])
        p.raise_if_any()
    funcs, extra = {}, {}
    refs = [("reference", spec["reference"]), ("inputs_fn", spec["inputs_fn"]),
            ("launch.wrapper", spec["launch"].get("wrapper"))]
    for field, ref in refs:
        if ref is None:
            continue
        try:
            fn = _resolve(spec, ref, module, extra)
        except (ImportError, loader.LoadError) as e:
            p.add(field, f"an importable \"module:function\" ({e})", ref)
            continue
        if not callable(fn):
            p.add(field, "\"module:function\" naming a function", ref)
        funcs[field.split(".")[-1]] = fn
    baseline, source = _check_semantics(p, spec, kernel)
    p.raise_if_any()
    files = [spec["id"], spec["source"]]
    for fn in funcs.values():  # the modules the reference, inputs and wrapper come from
        name = getattr(getattr(fn, "__code__", None), "co_filename", "")
        if os.path.isfile(name) and os.path.abspath(name) not in files:
            files.append(os.path.abspath(name))
    spec = dict(spec, baseline=baseline, baseline_from=source, dropped=dropped, files=files,
                kernel_kind=("autotune" if isinstance(kernel, Autotuner) else
                             "heuristics" if isinstance(kernel, Heuristics) else "jit"),
                kernel_params=[{"name": n, "constexpr": c, **({"default": _scalar(d)} if h else {})}
                               for n, c, h, d in kernel_params(kernel)])
    _tasks[spec["id"]] = _Loaded(spec, module, funcs, kernel)
    return spec


def get(task):
    """The loaded task for a manifest dict or a task path (loading it on first use)."""
    if isinstance(task, _Loaded):
        return task
    tid = os.path.abspath(task["id"] if isinstance(task, dict) else task)
    if tid not in _tasks:
        load_task(tid)
    return _tasks[tid]


def device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def environment():
    """What a run records about where it ran: versions, the GPU, its driver and clocks."""
    import platform
    import triton
    env = {"torch": torch.__version__, "triton": triton.__version__, "host": platform.node(),
           "python": platform.python_version(), "interpret": _interpreting()}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, capability=f"{props.major}.{props.minor}",
                   sm_count=props.multi_processor_count, cuda=torch.version.cuda)
        try:
            import pynvml
            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            env.update(driver=pynvml.nvmlSystemGetDriverVersion(),
                       sm_clock_mhz=pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
                       sm_clock_max_mhz=pynvml.nvmlDeviceGetMaxClockInfo(
                           handle, pynvml.NVML_CLOCK_SM))
        except Exception as e:  # NVML's Python binding is optional
            env["nvml"] = f"unavailable: {e}"
    return env


def _size(expr, shape, field="a shape"):
    """A dimension of `shape`: the task's own error (TaskError naming `field`) when its
    expression fails or is negative."""
    try:
        size = expr if isinstance(expr, int) else int(eval_expression(expr, shape))
    except Exception as e:
        raise TaskError([f"{field}: {expr!r} at shape {shape}: {type(e).__name__}: {e}"]) from None
    if size < 0:
        raise TaskError([f"{field}: {expr!r} is {size} at shape {shape}: expected a size >= 0"])
    return size


def _make_tensor(spec, shape, gen, dev, field):
    dims = [_size(d, shape, f"{field}.shape[{j}]") for j, d in enumerate(spec["shape"])]
    dtype = getattr(torch, spec["dtype"])
    work = torch.float64 if dtype == torch.float64 else torch.float32
    init, scale = spec["init"], spec["scale"]
    if init == "randn":
        t = torch.randn(dims, generator=gen, dtype=work, device=dev)
    elif init == "rand":
        t = torch.rand(dims, generator=gen, dtype=work, device=dev)
    elif init == "zeros":
        t = torch.zeros(dims, dtype=work, device=dev)
    elif init == "ones":
        t = torch.ones(dims, dtype=work, device=dev)
    elif init == "arange":
        t = torch.arange(math.prod(dims), dtype=torch.float64, device=dev).reshape(dims)
    else:
        lo, hi = map(int, init.split(":")[1:])
        t = torch.randint(lo, hi, dims, generator=gen, dtype=torch.int64, device=dev)
    if scale != 1:
        t = t * scale
    return t.to(dtype)


def make_inputs(task, shape, seed, dev=None):
    """Fresh inputs for one shape, drawn from `seed` on `dev` (the GPU when there is one: drawing
    a large input on the CPU costs seconds). An `inputs_fn` gets a CPU generator; what it makes
    is moved to `dev`."""
    loaded = get(task)
    spec = loaded.spec
    dev = dev or device()
    if spec["inputs_fn"] is not None:
        gen = torch.Generator().manual_seed(seed)
        try:
            made = loaded.funcs["inputs_fn"](dict(shape), gen)
        except Exception as e:
            raise TaskError([f"{spec['id']}: inputs_fn: {spec['inputs_fn']} failed at shape "
                             f"{shape}: {type(e).__name__}: {e}"]) from None
        missing = [o["name"] for o in spec["outputs"]
                   if not isinstance(made, dict) or o["name"] not in made]
        if missing:
            raise TaskError([f"{spec['id']}: inputs_fn: expected a dict of tensors holding the "
                             f"outputs {', '.join(missing)}"])
    else:
        made = {}
        for i, s in enumerate(spec["inputs"]):
            # One stream per tensor, so adding an input does not change the others.
            gen = torch.Generator(device=dev).manual_seed((seed * 1000003 + i) % (1 << 63))
            made[s["name"]] = _make_tensor(s, shape, gen, dev, f"{spec['id']}: inputs[{i}]")
    return {k: v.to(dev) if isinstance(v, torch.Tensor) else v for k, v in made.items()}


class _pinned:
    """Runs an autotuned kernel with exactly one config: ours (its hooks still apply)."""

    def __init__(self, kernel, config):
        self.tuners = []
        while isinstance(kernel, (Autotuner, Heuristics)):
            if isinstance(kernel, Autotuner):
                self.tuners.append(kernel)
            kernel = kernel.fn
        opts = {k: config[k] for k in LAUNCH_OPTIONS if k in config}
        self.config = Config({k: v for k, v in config.items() if k not in LAUNCH_OPTIONS},
                             num_warps=opts.get("num_warps", DEFAULT_NUM_WARPS),
                             num_stages=opts.get("num_stages", DEFAULT_NUM_STAGES),
                             num_ctas=opts.get("num_ctas", 1), maxnreg=opts.get("maxnreg"))

    def __enter__(self):
        self.saved = [t.configs for t in self.tuners]
        for t in self.tuners:
            t.configs = [self.config]

    def __exit__(self, *exc):
        for t, c in zip(self.tuners, self.saved):
            t.configs = c


def _launch_code(loaded):
    """The launch's grid and argument expressions, compiled once per task."""
    if "launch_code" not in loaded.cache:
        launch = loaded.spec["launch"]
        loaded.cache["launch_code"] = (
            compile(launch["grid"], "launch.grid", "eval"),
            [compile(a, f"launch.args[{i}]", "eval") for i, a in enumerate(launch["args"])])
    return loaded.cache["launch_code"]


def _evaluate(spec, field, text, code, env):
    """A launch expression of the task: its failure is the task's (TaskError), not a
    candidate's."""
    try:
        return eval(code, env)
    except Exception as e:
        raise TaskError([f"{spec['id']}: {field}: {text!r} failed: {type(e).__name__}: {e}"]) \
            from None


def bind(loaded, inputs, config, shape):
    """The launch of the kernel with `config` on `inputs`, its grid and arguments evaluated once:
    each call of the returned function launches it (no synchronisation)."""
    spec = loaded.spec
    pinned = _pinned(loaded.kernel, config)
    if "wrapper" in spec["launch"]:
        wrapper, cfg = loaded.funcs["wrapper"], dict(config)

        def call():
            with pinned:
                return wrapper(inputs, cfg)
        return call
    grid_code, arg_codes = _launch_code(loaded)
    env = {"triton": triton, "tl": tl, "torch": torch, "math": math, "cdiv": triton.cdiv,
           **shape, **inputs, **config}
    launch_spec = spec["launch"]
    grid = _evaluate(spec, "launch.grid", launch_spec["grid"], grid_code, env)
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    args = [_evaluate(spec, f"launch.args[{i}]", launch_spec["args"][i], c, env)
            for i, c in enumerate(arg_codes)]
    if isinstance(loaded.kernel, Autotuner):
        kwargs = {}  # the pinned config carries them
    else:
        names = {n for n, *_ in kernel_params(loaded.kernel)} | set(LAUNCH_OPTIONS)
        kwargs = {k: v for k, v in config.items() if k in names}
    kernel = loaded.kernel[grid]

    def call():
        with pinned:
            return kernel(*args, **kwargs)
    return call


def launch(loaded, inputs, config, shape):
    """Launch the kernel once with `config` (no synchronisation)."""
    return bind(loaded, inputs, config, shape)()


def classify(exc):
    """A candidate's exception as a status: compile (the compiler refused it or it needs more
    resources than the GPU has) or runtime. `fatal` says the CUDA context is probably lost."""
    status = "compile" if isinstance(exc, (CompilationError, OutOfResources, PTXASError)) \
        else "runtime"
    text = f"{type(exc).__name__}: {exc}"
    fatal = type(exc).__name__ == "AcceleratorError" or "CUDA error" in text
    return {"status": status, "message": text[:_MESSAGE_LIMIT], "fatal": fatal}


def _poison(t):
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype != torch.bool:
        # The most negative value: a kernel that forgets to store leaves an absurd number.
        t.fill_(torch.iinfo(t.dtype).min if t.dtype != torch.uint8 else 0xA5)


def _reference(loaded, inputs, outputs):
    spec = loaded.spec
    try:
        got = loaded.funcs["reference"](inputs)
    except Exception as e:
        raise TaskError([f"{spec['id']}: reference: {spec['reference']} failed: "
                         f"{type(e).__name__}: {e}"]) from e
    names = [o["name"] for o in spec["outputs"]]
    if isinstance(got, torch.Tensor):
        got = [got]
    if isinstance(got, (list, tuple)) and len(got) == len(names):
        got = dict(zip(names, got))
    if not isinstance(got, dict) or any(not isinstance(got.get(n), torch.Tensor) for n in names):
        raise TaskError([f"{spec['id']}: reference: expected {spec['reference']} to return a "
                         f"tensor per output ({', '.join(names)}) as a dict, a tuple or a tensor"])
    for n in names:  # what the kernel writes is the task's shape: the reference must match it
        want, have = outputs[n], got[n]
        if isinstance(want, torch.Tensor) and (
                tuple(have.shape) != tuple(want.shape) or
                have.dtype.is_floating_point != want.dtype.is_floating_point):
            raise TaskError([f"{spec['id']}: reference: {spec['reference']} returned {n} as "
                             f"{have.dtype} {tuple(have.shape)}, the output is {want.dtype} "
                             f"{tuple(want.shape)}"])
    return got


def compare(actual, expected, atol, rtol):
    """{max_abs_err, bad, nonfinite}: an element passes when |a - e| <= atol + rtol * |e| or
    a == e (infinities); NaN never passes."""
    if actual.shape != expected.shape:
        return {"max_abs_err": None, "bad": actual.numel(), "nonfinite": 0,
                "shape": f"expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"}
    # float32 holds every value of the narrower float types; integers and float64 need float64.
    narrow = all(t.is_floating_point and t.itemsize <= 4 for t in (actual.dtype, expected.dtype))
    work = torch.float32 if narrow else torch.float64
    a = actual.detach().to(work)
    e = expected.detach().to(device=a.device, dtype=work)
    err = (a - e).abs()
    ok = (err <= atol + rtol * e.abs()) | (a == e)
    finite = torch.isfinite(err)
    return {"max_abs_err": float(err[finite].max()) if bool(finite.any()) else None,
            "bad": int((~ok).sum()), "nonfinite": int((~torch.isfinite(a)).sum())}


def _interpreting():
    return triton.knobs.runtime.interpret


def run_check(task, config, shape, seed=0):
    """Run `config` once on fresh inputs for `shape` and compare with the reference.
    Returns {status: ok|wrong|runtime|compile|unsupported, message, max_abs_err: {output: x},
    bad: {output: n}, fatal}."""
    loaded = get(task)
    spec = loaded.spec
    if not torch.cuda.is_available() and not _interpreting():
        return {"status": "unsupported", "fatal": False,
                "message": "no CUDA device and TRITON_INTERPRET is not set"}
    inputs = make_inputs(loaded, shape, seed)
    ref_inputs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()} \
        if spec["writes_inputs"] else inputs
    expected = _reference(loaded, ref_inputs, inputs)
    for o in spec["outputs"]:
        if o["poison"]:
            _poison(inputs[o["name"]])
    try:
        launch(loaded, inputs, config, shape)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except TaskError:
        raise
    except Exception as e:
        return classify(e)
    result = {"status": "ok", "message": "", "fatal": False, "max_abs_err": {}, "bad": {}}
    problems = []
    for o in spec["outputs"]:
        c = compare(inputs[o["name"]], expected[o["name"]], o["atol"], o["rtol"])
        result["max_abs_err"][o["name"]] = c["max_abs_err"]
        result["bad"][o["name"]] = c["bad"]
        if c["bad"]:
            why = c.get("shape") or (f"{c['bad']} of {inputs[o['name']].numel()} elements "
                                     f"outside atol={o['atol']} rtol={o['rtol']} (max abs err "
                                     f"{c['max_abs_err']}, {c['nonfinite']} not finite)")
            problems.append(f"{o['name']}: {why}")
    if problems:
        result["status"] = "wrong"
        result["message"] = "; ".join(problems)
    return result
