"""Loading a task and checking a config: what a worker process runs.

Every entry point takes and returns JSON-able values (the task as the dict `load_task` returns,
or its path). A failed candidate is a status in the returned dict, never an exception; an
exception means the task itself (or the caller) is wrong.
"""

import builtins
import contextlib
import copy
import functools
import inspect
import math
import operator
import os
import re
import sys

import torch
import triton
import triton.language as tl
from triton.compiler.errors import CompilationError
from triton.runtime.autotuner import Autotuner, Config, Heuristics
from triton.runtime.errors import OutOfResources, PTXASError
from triton.runtime.jit import KernelInterface

from . import loader, standin, variants
from .kernels import JIT_CLASSES, code_file, hooked_runs, is_task_kernel, layers, unwrap
from .gaps import describe as interpreter_gap, interpreter_warnings
from .task import (FLOAT_DTYPES, INT64_MAX, LAUNCH_OPTIONS, Problems, TaskError, check_config, eval_expression,
                   python_names, read, substitute)

# Triton's own defaults for a launch that names no options (CUDA backend).
DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3
_MESSAGE_LIMIT = 4000
_GRID_NAMES = {"triton", "tl", "torch", "math", "cdiv"} | set(dir(builtins))

_tasks = {}  # task id (absolute path of task.json), or (id, dtype) -> _Loaded


class _Loaded:
    """A task with its user module imported; lives as long as the worker process."""

    def __init__(self, spec, module, funcs, kernel):
        self.spec = spec
        self.module = module
        self.funcs = funcs  # "reference", "wrapper", "inputs_fn" -> callable
        self.kernel = kernel  # the object the file defines (jit, autotuned or heuristics)
        self.cache = {}  # what other modules keep per task (timing inputs)
        self.baseline = spec["baseline"]  # as the task gives it (a function, expressions)

    @property
    def base(self):
        return unwrap(self.kernel)

    @property
    def analysis_path(self):
        """The file that defines the kernel (what a variant replaces)."""
        name = code_file(self.kernel)
        return name if name and os.path.isfile(name) else self.spec["source"]


def library_wrappers(kernel):
    """The classes of a kernel's wrappers that are not Triton's own, by the class that defines
    their `run`."""
    found = []
    for k in layers(kernel)[:-1]:
        cls = next((c for c in type(k).__mro__ if "run" in c.__dict__), None)
        if cls is not None and cls not in (Autotuner, Heuristics, KernelInterface) and \
                cls not in found:
            found.append(cls)
    return tuple(found)


def autotuner(kernel):
    """The outermost @triton.autotune of a kernel's wrappers, or None."""
    return next((k for k in layers(kernel) if isinstance(k, Autotuner)), None)


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
    return isinstance(unwrap(obj), JIT_CLASSES)


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
    # a dotted name is a module of a package (on python_path): imported as Python imports it
    beside = None if "." in mod_name else next(
        (f for f in (os.path.join(d, mod_name + ".py") for d in
                     [spec["dir"], os.path.dirname(spec["source"])] + spec.get("python_path", []))
         if os.path.isfile(f)), None)
    if mod_name == stem:
        mod = module
    elif mod_name in extra:
        mod = extra[mod_name]
    elif beside:
        mod, _ = loader.load(beside, inject={stem: module})
        extra[mod_name] = mod
    else:
        import importlib
        mod = importlib.import_module(mod_name)
    return getattr(mod, func, None)


def _use_python_path(folders):
    """A task's python_path, first on sys.path, in order; it stays: the functions it names may
    import lazily, when they run."""
    for d in reversed(folders):
        if d in sys.path:
            sys.path.remove(d)
        sys.path.insert(0, d)


def _default_baseline(spec, kernel, params):
    """The baseline a task that names none starts from, and where it came from."""
    if autotuner(kernel) is not None:
        return [_config_dict(c) for c in autotuner(kernel).configs], "autotune"
    if "grid" not in spec["launch"] or "call" in spec["launch"]:
        return [{}], "wrapper"  # the file's own function applies its own choices
    baseline = {n: _scalar(d) for n, c, has, d in params if c and has}
    baseline.update(num_warps=DEFAULT_NUM_WARPS, num_stages=DEFAULT_NUM_STAGES)
    return [baseline], "defaults"


def _check_semantics(p, spec, kernel):
    """Checks that need the imported kernel: configs and launch names."""
    params = kernel_params(kernel)
    names = [n for n, *_ in params]
    autotuned = autotuner(kernel) is not None
    if "wrapper" in spec["launch"]:
        return
    allowed = f"a constexpr parameter of kernel '{spec['kernel']}' " \
              f"({', '.join(n for n, c, *_ in params if c)}) or a launch option"
    known = set(names) | set(LAUNCH_OPTIONS)
    for name in spec["space"]["params"]:
        if name not in known:
            p.add(f"space.params.{name}", allowed, has_got=False)
    for i, cfg in enumerate(spec["baseline"] if isinstance(spec["baseline"], list) else []):
        for name in cfg or {}:
            if name not in known:
                p.add(f"baseline[{i}].{name}", allowed, has_got=False)
    if "call" in spec["launch"]:
        return
    args, kwargs = spec["launch"]["args"], spec["launch"]["kwargs"]
    if len(args) > len(names):
        p.add("launch.args", f"at most {len(names)} arguments (kernel '{spec['kernel']}' takes "
              f"{', '.join(names)})", len(args))
    for name in kwargs:
        if name not in names:
            p.add(f"launch.kwargs.{name}", f"a parameter of kernel '{spec['kernel']}' "
                  f"({', '.join(names)})", has_got=False)
        elif names.index(name) < len(args):
            p.add(f"launch.kwargs.{name}", "a parameter not already given by launch.args",
                  has_got=False)
    config_names = set(spec["space"]["params"])
    if isinstance(spec["baseline"], list):
        config_names |= {k for c in spec["baseline"] for k in c or {}}
    for n, c, has_default, _ in params[len(args):]:
        if not has_default and n not in config_names | set(kwargs) and not (autotuned and c):
            p.add("launch.args", f"a value for kernel parameter '{n}' (in launch.args or "
                  "launch.kwargs, or as a config parameter if it is a constexpr)", has_got=False)
    symbols = {k for s in spec["shapes"]["tune"] + spec["shapes"]["check"] for k in s}
    inputs = {i["name"] for i in spec["inputs"] or []}
    env = symbols | inputs | config_names | set(LAUNCH_OPTIONS) | _GRID_NAMES
    if spec["inputs"] is None:
        return  # inputs_fn: the input names are known only once it runs
    exprs = [("launch.grid", spec["launch"]["grid"])] + \
        [(f"launch.args[{i}]", a) for i, a in enumerate(args)] + \
        [(f"launch.kwargs.{k}", a) for k, a in kwargs.items()]
    for field, text in exprs:
        for n in sorted(python_names(text) - env):
            p.add(field, f"names of shape symbols, inputs, config parameters or "
                  f"triton/tl/torch/math/cdiv; '{n}' is none of these", text)


def load_task(path):
    """Read, validate and import a task. Returns the normalised manifest (JSON-able) with the
    resolved baseline, the kernel's parameters and the lines the import filter dropped.
    Raises TaskError naming the file and field."""
    spec = read(path)
    p = Problems(spec["id"])
    _use_python_path(spec["python_path"])
    with loader.recording() as dropped:  # the kernel file's, and those of modules beside it
        try:
            module, _ = loader.load(spec["source"])
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
                ("launch.wrapper", spec["launch"].get("wrapper")),
                ("launch.call", spec["launch"].get("call")),
                ("baseline", spec["baseline"] if isinstance(spec["baseline"], str) else None)]
        for field, ref in refs:
            if ref is None or (field == "reference" and ref == "baseline"):
                continue
            try:
                fn = _resolve(spec, ref, module, extra)
            except (ImportError, loader.LoadError) as e:
                p.add(field, f"an importable \"module:function\" ({e})", ref)
                continue
            if not callable(fn):
                p.add(field, "\"module:function\" naming a function", ref)
            funcs[field.split(".")[-1]] = fn
    _check_semantics(p, spec, kernel)
    p.raise_if_any()
    loaded = _Loaded(spec, module, funcs, kernel)
    plans = [shape_plan(loaded, s) for s in spec["shapes"]["tune"]]
    files = [spec["id"], spec["source"]]
    for fn in funcs.values():  # the modules the reference, inputs and wrapper come from
        name = getattr(getattr(fn, "__code__", None), "co_filename", "")
        if os.path.isfile(name) and os.path.abspath(name) not in files:
            files.append(os.path.abspath(name))
    source = "function" if isinstance(spec["baseline"], str) else \
        "task" if spec["baseline"] is not None else \
        _default_baseline(spec, kernel, kernel_params(kernel))[1]
    warnings = interpreter_warnings(spec, loaded.analysis_path, loaded.base.__name__)
    spec = dict(spec, baseline=plans[0]["baseline"], baseline_from=source, plans=plans,
                dropped=dropped, files=files, warnings=warnings,
                kernel_kind=("autotune" if autotuner(kernel) is not None else
                             "heuristics" if any(isinstance(k, Heuristics) for k in
                                                 layers(kernel)) else "jit"),
                kernel_params=[{"name": n, "constexpr": c, **({"default": _scalar(d)} if h else {})}
                               for n, c, h, d in kernel_params(kernel)],
                analysis=kernel_analysis(loaded))
    loaded.spec = spec
    _tasks[spec["id"]] = loaded
    for key in [k for k in _tasks if isinstance(k, tuple) and k[0] == spec["id"]]:
        del _tasks[key]  # made from the task as it was
    return spec


_BASELINE_NAMES = {"triton": triton, "math": math, "cdiv": triton.cdiv}


def _baselines_at(loaded, shape):
    """The task's baseline configs at one tuning shape: a function's, or the task's own with
    their {"expr": ...} values evaluated over the shape."""
    spec = loaded.spec
    given = loaded.baseline
    where = f"{spec['id']}: baseline"
    if isinstance(given, str):
        try:
            got = loaded.funcs["baseline"](dict(shape))
        except Exception as e:
            raise TaskError([f"{where}: {spec['baseline']} failed at shape {shape}: "
                             f"{type(e).__name__}: {e}"]) from None
        got = [got] if isinstance(got, dict) else got
        p = Problems(spec["id"])
        if not isinstance(got, list) or not got:
            p.add(f"baseline ({spec['baseline']} at shape {shape})", "a config or a list of "
                  "configs", got)
        else:
            for i, c in enumerate(got):
                check_config(p, f"baseline ({spec['baseline']} at shape {shape})[{i}]", c)
        p.raise_if_any()
        return [dict(c) for c in got]
    if given is None:
        return _default_baseline(spec, loaded.kernel, kernel_params(loaded.kernel))[0]
    out = []
    for i, cfg in enumerate(given):
        resolved = {}
        for k, v in cfg.items():
            if isinstance(v, dict):
                try:
                    v = eval(v["expr"], {"__builtins__": builtins, **_BASELINE_NAMES}, dict(shape))
                except Exception as e:
                    raise TaskError([f"{where}[{i}].{k}: {v['expr']!r} failed at shape {shape}: "
                                     f"{type(e).__name__}: {e}"]) from None
            resolved[k] = _scalar(v)
        out.append(resolved)
    return out


class _Stop(Exception):
    """Ends a launch once its arguments are known."""


def _kernel_arguments(loaded, shape, config):
    """The task kernel's integer arguments and constexprs at `shape`, as the task's launch
    passes them: launched on tensors of the meta device, stopped at the kernel's run."""
    spec, seen = loaded.spec, {}
    if spec["inputs"] is None:
        return seen  # an inputs_fn makes real tensors: not worth running for this
    inputs = {s["name"]: torch.empty([_size(d, shape) for d in s["shape"]],
                                     dtype=getattr(torch, s["dtype"]), device="meta")
              for s in spec["inputs"]}
    names = [n for n, *_ in kernel_params(loaded.kernel)]

    def stop(cls, original):
        def run(fn, *args, grid, warmup, **kwargs):
            if is_task_kernel(loaded, fn):
                seen.update(zip(names, args), **kwargs)
            raise _Stop()  # another kernel first: its outputs are not there to go on with
        return run
    try:
        with hooked_runs(stop):
            launch(loaded, inputs, config, shape)
    except Exception:  # _Stop, or a function that needs real values: infer from less
        pass
    return {n: v for n, v in seen.items() if isinstance(v, int) and not isinstance(v, bool)}


def kernel_analysis(loaded):
    """The static analysis of the file that defines the task's kernel, that kernel alone (the
    document transforms rewrite), or None when that file cannot be analysed."""
    from . import analyze
    if "analysis" not in loaded.cache:
        try:
            loaded.cache["analysis"] = analyze.analyze(loaded.analysis_path, loaded.base.__name__)
        except (ValueError, OSError):
            loaded.cache["analysis"] = None
    return loaded.cache["analysis"]


def _inferred_space(loaded, shape, baseline):
    """The static analysis's space around the baseline at `shape` (for a task without one)."""
    from . import analyze
    doc = kernel_analysis(loaded)
    ir = doc["kernels"][0] if doc and doc["kernels"] else None
    if ir is None:
        return {"params": {}, "constraints": []}
    bound = _kernel_arguments(loaded, shape, baseline)
    bound.update({k: v for k, v in baseline.items() if isinstance(v, int)})
    inferred = analyze.infer_space(ir, bound)
    values = {k: v for k, v in bound.items() if k not in inferred["params"]}
    return {"params": inferred["params"],
            "constraints": [substitute(c, values) for c in inferred["constraints"]]}


def _as_launched(loaded, shape, config, names):
    """`config` as the file's own launch runs it at `shape`: each of the space's parameters
    `names` it leaves to that launch (a wrapper's `config.get("BLOCK_M", 64)`) with the value the
    kernel's launch gets, a launch option it passes none of with Triton's default. None when
    the config sets them all, or when the launch cannot tell one (an inputs_fn, a launch that
    needs real values, a value that is no integer)."""
    missing = [n for n in names if n not in config]
    if not missing:
        return None
    seen = _kernel_arguments(loaded, shape, config)
    if not seen:  # the kernel's launch was not reached
        return None
    defaults = {"num_warps": DEFAULT_NUM_WARPS, "num_stages": DEFAULT_NUM_STAGES}
    filled = {n: seen.get(n, defaults.get(n)) for n in missing}
    return None if None in filled.values() else {**config, **filled}


def shape_plan(loaded, shape):
    """What a run at one tuning shape starts from: its baselines and its space (the task's
    parameters, its constraints with the shape's sizes put in; without parameters, the static
    analysis's space around the first baseline). `launched`, where a baseline leaves some of
    the space's parameters to the file's own launch, holds each baseline as that launch runs it
    (None where it sets them all or they cannot be told): the point it is, so that a recorded
    space can answer it."""
    space = loaded.spec["space"]
    baseline = _baselines_at(loaded, shape)
    if not space["params"]:
        plan = {"shape": dict(shape), "baseline": baseline, "inferred": True,
                "space": _inferred_space(loaded, shape, baseline[0])}
    else:
        constraints = [substitute(c, shape) for c in space["constraints"]]
        plan = {"shape": dict(shape), "baseline": baseline,
                "space": {"params": space["params"], "constraints": constraints}}
    launched = [_as_launched(loaded, shape, c, list(plan["space"]["params"])) for c in baseline]
    if any(c is not None for c in launched):
        plan["launched"] = launched
    return plan


def get(task, dtype=None):
    """The loaded task for a manifest dict or a task path (loading it on first use). `dtype`
    (one of the task's `dtypes`) gives the task whose floating inputs are made in it, kept
    beside the task as it is."""
    if isinstance(task, _Loaded):
        return task
    tid = os.path.abspath(task["id"] if isinstance(task, dict) else task)
    if tid not in _tasks:
        load_task(tid)
    if dtype is None:
        return _tasks[tid]
    if (tid, dtype) not in _tasks:
        _tasks[(tid, dtype)] = _in_dtype(_tasks[tid], dtype)
    return _tasks[(tid, dtype)]


def _in_dtype(loaded, dtype):
    """`loaded` with its floating inputs in `dtype`; TaskError when the task does not allow it."""
    spec = loaded.spec
    if dtype not in (spec["dtypes"] or ()):
        raise TaskError([f"{spec['id']}: dtypes: expected {dtype!r} among the task's dtypes, "
                         f"got {spec['dtypes']}"])
    inputs = [dict(s, dtype=dtype) if s["dtype"] in FLOAT_DTYPES else s for s in spec["inputs"]]
    retyped = _Loaded(dict(spec, inputs=inputs), loaded.module, loaded.funcs, loaded.kernel)
    retyped.baseline = loaded.baseline
    return retyped


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
    if not 0 <= size <= INT64_MAX:
        raise TaskError([f"{field}: {expr!r} is {size} at shape {shape}: expected a size from 0 "
                         f"to {INT64_MAX} (int64)"])
    return size


def laid_out(spec, dims):
    """The sizes in memory order and the permutation back to the task's order: a tensor with an
    `order` (captured transposed) is made so, its strides those the kernel was launched with."""
    order = spec.get("order")
    if not order:
        return dims, None
    return [dims[i] for i in order], [order.index(j) for j in range(len(order))]


def _make_tensor(spec, shape, gen, dev, field):
    dims, back = laid_out(spec, [_size(d, shape, f"{field}.shape[{j}]")
                                 for j, d in enumerate(spec["shape"])])
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
    elif init == "values":
        t = torch.tensor(spec["values"], dtype=torch.float64, device=dev).reshape(dims)
    else:
        lo, hi = (int(b) if b.lstrip("-").isdigit() else _size(b, shape, f"{field}.init")
                  for b in init.split(":")[1:])
        if lo >= hi:
            raise TaskError([f"{field}.init: {init!r} at shape {shape}: expected LO < HI"])
        t = torch.randint(lo, hi, dims, generator=gen, dtype=torch.int64, device=dev)
    if scale != 1:
        t = t * scale
    t = t.to(dtype)
    t = t.permute(back) if back else t
    # a function may take another path for a tensor that takes gradients (returning a weight's)
    return t.requires_grad_() if spec.get("requires_grad") else t


def make_inputs(task, shape, seed, dev=None):
    """Fresh inputs for one shape, drawn from `seed` on `dev` (the GPU when there is one: drawing
    a large input on the CPU costs seconds). An `inputs_fn` runs with `dev` as torch's default
    device and a generator on it (one that insists on the CPU gets a CPU generator); what it
    makes is moved to `dev`."""
    loaded = get(task)
    spec = loaded.spec
    dev = dev or device()
    if spec["inputs_fn"] is not None:
        made = _inputs_from_function(loaded, shape, seed, dev)
        returned = set(spec["launch"].get("returns") or [])
        missing = [o["name"] for o in spec["outputs"] if o["name"] not in returned and
                   (not isinstance(made, dict) or o["name"] not in made)]
        if missing:
            raise TaskError([f"{spec['id']}: inputs_fn: expected a dict of tensors holding the "
                             f"outputs {', '.join(missing)}"])
    else:
        _refuse_oversized(spec, shape, dev)
        made = {}
        for i, s in enumerate(spec["inputs"]):
            # One stream per tensor, so adding an input does not change the others.
            gen = torch.Generator(device=dev).manual_seed((seed * 1000003 + i) % (1 << 63))
            field = f"{spec['id']}: inputs[{i}]"
            try:
                made[s["name"]] = _make_tensor(s, shape, gen, dev, field)
            except TaskError:
                raise
            except Exception as e:  # the task's sizes: the allocator refused them
                reason = f"{type(e).__name__}: {e}".splitlines()[0]  # not torch's C++ trace
                raise TaskError([f"{spec['id']}: {_shape_field(spec, shape)}: expected sizes "
                                 f"whose inputs can be made on {dev}, got {shape}: "
                                 f"inputs[{i}] ({s['name']}) failed: {reason}"]) from None
    return {k: v.to(dev) if isinstance(v, torch.Tensor) else v for k, v in made.items()}


def _shape_field(spec, shape):
    """The task's field that holds `shape` ("shapes.check[0]"), for errors of its sizes."""
    for kind in ("check", "tune"):
        for i, s in enumerate(spec["shapes"][kind]):
            if s == dict(shape):
                return f"shapes.{kind}[{i}]"
    return "shapes"


def _memory_of(dev):
    """The bytes of memory `dev` has."""
    dev = torch.device(dev)
    if dev.type == "cuda":
        return torch.cuda.get_device_properties(dev).total_memory
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _refuse_oversized(spec, shape, dev):
    """Inputs larger than `dev`'s memory are the task's sizes' fault (TaskError naming the
    shape), refused before anything is drawn: an allocator that grants them on credit would
    leave the worker to the kernel's out-of-memory killer instead."""
    need = {}
    for i, s in enumerate(spec["inputs"]):
        elements = math.prod(_size(d, shape, f"{spec['id']}: inputs[{i}].shape[{j}]")
                             for j, d in enumerate(s["shape"]))
        need[f"inputs[{i}] ({s['name']})"] = elements * getattr(torch, s["dtype"]).itemsize
    have = _memory_of(dev)
    if sum(need.values()) > have:
        largest = max(need, key=need.get)
        raise TaskError([f"{spec['id']}: {_shape_field(spec, shape)}: expected sizes whose "
                         f"inputs fit in the {have} bytes of {torch.device(dev).type} memory, "
                         f"got {shape}: the inputs need {sum(need.values())} bytes, "
                         f"{largest} {need[largest]} of them"])


def _inputs_from_function(loaded, shape, seed, dev):
    spec = loaded.spec
    failure = None
    for where in dict.fromkeys([dev, "cpu"]):
        gen = torch.Generator(device=where).manual_seed(seed)
        try:
            with torch.device(where):
                return loaded.funcs["inputs_fn"](dict(shape), gen)
        except Exception as e:
            failure = failure or e
    raise TaskError([f"{spec['id']}: inputs_fn: {spec['inputs_fn']} failed at shape {shape}: "
                     f"{type(failure).__name__}: {failure}"]) from None


def _fixed_values(loaded):
    """The plain values of the task's first baseline config: what a candidate keeps for the
    parameters it does not set."""
    given = loaded.baseline
    first = given[0] if isinstance(given, list) and given else {}
    return {k: v for k, v in first.items() if not isinstance(v, dict)}


class _pinned:
    """Runs an autotuned kernel with exactly one config: ours (its hooks still apply). A
    constexpr the autotuner's configs set that `config` lacks (one the space does not tune,
    such as a flag) keeps the value of `fixed` (the task's baseline), else of the first config
    setting it: the kernel has no other source for it."""

    def __init__(self, kernel, config, fixed=None):
        self.tuners = [k for k in layers(kernel) if isinstance(k, Autotuner)]
        opts = {k: config[k] for k in LAUNCH_OPTIONS if k in config}
        kwargs = {k: v for k, v in config.items() if k not in LAUNCH_OPTIONS}
        for tuner in self.tuners:
            for c in tuner.configs:
                for k, v in c.kwargs.items():
                    if k not in kwargs:
                        kwargs[k] = (fixed or {}).get(k, v)
        self.config = Config(kwargs, num_warps=opts.get("num_warps", DEFAULT_NUM_WARPS),
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
        grid = launch.get("grid")
        loaded.cache["launch_code"] = (
            compile(grid, "launch.grid", "eval") if grid else None,
            [compile(a, f"launch.args[{i}]", "eval") for i, a in enumerate(launch["args"])],
            {k: compile(a, f"launch.kwargs.{k}", "eval") for k, a in launch["kwargs"].items()})
    return loaded.cache["launch_code"]


def _evaluate(spec, field, text, code, env):
    """A launch expression of the task: its failure is the task's (TaskError), not a
    candidate's."""
    try:
        return eval(code, env)
    except Exception as e:
        raise TaskError([f"{spec['id']}: {field}: {text!r} failed: {type(e).__name__}: {e}"]) \
            from None


def _block_count(value):
    """A grid dimension as an int, or None when it is no count of blocks."""
    if isinstance(value, bool):
        return None
    try:
        count = operator.index(value)
    except TypeError:
        return None
    return count if count >= 0 else None


def _grid(spec, value):
    """launch.grid's value as the grid tuple: one to three block counts. Anything else is the
    task's expression's fault (TaskError), not a candidate's: every launch would fail."""
    dims = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    counts = tuple(_block_count(d) for d in dims)
    if not 1 <= len(counts) <= 3 or None in counts:
        got = repr(value) if len(repr(value)) <= 200 else f"{repr(value)[:200]}..."
        raise TaskError([f"{spec['id']}: launch.grid: expected 1 to 3 block counts (an integer "
                         f">= 0 or a tuple of them), got {got} from {spec['launch']['grid']!r}"])
    return counts


def _takes(fn, args, kwargs):
    """Whether fn's signature takes these arguments (yes when it has none to ask)."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _called(spec, fn, args, kwargs, field, expected):
    """fn(*args, **kwargs) for a function the task names: arguments it cannot take are the task's
    fault (TaskError naming `field`), not a candidate's. Python refuses them before a line of fn
    runs (the traceback ends here); through a decorator, where the refusal comes from inside,
    fn's own signature tells."""
    try:
        return fn(*args, **kwargs)
    except TypeError as e:
        if e.__traceback__.tb_next is not None and _takes(fn, args, kwargs):
            raise  # the arguments fit: the failure is the run's
        raise TaskError([f"{spec['id']}: {field}: expected {expected}, got {len(args)} "
                         f"argument(s){' and ' + ', '.join(kwargs) if kwargs else ''}: "
                         f"{type(e).__name__}: {e}"]) from None


def _launch_env(**names):
    return {"triton": triton, "tl": tl, "torch": torch, "math": math, "cdiv": triton.cdiv,
            **names}


def _arguments(loaded, env):
    """launch.args and launch.kwargs evaluated over `env`."""
    spec = loaded.spec
    launch_spec = spec["launch"]
    _, arg_codes, kwarg_codes = _launch_code(loaded)
    args = [_evaluate(spec, f"launch.args[{i}]", launch_spec["args"][i], c, env)
            for i, c in enumerate(arg_codes)]
    kwargs = {k: _evaluate(spec, f"launch.kwargs.{k}", launch_spec["kwargs"][k], c, env)
              for k, c in kwarg_codes.items()}
    return args, kwargs


def placed(names, args, kwargs, values):
    """(args, kwargs) of a launch with `values` in place of what it passed: a parameter the
    launch gave positionally (`kernel[grid](x, y, n, BLOCK)`) keeps its slot, one given by
    name or not at all goes by name (launch options are keyword-only)."""
    args, kwargs = list(args), dict(kwargs)
    slots = {n: i for i, n in enumerate(names[:len(args)])}
    for k, v in values.items():
        if k in slots:
            args[slots[k]] = v
        else:
            kwargs[k] = v
    return tuple(args), kwargs


class _injected:
    """While the file's own function runs, every launch of the task's kernel gets `config`:
    its values replace what the function passes (constexprs and launch options), and with
    launch.grid the grid is recomputed from the kernel's arguments by name. An autotuned kernel
    is pinned to the config; heuristics see the config's values. Each launch is recorded as
    (run, args, kwargs, grid), so that timing can replay the kernel alone.

    The kernel is recognised by its name and file, at the class level: the function may reach
    it through another import of its module than the task's."""

    def __init__(self, loaded, config):
        self.loaded = loaded
        self.config = dict(config)
        self.pinned = _pinned(loaded.kernel, config, _fixed_values(loaded)).config
        self.launches = []
        self.call_values = {}  # the function's integer arguments, for launch.grid (_call)

    def _mine(self, obj):
        return is_task_kernel(self.loaded, obj)

    def _jit_run(self, original):
        spec = self.loaded.spec
        grid_code = _launch_code(self.loaded)[0]
        params = kernel_params(self.loaded.kernel)
        names = [n for n, *_ in params]
        injected = self

        def run(fn, *args, grid, warmup, **kwargs):
            if not injected._mine(fn):
                return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
            args, kwargs = placed(names, args, kwargs, injected.config)
            if grid_code is not None:
                bound = dict(injected.call_values)
                bound.update((n, d) for n, _, has, d in params if has)
                bound.update(zip((n for n, *_ in params), args))
                bound.update(kwargs)
                grid = _grid(spec, _evaluate(spec, "launch.grid", spec["launch"]["grid"],
                                             grid_code, _launch_env(**bound)))
            inner = original.__get__(fn)
            injected.launches.append((inner, args, kwargs, grid))
            return inner(*args, grid=grid, warmup=warmup, **kwargs)
        return run

    def _autotuner_run(self, original):
        injected = self
        names = [n for n, *_ in kernel_params(self.loaded.kernel)]

        def run(tuner, *args, **kwargs):
            if not injected._mine(tuner):
                return original(tuner, *args, **kwargs)
            # what the caller passes itself the autotuner must not pass again: the launch below
            # takes the config's value in its place
            given = set(kwargs) | set(names[:len(args)])
            pinned = injected.pinned
            if given & set(pinned.kwargs):
                pinned = copy.copy(pinned)
                pinned.kwargs = {k: v for k, v in pinned.kwargs.items() if k not in given}
            saved, tuner.configs = tuner.configs, [pinned]
            try:
                return original(tuner, *args, **kwargs)
            finally:
                tuner.configs = saved
        return run

    def _heuristics_run(self, original):
        injected = self

        def run(level, *args, **kwargs):
            # Under an autotuner the pinned config carries the values: passing them here too
            # would give them twice.
            under_tuner = autotuner(level.fn) is not None
            if injected._mine(level) and not under_tuner:
                args, kwargs = placed(level.arg_names, args, kwargs, injected.config)
            return original(level, *args, **kwargs)
        return run

    def _wrapper_run(self, original):
        injected = self

        def run(wrapper, *args, **kwargs):
            # a library's launch cache would replay what it made for another config
            if injected._mine(wrapper):
                return wrapper.fn.run(*args, **kwargs)
            return original(wrapper, *args, **kwargs)
        return run

    def _run(self, cls, original):
        make = self._autotuner_run if cls is Autotuner else \
            self._heuristics_run if cls is Heuristics else \
            self._jit_run if cls in JIT_CLASSES else self._wrapper_run
        return make(original)

    def __enter__(self):
        self.hooks = hooked_runs(self._run, JIT_CLASSES + (Autotuner, Heuristics) +
                                 library_wrappers(self.loaded.kernel))
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)


def call_arguments(loaded, inputs, shape, function=None):
    """launch.call's arguments over `inputs` and `shape`, for `function` (default: the task's):
    a config object (`NormConfig(eps=1e-06)`) is made among the names of its module."""
    names = getattr(inspect.unwrap(function or loaded.funcs["call"]), "__globals__", {})
    return _arguments(loaded, {**names, **_launch_env(**shape, **inputs)})


@contextlib.contextmanager
def calling(inputs):
    """Where the file's own function runs: inputs that take gradients reach it as an autograd
    Function's forward gets them, with gradients off (no graph to build, and `out=` operations
    refuse one); without a GPU, a function that asks for the device gets the stand-in."""
    grads = any(isinstance(v, torch.Tensor) and v.requires_grad for v in inputs.values())
    with standin.active(), torch.set_grad_enabled(not grads and torch.is_grad_enabled()):
        yield


def _call(loaded, inputs, config, shape, injected=None):
    """The file's own function called on `inputs` with `config` in its kernel's launches;
    returns its return value."""
    args, kwargs = call_arguments(loaded, inputs, shape)
    injected = injected or _injected(loaded, config)
    # a grid may count blocks of what the function takes but the kernel does not (max_seqlen)
    injected.call_values = {k: v for k, v in kwargs.items()
                            if isinstance(v, int) and not isinstance(v, bool)}
    with calling(inputs), injected:
        return _called(loaded.spec, loaded.funcs["call"], args, kwargs, "launch.args",
                       f"the arguments {loaded.spec['launch']['call']} takes")


def bind(loaded, inputs, config, shape):
    """The launch of the kernel with `config` on `inputs`, its grid and arguments evaluated once:
    each call of the returned function launches it (no synchronisation). Through the file's own
    function, that function runs once here, and the returned function replays its launches of
    the kernel (its other work, such as allocating outputs, is not timed)."""
    spec = loaded.spec
    if "call" in spec["launch"]:
        injected = _injected(loaded, config)
        _call(loaded, inputs, config, shape, injected)
        launches = injected.launches
        if not launches:
            raise TaskError([f"{spec['id']}: launch.call: {spec['launch']['call']} did not "
                             f"launch kernel '{spec['kernel']}' at shape {shape}"])

        def replay():
            for inner, args, kwargs, grid in launches:
                inner(*args, grid=grid, warmup=False, **kwargs)
        return replay
    if "wrapper" in spec["launch"]:
        pinned = _pinned(loaded.kernel, config, _fixed_values(loaded))
        wrapper, cfg = loaded.funcs["wrapper"], dict(config)

        def call():
            with pinned:
                return _called(spec, wrapper, (inputs, cfg), {}, "launch.wrapper",
                               "a function called as function(inputs, config)")
        return call
    env = _launch_env(**shape, **inputs, **config)
    grid_code = _launch_code(loaded)[0]
    grid = _grid(spec, _evaluate(spec, "launch.grid", spec["launch"]["grid"], grid_code, env))
    args, fixed = _arguments(loaded, env)
    # what the launch passes itself is the value a config setting it lacks
    pinned = _pinned(loaded.kernel, config, {**_fixed_values(loaded), **fixed})
    if autotuner(loaded.kernel) is not None:
        # the pinned config carries the rest, and what it sets is not passed twice
        kwargs = {k: v for k, v in fixed.items() if k not in pinned.config.kwargs}
    else:
        params = [n for n, *_ in kernel_params(loaded.kernel)]
        known = set(params) | set(LAUNCH_OPTIONS)
        # a constexpr the task's launch.args gives positionally takes the config's value there
        args, kwargs = placed(params, args, fixed,
                              {k: v for k, v in config.items() if k in known})
    # launched below a library's wrappers, whose launch cache would keep another config
    kernel = next(k for k in layers(loaded.kernel) if not isinstance(k, library_wrappers(
        loaded.kernel)))[grid]

    def call():
        with pinned:
            return kernel(*args, **kwargs)
    return call


def launch(loaded, inputs, config, shape):
    """Launch the kernel once with `config` (no synchronisation). Returns what the file's own
    function returned (launch.call), else None."""
    if "call" in loaded.spec["launch"]:
        return _call(loaded, inputs, config, shape)
    bind(loaded, inputs, config, shape)()
    return None


def classify(exc):
    """A candidate's exception as a status: compile (the compiler refused it or it needs more
    resources than the GPU has) or runtime. `fatal` says the CUDA context is probably lost.
    Under the interpreter, a failure that only its gaps cause starts "interpreter gap:"."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, AssertionError):
        text = f"{_assertion(exc)}: {exc}" if str(exc) else _assertion(exc)
    if isinstance(exc, CompilationError):
        text = f"{_compile_reason(exc)}\n{text}"
    # a pass of Triton's MLIR pipeline that gives up is the compiler refusing the candidate
    refused = isinstance(exc, RuntimeError) and "PassManager::run failed" in str(exc)
    status = "compile" if refused or isinstance(exc, (CompilationError, OutOfResources,
                                                        PTXASError)) else "runtime"
    gap = interpreter_gap(exc)
    if gap is not None:
        text = f"{gap}. {text}"
    fatal = type(exc).__name__ == "AcceleratorError" or "CUDA error" in text
    return {"status": status, "message": text[:_MESSAGE_LIMIT], "fatal": fatal}


def _library_dirs():
    import sysconfig
    dirs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs |= {os.path.dirname(os.path.abspath(m.__file__)) for m in (torch, triton)}
    dirs.add(os.path.dirname(os.path.abspath(__file__)))
    return tuple(sorted(dirs))


def _assertion(exc):
    """"AssertionError at FILE:LINE: STATEMENT" for the innermost assert of the user's code
    (a wrapper checking its inputs), the whole statement however many lines it spans."""
    import ast
    import linecache
    library = _library_dirs()
    where = last = None
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if os.path.isfile(name):
            last = (name, tb.tb_lineno)
            if not os.path.abspath(name).startswith(library):
                where = last
        tb = tb.tb_next
    where = where or last  # a user's package installed among the libraries
    if where is None:
        return "AssertionError"
    name, line = where
    source = "".join(linecache.getlines(name))
    statement = linecache.getline(name, line).strip()
    try:
        node = next((n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert) and
                     n.lineno <= line <= (n.end_lineno or n.lineno)), None)
        if node is not None:
            statement = " ".join(ast.get_source_segment(source, node).split())
    except (SyntaxError, ValueError):  # a file changed since: its line as it reads now
        pass
    return f"AssertionError at {name}:{line}: {statement}"


def _compile_reason(exc):
    """A compile error's reason and where, first: Triton puts it after a dozen lines of source,
    past what a measurement's message keeps. Errors in helpers come wrapped, the reason in the
    innermost."""
    while isinstance(exc, CompilationError) and not exc.error_message and \
            exc.__cause__ is not None:
        exc = exc.__cause__
    if not isinstance(exc, CompilationError):
        return f"CompilationError: {type(exc).__name__}: {exc}"
    line = getattr(exc.node, "lineno", None)
    code = exc.src.split("\n")[line - 1].strip() if exc.src and line else ""
    fn = re.search(r"def\s+(\w+)", exc.src or "")
    where = f" at line {line} of {fn.group(1) if fn else 'the kernel'} ({code[:80]})" \
        if line else ""
    return f"CompilationError{where}: {exc.error_message or 'refused'}"


# A quiet NaN with a payload of its own, per float type (as the bits of the integer type of its
# width): what a kernel computes is the canonical NaN, so an element still holding this one is
# one nothing wrote. The 8-bit float types have no NaN payload to spare: their NaN then.
_POISON_BITS = {torch.float16: (torch.int16, 0x7EA5), torch.bfloat16: (torch.int16, 0x7FA5),
                torch.float32: (torch.int32, 0x7FD5A5A5),
                torch.float64: (torch.int64, 0x7FFA5A5A5A5A5A5A)}


def _poison(t):
    t = t.detach()  # the same memory; an input that takes gradients refuses in-place writes
    if t.dtype in _POISON_BITS:
        view, bits = _POISON_BITS[t.dtype]
        t.view(view).fill_(bits)
    elif t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype != torch.bool:
        # The most negative value: a kernel that forgets to store leaves an absurd number.
        t.fill_(torch.iinfo(t.dtype).min if t.dtype != torch.uint8 else 0xA5)


def poisoned_elements(t):
    """Where `t` still holds what `_poison` put there (a bool tensor: nowhere)."""
    if t.dtype in _POISON_BITS:
        view, bits = _POISON_BITS[t.dtype]
        return t.view(view) == bits
    if t.dtype.is_floating_point:
        return torch.isnan(t)
    if t.dtype == torch.bool:
        return torch.zeros_like(t)
    return t == (torch.iinfo(t.dtype).min if t.dtype != torch.uint8 else 0xA5)


def _returned(loaded, value):
    """The tensors the file's own function returned, by the names of launch.returns."""
    spec = loaded.spec
    names = spec["launch"].get("returns") or []
    if not names:
        return {}
    values = [value] if len(names) == 1 and not isinstance(value, (tuple, list)) else value
    if not isinstance(values, (tuple, list)) or len(values) < len(names):
        raise TaskError([f"{spec['id']}: launch.returns: expected {spec['launch']['call']} to "
                         f"return {len(names)} value(s) ({', '.join(map(str, names))}), got "
                         f"{type(value).__name__}"])
    return {n: v for n, v in zip(names, values) if n}


class _poisoned_allocations:
    """Tensors the file's own function allocates with torch.empty* start as NaN (or the most
    negative integer): a kernel that leaves part of its output unwritten then fails the check
    instead of passing on the memory of an earlier run."""

    _NAMES = ("empty", "empty_like", "empty_strided")

    def __enter__(self):
        self.saved = {n: getattr(torch, n) for n in self._NAMES}
        self.saved_new = torch.Tensor.new_empty
        for n, fn in self.saved.items():
            setattr(torch, n, self._poisoning(fn))
        torch.Tensor.new_empty = self._poisoning(self.saved_new)

    @staticmethod
    def _poisoning(fn):
        def allocate(*args, **kwargs):
            t = fn(*args, **kwargs)
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                _poison(t)
            return t
        return allocate

    def __exit__(self, *exc):
        for n, fn in self.saved.items():
            setattr(torch, n, fn)
        torch.Tensor.new_empty = self.saved_new


def _outputs(loaded, inputs, returned):
    spec = loaded.spec
    got = dict(inputs, **_returned(loaded, returned))
    missing = [o["name"] for o in spec["outputs"] if not isinstance(got.get(o["name"]),
                                                                    torch.Tensor)]
    if missing:
        raise TaskError([f"{spec['id']}: outputs: {', '.join(missing)} did not come back as "
                         "tensors"])
    return got


def _reference(loaded, inputs, shape):
    """The expected outputs: the reference function's, or (reference "baseline") the launch's
    with the shape's first baseline config, on its own copy of the inputs."""
    spec = loaded.spec
    names = [o["name"] for o in spec["outputs"]]
    if spec["reference"] == "baseline":
        copies = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        # poisoned as the candidate's are: what the baseline leaves unwritten (rows past a
        # length, splits a short sequence does not reach) is then known, and not compared
        for o in spec["outputs"]:
            if o["poison"] and isinstance(copies.get(o["name"]), torch.Tensor):
                _poison(copies[o["name"]])
        config = _baselines_at(loaded, shape)[0]
        try:  # the kernel as the file has it, whatever variant is being checked
            with _poisoned_allocations(), variants.suspended():
                got = _outputs(loaded, copies, launch(loaded, copies, config, shape))
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        except TaskError:
            raise
        except Exception as e:
            raise TaskError([f"{spec['id']}: reference: the baseline {config} (the reference) "
                             f"failed: {classify(e)['message']}"]) from e
        return {n: got[n] for n in names}
    try:
        got = loaded.funcs["reference"](inputs)
    except Exception as e:
        raise TaskError([f"{spec['id']}: reference: {spec['reference']} failed: "
                         f"{type(e).__name__}: {e}"]) from e
    if isinstance(got, torch.Tensor):
        got = [got]
    if isinstance(got, (list, tuple)) and len(got) == len(names):
        got = dict(zip(names, got))
    if not isinstance(got, dict) or any(not isinstance(got.get(n), torch.Tensor) for n in names):
        raise TaskError([f"{spec['id']}: reference: expected {spec['reference']} to return a "
                         f"tensor per output ({', '.join(names)}) as a dict, a tuple or a tensor"])
    return got


def _check_reference_shapes(loaded, expected, outputs):
    """What the kernel writes is the task's shape: the reference must match it."""
    spec = loaded.spec
    for o in spec["outputs"]:
        n = o["name"]
        want, have = outputs[n], expected[n]
        if tuple(have.shape) != tuple(want.shape) or \
                have.dtype.is_floating_point != want.dtype.is_floating_point:
            raise TaskError([f"{spec['id']}: reference: {spec['reference']} returned {n} as "
                             f"{have.dtype} {tuple(have.shape)}, the output is {want.dtype} "
                             f"{tuple(want.shape)}"])


def compare(actual, expected, atol, rtol, written=None):
    """{max_abs_err, bad, nonfinite, compared}: an element passes when |a - e| <= atol + rtol *
    |e| or a == e (infinities); NaN never passes. Only the elements `written` (a bool tensor)
    holds are compared, when given: those the reference wrote."""
    if actual.shape != expected.shape:
        return {"max_abs_err": None, "bad": actual.numel(), "nonfinite": 0, "compared": 0,
                "shape": f"expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"}
    # float32 holds every value of the narrower float types; integers and float64 need float64.
    narrow = all(t.is_floating_point and t.itemsize <= 4 for t in (actual.dtype, expected.dtype))
    work = torch.float32 if narrow else torch.float64
    a = actual.detach().to(work)
    e = expected.detach().to(device=a.device, dtype=work)
    if written is not None:
        written = written.to(a.device)
        a, e = a[written], e[written]
    err = (a - e).abs()
    ok = (err <= atol + rtol * e.abs()) | (a == e)
    finite = torch.isfinite(err)
    return {"max_abs_err": float(err[finite].max()) if bool(finite.any()) else None,
            "bad": int((~ok).sum()), "nonfinite": int((~torch.isfinite(a)).sum()),
            "compared": a.numel()}


def _interpreting():
    return triton.knobs.runtime.interpret


def expected_outputs(loaded, inputs, shape):
    """The reference's outputs on `inputs` (on copies of them when the kernel writes its
    inputs), then the outputs among `inputs` poisoned for the run to be checked."""
    spec = loaded.spec
    ref_inputs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()} \
        if spec["writes_inputs"] else inputs
    expected = _reference(loaded, ref_inputs, shape)
    for o in spec["outputs"]:
        if o["poison"] and o["name"] in inputs:
            _poison(inputs[o["name"]])
    return expected


def outputs_of(loaded, inputs, run):
    """The task's outputs after `run()` (a launch; what it returns is the file's function's
    return value), what it allocates poisoned first, the GPU synchronised."""
    with _poisoned_allocations():
        returned = run()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return _outputs(loaded, inputs, returned)


def judged(loaded, actual, expected):
    """A run's outputs against the reference's: {status: ok|wrong, message, max_abs_err,
    bad, compared, elements, fatal} (run_check's), each output compared where the reference
    wrote it."""
    spec = loaded.spec
    _check_reference_shapes(loaded, expected, actual)
    result = {"status": "ok", "message": "", "fatal": False, "max_abs_err": {}, "bad": {},
              "compared": {}, "elements": {}}
    problems, partial = [], []
    for o in spec["outputs"]:
        n = o["name"]
        total = actual[n].numel()
        # where the reference left its poison, it wrote nothing: a kernel that writes only the
        # rows or splits a length reaches is compared there alone
        written = ~poisoned_elements(expected[n]) if o["poison"] and \
            expected[n].shape == actual[n].shape else None
        c = compare(actual[n], expected[n], o["atol"], o["rtol"], written)
        result["max_abs_err"][n] = c["max_abs_err"]
        result["bad"][n] = c["bad"]
        result["compared"][n] = c["compared"]
        result["elements"][n] = total
        if total and not c["compared"] and not c.get("shape"):
            problems.append(f"{n}: the reference ({spec['reference']}) wrote none of its "
                            f"{total} elements")
        elif c["bad"]:
            of = f"{total} elements" if c["compared"] == total else \
                f"{c['compared']} compared elements (of {total}; the rest the reference " \
                "did not write)"
            why = c.get("shape") or (f"{c['bad']} of {of} outside atol={o['atol']} "
                                     f"rtol={o['rtol']} (max abs err {c['max_abs_err']}, "
                                     f"{c['nonfinite']} not finite)")
            problems.append(f"{n}: {why}")
        elif c["compared"] < total:
            partial.append(f"{n}: compared the {c['compared']} of {total} elements the reference "
                           "wrote")
    if problems:
        result["status"] = "wrong"
    result["message"] = "; ".join(problems + partial)
    return result


def taking_variant(request):
    """`request(task, config, shape, ...)` gains `variant=None` and `digest=None`: the kernel
    file's rewritten text and the engine's digest of it (the digest alone for a variant this
    worker was sent before), active while the request runs. A variant that does not load is a
    failed compile. It gains `dtype=None` too: one of the task's dtypes, its floating inputs'."""
    @functools.wraps(request)
    def run(task, config, shape, *args, variant=None, digest=None, dtype=None, **kwargs):
        if dtype is not None:  # the task with its floating inputs in `dtype`
            task = get(task, dtype)
        if variant is None and digest is None:
            return request(task, config, shape, *args, **kwargs)
        try:
            text = variants.source_of(variant, digest)
            with variants.active(get(task), text, digest):
                return request(task, config, shape, *args, **kwargs)
        except variants.VariantError as e:
            return {"status": "compile", "fatal": False, "message": str(e)}
    return run


# The second draw of a check run in both orders: its own inputs, never the first's.
_REVERSED_SEED = 0x9E3779B97F4A7C15


@taking_variant
def run_check(task, config, shape, seed=0, both_orders=False):
    """Run `config` once on fresh inputs for `shape` and compare with the reference.
    Returns {status: ok|wrong|runtime|compile|unsupported, message, max_abs_err: {output: x},
    bad: {output: n}, compared: {output: elements compared}, elements: {output: its size},
    fatal}; an output compared in part (what the reference left unwritten is not) is said in
    the message, whatever the status. With `both_orders` (a model's proposal), once it passes it
    runs again on other fresh inputs, the candidate first and the reference after: a candidate
    that answers from what an earlier run left (a cached output) or that the reference's run
    prepared for it fails one order or the other; the message says which."""
    loaded = get(task)
    if not torch.cuda.is_available() and not _interpreting():
        return {"status": "unsupported", "fatal": False,
                "message": "no CUDA device and TRITON_INTERPRET is not set"}
    inputs = make_inputs(loaded, shape, seed)
    expected = expected_outputs(loaded, inputs, shape)
    try:
        actual = outputs_of(loaded, inputs, lambda: launch(loaded, inputs, config, shape))
    except TaskError:
        raise
    except Exception as e:
        return classify(e)
    first = judged(loaded, actual, expected)
    if not both_orders or first["status"] != "ok":
        return first
    return _candidate_first(loaded, config, shape, (seed ^ _REVERSED_SEED) & (2**63 - 1))


def _candidate_first(loaded, config, shape, seed):
    """The check's second order: the candidate on fresh inputs, then the reference on an
    untouched copy of them."""
    inputs = make_inputs(loaded, shape, seed)
    pristine = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    for o in loaded.spec["outputs"]:
        if o["poison"] and isinstance(inputs.get(o["name"]), torch.Tensor):
            _poison(inputs[o["name"]])
    try:
        actual = outputs_of(loaded, inputs, lambda: launch(loaded, inputs, config, shape))
    except TaskError:
        raise
    except Exception as e:
        return classify(e)
    result = judged(loaded, actual, _reference(loaded, pristine, shape))
    if result["status"] != "ok":
        result["message"] = "run before the reference, on other fresh inputs: " + \
            result["message"]
    return result


def check_task(path, config=None, variant=None):
    """Validate a task and run its first baseline (or `config`) once at its first check shape (on
    the GPU, else in the interpreter), the kernel file's `variant` in place of the kernel when
    given. Returns {status, message, config, shape, where, warnings}. A task this worker loaded
    before is not loaded again."""
    spec = get(path).spec
    shape = spec["shapes"]["check"][0]
    config = config if config is not None else _baselines_at(get(spec), shape)[0]
    result = run_check(spec, config, shape, seed=1, variant=variant)
    where = "GPU" if torch.cuda.is_available() else "Triton's CPU interpreter"
    return {"status": result["status"], "message": result["message"], "config": config,
            "shape": shape, "where": where, "warnings": spec["warnings"],
            **{k: result[k] for k in ("compared", "elements") if k in result}}
