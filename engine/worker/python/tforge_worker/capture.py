"""Launch capture: run a user's own code once and turn every Triton kernel launch into a task.

`capture(argv, out)` runs a script (as `python SCRIPT.py ARGS...` would, or `-m module`), and
`init(path, out)` runs a kernel file's own `__main__` block, or else its `test_*` functions.
Without a GPU the worker runs them in Triton's interpreter (TRITON_INTERPRET=1, set by the
engine before Python starts: triton.language's own helpers are decided at import).
While they run, every launch of a @triton.jit function is recorded at the class level (grid,
arguments, constexprs, launch options), with the innermost function of the user's code that led
to it and the arguments that function was called with (a profile hook records the calls of
functions in the user's files). Each kernel and shape becomes one task.json (engine/task/
TASK.md) that a user can read and edit:
- launch: through that function (`launch.call`; the module's attribute, decorators included)
  when its arguments are tensors, plain values and config objects of its module and the kernel
  writes one of them or of what it returns, with the grid recomputed from the kernel's
  arguments when the function computed it from block sizes it hard-codes; otherwise the kernel
  itself with the recorded grid as an expression, every value on its parameter. The grid is the
  function's own text rewritten over the kernel's arguments where it gives the recorded values,
  else found by matching values against block counts of the blocks the program ids are
  multiplied by (_grid_formula); a tuned block the grid counts that neither recomputes is fixed;
- inputs: the function's (or kernel's) tensors, their sizes named by shape symbols; integer
  tensors drawn in the recorded range, below the size they index, or, where random values
  would break the kernel (lengths, offsets, tables and slots into a larger pool), kept as
  recorded (the task then checks at its tune shape: the values fix the sizes they index);
- outputs: what the function returns, and tensors the kernel writes (found by comparing them
  before and after the launch, and from the stores in the kernel's code: values an autotuner's
  benchmark wrote first, or an in-place update to the same values; one it also reads is marked
  `poison: false`);
- reference: the user's function given with `reference`, else the kernel's own output with the
  recorded config (`"baseline"`);
- baseline: the recorded config; space: inferred by the static analysis (analyze.py);
- shapes: the recorded sizes to tune, smaller ones of the same alignment to check.
Each written task is loaded and checked once at its check shape; the result is reported, with
what was inferred and why (`explain`: [{what, why, line}]: the launcher and where it is, the
grid, what is tuned and what is fixed with the kernel's line, the check shape).
A launching function in another folder than the kernel is named by the module it was imported
as (dotted, in a package) and the task's `python_path` gets the folder that import starts from.
Without a GPU the user's code runs with the stand-in device (standin.py), as the tasks do; a
failure that stems from what the interpreter lacks is reported as an interpreter gap, at the
user's line (`error_kind`, `gap`, `error_at`).
"""

import ast
import inspect
import json
import math
import os
import re
import runpy
import sys
import sysconfig
import traceback

import torch
import triton
from triton.runtime.autotuner import Autotuner

from . import analyze as analysis
from . import gaps, loader, standin
from .task import DTYPES, FLOAT_DTYPES, LAUNCH_OPTIONS, python_names, substitute
from .kernels import hooked_runs, layers, unwrap
from .worker import _poison, load_task, poisoned_elements, run_check

_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-4, "float64": 1e-8,
              "float8_e4m3fn": 1.25e-1, "float8_e5m2": 2.5e-1}
_CHECK_ELEMENTS = 1 << 18  # the largest tensor at a check shape (the interpreter is slow)
_CHECK_ELEMENTS_GPU = 1 << 22  # the same where capture runs on a GPU
_SNAPSHOT_BYTES = 1 << 28  # tensors compared before and after a launch, at most


def _library_dirs():
    dirs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")}
    for mod in (torch, triton, json):
        dirs.add(os.path.dirname(os.path.abspath(mod.__file__)))
    dirs.add(os.path.dirname(os.path.abspath(__file__)))
    return tuple(sorted(dirs))


class _Recorder:
    """Records kernel launches and the user-code calls that led to them."""

    def __init__(self):
        self.launches = []
        self.stack = []  # [frame, arguments, launches made] of user functions being run
        self.library = _library_dirs()
        self.user = {}
        self.irs = {}  # kernel file -> its static analysis (what each kernel stores to)

    def _is_user(self, filename):
        known = self.user.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            known = os.path.isfile(path) and not path.startswith(self.library)
            self.user[filename] = known
        return known

    def profile(self, frame, event, arg):
        if event == "call" and self._is_user(frame.f_code.co_filename):
            info = inspect.getargvalues(frame)
            names = list(info.args) + [n for n in (info.varargs, info.keywords) if n]
            self.stack.append([frame, {n: frame.f_locals.get(n) for n in names}, None])
        elif event == "return" and self.stack and self.stack[-1][0] is frame:
            _, _, launched = self.stack.pop()
            for entry in launched or ():
                entry["returned"] = _describe_value(arg)
                entry["returned_ids"] = _tensor_ids(arg)

    def caller(self):
        """The innermost user function that can be called again by name: module level, the
        module's attribute possibly a decorator's wrapper of it (not a method: an autograd
        Function's forward takes a ctx, a Module's forward its instance)."""
        for frame, args, _ in reversed(self.stack):
            code = frame.f_code
            qual = getattr(code, "co_qualname", code.co_name)
            if "<" in qual or "." in qual or code.co_name.startswith("_tforge"):
                continue
            if _defined_as(frame.f_globals.get(code.co_name), code):
                return frame, args
        return None, None

    def site(self):
        """FILE:LINE of the user's code that launched the kernel being recorded."""
        f = sys._getframe(2)
        while f is not None and not self._is_user(f.f_code.co_filename):
            f = f.f_back
        return f"{os.path.abspath(f.f_code.co_filename)}:{f.f_lineno}" if f else None

    def record(self, fn, args, kwargs, grid):
        params = list(inspect.signature(fn.fn).parameters.values())
        bound = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
        bound.update(zip((p.name for p in params), args))
        bound.update({k: v for k, v in kwargs.items() if k not in LAUNCH_OPTIONS})
        options = {k: kwargs[k] for k in LAUNCH_OPTIONS if k in kwargs and kwargs[k] is not None}
        grid_callable = callable(grid)
        grid_value = grid(dict(bound, **options)) if grid_callable else grid
        grid_value = tuple(grid_value) if isinstance(grid_value, (tuple, list)) else (grid_value,)
        frame, call_args = self.caller()
        entry = {
            "kernel": fn.__name__, "file": os.path.abspath(fn.fn.__code__.co_filename),
            "params": [{"name": p.name, "constexpr": _is_constexpr(p)} for p in params],
            "args": {n: _describe_value(v) for n, v in bound.items()},
            "options": options, "grid": [int(g) for g in grid_value],
            "grid_callable": grid_callable, "caller": None, "written": [], "read_back": {},
            "config_keys": _config_keys(fn),
        }
        entry["site"] = self.site()
        if frame is not None:
            entry["caller"] = {"name": frame.f_code.co_name, "line": frame.f_code.co_firstlineno,
                               "file": os.path.abspath(frame.f_code.co_filename),
                               "args": {n: _described_in(frame, v) for n, v in call_args.items()},
                               "arg_ids": {n: _tensor_ids(v) for n, v in call_args.items()},
                               "params": _signature(frame)}
            for item in self.stack:
                if item[0] is frame:
                    item[2] = (item[2] or []) + [entry]
        entry["ids"] = {n: v.data_ptr() for n, v in bound.items() if isinstance(v, torch.Tensor)}
        before = {n: v.detach().clone() for n, v in bound.items()
                  if isinstance(v, torch.Tensor) and v.numel() * v.element_size() <=
                  _SNAPSHOT_BYTES}
        self.launches.append(entry)
        return entry, bound, before

    def written(self, entry, bound, before, replay):
        """The tensors the launch wrote (entry["written"]) and whether their earlier values
        were read (entry["read_back"]). A tensor that holds the same values after the launch
        may still be written: an autotuner's benchmark runs wrote them first, or an in-place
        update left them as they were (a gradient times 1). Those the kernel's code stores to
        count too: one it also loads is written in place (its values are read back); one it
        only stores to is found by `replay(poisoned)`, the launch run again on copies with
        those tensors poisoned, so that a store a flag turns off is no output."""
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        for n, old in before.items():
            if not _same_bits(old, bound[n]):
                entry["written"].append(n)
        entry["read_back"] = {n: bool(before[n].abs().sum() != 0) if before[n].dtype != torch.bool
                              else bool(before[n].any()) for n in entry["written"]}
        params = {p["name"]: p for p in self._ir(entry).get("params", [])}
        unseen = [n for n, v in bound.items() if isinstance(v, torch.Tensor) and
                  n not in entry["written"] and params.get(n, {}).get("stored")]
        for n in unseen:
            # in place, or too large to snapshot and copy: the kernel's code is the word
            if not params[n].get("written_only") or n not in before:
                entry["written"].append(n)
                entry["read_back"][n] = not params[n].get("written_only")
        poisoned = [n for n in unseen if n in before and params[n].get("written_only") and
                    before[n].dtype != torch.bool]
        if poisoned:
            for n, t in replay(poisoned).items():
                if bool((~poisoned_elements(t)).any()):
                    entry["written"].append(n)
                    entry["read_back"][n] = False

    def _ir(self, entry):
        """The analysis of the launched kernel ({} when its file cannot be analysed), without
        the profile hook (the analysis is no user code)."""
        profile = sys.getprofile()
        sys.setprofile(None)
        try:
            return _kernel_ir(entry["file"], entry["kernel"], self.irs) or {}
        finally:
            sys.setprofile(profile)


_BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _same_bits(old, new):
    """Whether a tensor holds what it held: bit for bit, so that the NaNs `torch.empty` may
    leave in memory the kernel does not touch compare equal."""
    if old.dtype == torch.bool:
        return bool((old == new).all())
    if old.is_floating_point() and old.element_size() in _BITS:
        view = _BITS[old.element_size()]
        return torch.equal(old.view(view), new.view(view))
    return torch.equal(old, new)


def _described_in(frame, v):
    """An argument of the launching function; a config object only where its class is a name
    of the function's module (the task's call evaluates it there)."""
    d = _describe_value(v)
    if "object" in d and frame.f_globals.get(type(v).__name__) is not type(v):
        return {"opaque": type(v).__name__}
    return d


def _defined_as(fn, code):
    """Whether the module attribute `fn` runs `code`: itself, or through decorators that keep
    what they wrap (`functools.wraps`: `@torch.no_grad()`, `@torch.inference_mode()`,
    `torch.compiler.disable`, a file's own `ensure_contiguous`). Calling the attribute then
    applies the decorators as the user's call did."""
    seen = set()
    while fn is not None and id(fn) not in seen:
        if getattr(fn, "__code__", None) is code:
            return True
        seen.add(id(fn))
        fn = getattr(fn, "__wrapped__", None) or getattr(fn, "_torchdynamo_orig_callable", None)
    return False


def _config_keys(fn):
    """The constexprs the autotuner over `fn` (as its module binds it) sets in its configs: a
    pinned config must set them all, those the space does not tune included."""
    outer = getattr(fn.fn, "__globals__", {}).get(fn.fn.__name__)
    if outer is None or unwrap(outer) is not fn:
        return []
    return sorted({k for t in layers(outer) if isinstance(t, Autotuner)
                   for c in t.configs for k in c.kwargs})


def _is_constexpr(p):
    ann = p.annotation
    return ann is triton.language.constexpr or (isinstance(ann, str) and
                                                ann.endswith("constexpr"))


def _signature(frame):
    code = frame.f_code
    fn = frame.f_globals.get(code.co_name)
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [{"name": p.name, "kind": p.kind.name,
             "default": _describe_value(p.default) if p.default is not p.empty else None,
             "has_default": p.default is not p.empty} for p in params]


def _tensor_ids(v):
    if isinstance(v, torch.Tensor):
        return [v.data_ptr()]
    if isinstance(v, (tuple, list)):
        return [i for x in v for i in (_tensor_ids(x) if isinstance(x, torch.Tensor) else [None])]
    return []


def _describe_value(v):
    """A value as capture keeps it: tensors by shape, dtype, strides and value range."""
    if isinstance(v, torch.Tensor):
        d = {"tensor": True, "shape": list(v.shape), "dtype": str(v.dtype).split(".")[-1],
             "stride": list(v.stride()), "contiguous": v.is_contiguous()}
        if v.requires_grad:  # a function may return more when a weight is trained
            d["requires_grad"] = True
        if not v.is_floating_point() and v.numel():
            d["min"], d["max"] = int(v.min()), int(v.max())
            if d["min"] < 0 <= d["max"]:  # a sentinel (ignore_index -100, padding -1)?
                d["negatives"] = v[v < 0].unique().numel()
            if v.dtype != torch.bool and v.numel() <= _KEPT_VALUES:
                # what an index or a length holds, should a random stand-in not do (_kept)
                d["values"] = v.detach().flatten().to("cpu", torch.int64)
                d["sorted"] = v.dim() == 1 and v.numel() >= 2 and bool((v[1:] >= v[:-1]).all())
        return d
    if isinstance(v, torch.dtype):
        return {"dtype_value": str(v)}
    if isinstance(v, (tuple, list)):
        return {"sequence": [_describe_value(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"value": v}
    if isinstance(v, triton.language.constexpr):
        return _describe_value(v.value)
    if isinstance(v, triton.language.dtype):  # a dtype constexpr (`X_dtype=tl.float32`)
        name = repr(v).rsplit(".", 1)[-1]
        if getattr(triton.language, name, None) == v:
            return {"tl_dtype": name}
    return _describe_object(v) or {"opaque": type(v).__name__}


def _describe_object(v):
    """A config object as the expression that makes it again, where its class is a name of its
    module: a dataclass of plain fields (`NormConfig(eps=1e-06)`), an enum member
    (`Activation.GELU`). launch.call evaluates it among the names of the function's module."""
    import dataclasses
    import enum
    cls = type(v)
    if isinstance(v, enum.Enum):
        return {"object": f"{cls.__name__}.{v.name}"}
    if dataclasses.is_dataclass(v):
        fields = []
        for f in dataclasses.fields(v):
            if not f.init:
                continue
            text = _literal(_describe_value(getattr(v, f.name)))
            if text is None:
                return None
            fields.append(f"{f.name}={text}")
        return {"object": f"{cls.__name__}({', '.join(fields)})"}
    return None


class _installed:
    """The recorder, hooked into every jit function's launch and into the profiler."""

    def __init__(self, recorder):
        self.recorder = recorder

    def __enter__(self):
        rec = self.recorder

        def recording(cls, original):
            def run(fn, *args, grid, warmup, **kwargs):
                if warmup:
                    return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
                entry, bound, before = rec.record(fn, args, kwargs, grid)
                try:
                    out = original(fn, *args, grid=grid, warmup=warmup, **kwargs)
                except BaseException as e:
                    entry["failed"] = f"{type(e).__name__}: {e}"
                    raise

                def replay(poisoned):
                    """The launch again, every tensor a copy (the user's own are left as they
                    are), those named poisoned; returns those copies."""
                    names = [p["name"] for p in entry["params"]]
                    # what the kernel stores to is copied; what it only reads can be shared
                    stored = {p["name"] for p in rec._ir(entry).get("params", [])
                              if p.get("stored")}
                    copies = {n: v.clone() for n, v in bound.items()
                              if isinstance(v, torch.Tensor) and n in stored}
                    for n in poisoned:
                        _poison(copies[n])
                    again = [copies.get(n, a) for n, a in zip(names, args)]
                    again_kw = {k: copies.get(k, v) for k, v in kwargs.items()}
                    original(fn, *again, grid=grid, warmup=False, **again_kw)
                    if torch.cuda.is_available():
                        torch.cuda.synchronize()
                    return {n: copies[n] for n in poisoned}
                rec.written(entry, bound, before, replay)
                return out
            return run
        self.hooks = hooked_runs(recording)
        self.hooks.__enter__()
        self.profile = sys.getprofile()
        sys.setprofile(rec.profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self.profile)
        self.hooks.__exit__(*exc)


def _run_user_code(run):
    """Runs `run()` with the recorder; returns (recorder, error text or None)."""
    rec = _Recorder()
    error = None
    # the script may ask the GPU about itself or make tensors on "cuda" (as the kernel files
    # the tasks import may): without a GPU the stand-in device answers, as it does for them
    with _installed(rec), standin.active():
        try:
            run()
        except SystemExit as e:
            if e.code not in (None, 0):
                error = {"message": f"the script exited with status {e.code}", "kind": "script"}
                error.update(_gap_in_script(rec, None) or {})
        except BaseException as e:  # the user's code: whatever it raises is reported
            error = {"message": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}",
                     "kind": "script"}
            error.update(_gap_in_script(rec, e) or {})
    return rec, error


def _gap_in_script(rec, exc):
    """What Triton's interpreter lacks, when that is why the user's script failed: {kind:
    "interpreter_gap", gap: the sentence, at: FILE:LINE of the user's code}, else None."""
    gap = gaps.describe(exc) if exc is not None else None
    if gap is not None:
        gap = gap.removeprefix("interpreter gap: ").rsplit("; ", 1)[0]
    elif exc is None or isinstance(exc, AssertionError):
        # the script's own check (an assert, assert_close, a non-zero exit) of a result the
        # interpreter may have got wrong
        gap = gaps.bfloat16_suspect(rec.launches)
    if gap is None:
        return None
    where = gaps.user_frame(exc, rec._is_user) if exc is not None else None
    at = f"{os.path.abspath(where[0])}:{where[1]}" if where else None
    return {"kind": "interpreter_gap", "gap": gap, "at": at}


# ---- from launches to tasks -------------------------------------------------------------------

class _Symbols:
    """Shape symbols: one per distinct size, named after the kernel's integer argument of that
    value when there is one."""

    def __init__(self, scalar_names):
        self.by_value = {}
        self.scalar_names = scalar_names  # value -> parameter name

    def of(self, size):
        if size <= 1:
            return size
        if size not in self.by_value:
            name = self.scalar_names.get(size) or f"D{len(self.by_value)}"
            while name in self.by_value.values() or name in DTYPES:
                name += "_"
            self.by_value[size] = name
        return self.by_value[size]

    def tune_shape(self):
        return {n: v for v, n in self.by_value.items()}


def _check_size(v, keep):
    """A smaller size of the same power-of-two alignment (up to 128), at least about 96; sizes
    that equal a fixed constexpr (a head dimension) stay. It keeps the small odd factors of `v`
    too (3, 5, 7, 9): a wrapper may assert that a fused width splits (`% (3 * heads) == 0`)."""
    if v <= 128 or v in keep:
        return v
    g = math.gcd(v, 128)
    odd = math.gcd(v, 3 * 3 * 5 * 7)
    k = -(-96 // (g * odd))
    if g < 128 and k % 2 == 0:
        k += 1
    return min(v, g * odd * k)


def _check_shape(tune, tensors, keep):
    """The check shape: each size cut by _check_size, then the largest tensor brought under
    the element cap (the interpreter's, or a GPU's when capture runs on one) by halving sizes:
    first those that keep their power-of-two alignment (a wrapper may assert `N_CTX % 128`),
    then the least aligned (batch and head counts before sequence lengths)."""
    shape = {n: _check_size(v, keep) for n, v in tune.items()}
    cap = _CHECK_ELEMENTS if not torch.cuda.is_available() else _CHECK_ELEMENTS_GPU

    def largest():
        return max((math.prod(shape.get(d, d) if isinstance(d, str) else d for d in dims)
                    for dims in tensors), default=0)

    def halved(v):
        return max(16, v // 2) if v % 2 == 0 else max(15, v // 2 | 1)

    def order(n):
        align = math.gcd(tune[n], 128)
        return (halved(shape[n]) % align == 0, -align, shape[n])
    while largest() > cap:
        free = [n for n, v in shape.items() if v > 16 and v not in keep]
        if not free:
            break
        n = max(free, key=order)
        shape[n] = halved(shape[n])
    return shape


_KEPT_VALUES = 1 << 18  # the integers a task file keeps, at most (in all its inputs)


def _order(desc):
    """The dimensions from the outermost in memory to the innermost, when the tensor is a dense
    permutation other than row-major (a weight passed as `w.t()`, channels-last activations),
    else None. A dimension of size 1 goes where its stride puts it (channels-last at batch 1):
    a wrapper may assert the layout. Slices (a view into a fused qkv) are not kept: their task
    tensors are contiguous."""
    shape, stride = desc["shape"], desc.get("stride")
    if desc.get("contiguous", True) or not stride or len(shape) < 2 or min(shape) < 1:
        return None
    order = sorted(range(len(shape)), key=lambda d: -stride[d])
    expect = 1
    for d in reversed(order):
        if shape[d] == 1:
            continue
        if stride[d] != expect:
            return None
        expect *= shape[d]
    return order if order != sorted(order) else None


def _input_spec(name, desc, symbols, output_only):
    """A tensor of the task: floats drawn from randn, integers in their recorded range, a tensor
    the kernel only writes zeros. Integers that look like indices (labels, ids) are drawn where
    an index is valid: without the one or two negative sentinels (ignore_index) the range holds,
    since a value between a sentinel and 0 is no index at all; and below the size they index
    (`_index_bounds`), so that the smaller check shapes keep them in range. Integers whose
    values a random stand-in cannot be trusted with keep them (`_kept`): sorted offsets of a
    packed batch, lengths the kernel's loops or masks run to (`bounding`, from the analysis)."""
    dtype = desc["dtype"]
    recorded = "values" in desc and not output_only
    if recorded and (desc["sorted"] or desc.get("bounding")):
        return _values_spec(name, desc)
    spec = {"name": name, "shape": [symbols.of(d) for d in desc["shape"]], "dtype": dtype}
    if recorded:
        spec["_recorded"] = desc  # for _kept, dropped from the task
    order = _order(desc)
    if order:
        spec["order"] = order
    if output_only or (dtype not in FLOAT_DTYPES and "min" not in desc):
        spec["init"] = "zeros"
    elif dtype in FLOAT_DTYPES:
        spec["init"] = "randn"
    elif dtype == "bool":
        spec["init"] = "randint:0:2"
    else:
        lo = 0 if desc.get("negatives", 3) <= 2 else desc["min"]
        spec["init"] = f"randint:{lo}:{desc['max'] + 1}"
    if desc.get("requires_grad") and dtype in FLOAT_DTYPES and not output_only:
        spec["requires_grad"] = True
    return spec


def _values_spec(name, desc):
    return {"name": name, "shape": list(desc["shape"]), "dtype": desc["dtype"], "init": "values",
            "values": desc["values"]}


def _kept(inputs):
    """Integer inputs keep their recorded values where random ones would break the kernel:
    offsets and lengths (so from `_input_spec`), and indices whose range `_index_bounds` tied
    to no size of the shape (slots of a paged cache, blocks times their size; token ids padded
    with a sentinel; a request-to-token table): drawn between fixed numbers they point past a
    smaller check shape's tensors, and drawn at all they lose what the recording holds
    (distinct slots, the rows a length fills). At most _KEPT_VALUES numbers in all, offsets and
    lengths first; returns the names of those left random for want of room."""
    room = _KEPT_VALUES - sum(len(s["values"]) for s in inputs if s["init"] == "values")
    crowded = []
    for i, spec in enumerate(inputs):
        desc = spec.pop("_recorded", None)
        if spec["dtype"] == "bool" or not re.match(r"^randint:-?\d+:\d+$", spec["init"]):
            continue  # a valid index at every shape (bounded by a symbol), or no integer
        if desc is not None and len(desc["values"]) <= room:
            inputs[i] = _values_spec(spec["name"], desc)
            room -= len(desc["values"])
        else:
            crowded.append(spec["name"])
    for spec in inputs:
        if spec["init"] == "values" and isinstance(spec["values"], torch.Tensor):
            spec["values"] = spec["values"].tolist()
    return crowded


def _index_bounds(inputs, symbols):
    """An integer input drawn from [LO, HI) with HI above half of a size S of the shape and at
    most S indexes a dimension of size S: its bound becomes the symbol S."""
    for spec in inputs:
        m = re.match(r"^randint:(\d+):(\d+)$", spec["init"]) if spec["dtype"] != "bool" else None
        if not m:
            continue
        hi = int(m.group(2))
        sizes = [v for v in symbols.by_value if hi <= v < 2 * hi and hi > 1]
        if sizes:
            spec["init"] = f"randint:{m.group(1)}:{symbols.by_value[min(sizes)]}"


def _tolerance(dtype):
    tol = _TOLERANCE.get(dtype, 0)
    return {"atol": tol, "rtol": tol}


def _value_expr(v):
    """A plain value as a Python expression: `repr` but for the floats it writes as names
    (inf, nan), which no expression can read back."""
    if isinstance(v, float) and not math.isfinite(v):
        return f'float("{v}")'
    return repr(v)


def _literal(desc):
    """A captured plain value as a Python expression, or None."""
    if "value" in desc:
        return _value_expr(desc["value"])
    if "dtype_value" in desc:
        return desc["dtype_value"]
    if "tl_dtype" in desc:
        return f"tl.{desc['tl_dtype']}"
    if "object" in desc:
        return desc["object"]
    if "sequence" in desc:
        items = [_literal(d) for d in desc["sequence"]]
        return None if None in items else f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    return None


def _axis_blocks(ir):
    """Per grid axis, the blocks its program id is multiplied by (the analysis'), when known."""
    axes = {}
    for p in (ir or {}).get("program_ids", []):
        if "blocks" in p and p["axis"].isdigit():
            axes.setdefault(int(p["axis"]), set()).update(p["blocks"])
    return axes


class _GridAxes(dict):
    """Per grid axis, the blocks its dimension may count (a dict, as _axis_blocks), with what
    the launching function's own grid text says (_grid_axes): `given`, axis -> that dimension's
    text over the kernel's parameters (or the constexpr a split axis is, _split_axes);
    `values`, the launch's integer arguments and constexprs (to check a given text against the
    recorded grid); `by_name`, whether the task's grid can name a constexpr the space does not
    tune (a call launch: the function passes it); `depends`, the constexprs the grid is
    computed from that the launch does not recompute by itself; `constexprs`, the kernel's;
    `relates`, block -> the sizes its tiles are masked against."""

    def __init__(self, axes, given=None, values=None, by_name=False, depends=(),
                 constexprs=(), relates=None):
        super().__init__(axes)
        self.given, self.values = given or {}, values or {}
        self.by_name, self.depends = by_name, set(depends)
        self.constexprs, self.relates = set(constexprs), relates or {}


def _grid_axes(ir, entry, by_call):
    """_GridAxes for a launch: the analysis' program-id blocks per axis, narrowed by the grid
    the launching function writes (a tuple, a name bound to one, or a lambda returning one),
    where the analysis found that launch site: a dimension counts only the blocks its own text
    names (a head count equal to a block count is no block count), and its text, rewritten
    over the kernel's parameters, is taken as it is where it gives the recorded value. Without
    a site, the grid depends on the blocks the program ids are multiplied by, unless the
    function's own lambda recomputes it; with one, on those of them its text names."""
    axes = _axis_blocks(ir)
    caller, grid = entry.get("caller"), entry["grid"]

    def ints(args):
        return {n: d["value"] for n, d in args.items()
                if isinstance(d.get("value"), int) and not isinstance(d.get("value"), bool)}
    # a call launch's grid may name the function's own integer arguments (max_seqlen)
    outer = ints(caller["args"]) if by_call else {}
    values = {**outer, **ints(entry["args"])}
    sites = [st for st in (ir or {}).get("launch_sites", []) if caller and
             st["function"] == caller["name"] and caller["file"] == entry["file"]]
    params = [p["name"] for p in entry["params"]]
    constexprs = {p["name"] for p in entry["params"] if p["constexpr"]}
    parsed = [p for p in (_site_dims(st, entry["file"], params, axes, set(outer))
                          for st in sites)
              if p and len(p[0]) == len(grid)]
    splits = _split_axes(ir, grid, axes, {n: v for n, v in values.items() if n in constexprs})
    # the sizes each block's tiles are masked against: the size it counts, first
    relates = {t["name"]: set(t.get("relates_to", ())) for t in (ir or {}).get("tunables", [])}
    if len(parsed) != 1:
        depends = set() if by_call and entry["grid_callable"] else \
            {b for i, g in enumerate(grid) if g > 1 for b in axes.get(i, ())}
        return _GridAxes(axes, splits, values, by_call, depends, constexprs, relates)
    dims, via_meta = parsed[0]
    given, narrowed, depends = dict(splits), {}, set()
    for i, (names, expr) in enumerate(dims):
        narrowed[i] = names & axes[i] if i in axes else names
        if expr is not None:
            given[i] = expr
        # the function's lambda computes a META name from the config itself; a local it
        # closes over, or a tuple's, stays what the function set. Only a block the program
        # id of that axis is multiplied by makes a stale count wrong: a persistent kernel's
        # programs stride over every tile whatever their number
        depends |= (names - via_meta if by_call else names) & axes.get(i, set())
    return _GridAxes(narrowed, given, values, by_call, depends, constexprs, relates)


_GRID_CALLS = {"cdiv", "min", "max", "int"}


def _split_axes(ir, grid, axes, constexprs):
    """{axis: C} for a grid dimension that splits a loop C ways: C a constexpr of the
    dimension's value that a loop's range multiplies with a block the axis's program id is
    multiplied by (split-K: `pid_z * BLOCK_K`, `range(0, tl.cdiv(K, BLOCK_K * SPLIT_K))`), not
    a count of those blocks that happens to have the same value."""
    out = {}
    for i, g in enumerate(grid):
        for c, v in constexprs.items():
            if v != g or g <= 1 or c in axes.get(i, ()):
                continue
            for loop in (ir or {}).get("loops", []):
                texts = [loop.get(k) or "" for k in ("start", "stop", "step")]
                if any(re.search(rf"\b{b}\s*\*\s*{c}\b|\b{c}\s*\*\s*{b}\b", t)
                       for b in axes.get(i, ()) for t in texts):
                    out[i] = c
    return out


def _site_dims(site, path, params, axes, outer):
    """([(constexprs a dimension is computed from, its text over the kernel's parameters (and
    the function's own `outer` ones) or None)], names read from the lambda's META) of the grid
    a launch site writes in file `path`: a tuple, a lambda returning one, or a local name bound
    to either, the locals in it followed to their assignments before the launch; None when it
    is none of those. A local passed as several constexprs (BLOCK_M=BLOCK, BLOCK_N=BLOCK) is,
    in a dimension, the one the program ids of that axis are multiplied by (`axes`)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    span, fspan = site["span"], site["function_span"]
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
              ast.AsyncFunctionDef)) and n.lineno == fspan["line"]), None)
    call = next((n for n in ast.walk(fn) if isinstance(n, ast.Call) and
                 n.lineno == span["line"] and n.col_offset == span["col"]), None) if fn else None
    if call is None or not isinstance(call.func, ast.Subscript):
        return None
    assigns = analysis._assignments(fn.body)

    def value_of(name):
        st = analysis._assigned_before(assigns, name, call.lineno)
        return st.value if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
            isinstance(st.targets[0], ast.Name) else None
    node = call.func.slice
    if isinstance(node, ast.Name):
        node = value_of(node.id)
    meta = None
    if isinstance(node, ast.Lambda) and len(node.args.args) == 1:
        meta, node = node.args.args[0].arg, node.body
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    # what the launch passes, by its text: the kernel parameter it becomes
    # positions count until the first *args (its length is not in the text)
    starred = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)),
                   len(call.args))
    passed = {}
    for text, param in [(ast.unparse(a), params[i]) for i, a in enumerate(call.args)
                        if i < min(len(params), starred)] + \
            [(ast.unparse(k.value), k.arg) for k in call.keywords if k.arg in params]:
        passed.setdefault(text, []).append(param)
    constexprs = {c["name"] for c in site["constexprs"]}
    via_meta = set()

    class Rewrite(ast.NodeTransformer):
        """The dimension over the kernel's parameters; `names` collects the constexprs."""

        def __init__(self, prefer):
            self.names, self.whole, self.seen, self.prefer = set(), True, set(), prefer

        def visit(self, x):
            if not isinstance(x, ast.expr):
                return self.generic_visit(x)
            key = ast.unparse(x)
            if key in passed:
                self.names |= set(passed[key]) & constexprs
                chosen = [p for p in passed[key] if p in self.prefer] or passed[key]
                return ast.Name(chosen[0], ast.Load())
            if isinstance(x, ast.Subscript) and isinstance(x.value, ast.Name) and \
                    x.value.id == meta and isinstance(x.slice, ast.Constant) and \
                    isinstance(x.slice.value, str):
                self.names.add(x.slice.value)
                via_meta.add(x.slice.value)
                return ast.Name(x.slice.value, ast.Load())
            if isinstance(x, ast.Attribute) and x.attr == "cdiv":
                return ast.Name("cdiv", ast.Load())
            if isinstance(x, ast.Name) and x.id not in self.seen and \
                    x.id not in _GRID_CALLS | outer:
                v = value_of(x.id)
                if v is not None:  # a local: its value, rewritten
                    self.seen.add(x.id)
                    out = self.visit(v)
                    self.seen.discard(x.id)
                    return out
                self.whole = False
            return self.generic_visit(x)
    dims = []
    for i, elt in enumerate(node.elts):
        rw = Rewrite(axes.get(i, set()))
        expr = rw.visit(elt)
        text = ast.unparse(expr)
        known = set(params) | _GRID_CALLS | outer
        ok = rw.whole and _names(text) <= known and all(
            isinstance(c.func, ast.Name) for c in ast.walk(expr) if isinstance(c, ast.Call))
        dims.append((rw.names, text if ok else None))
    return dims, via_meta


def _given_dim(axes, i, g, blocks):
    """Axis i's text from the launching function (_grid_axes), when it gives the recorded
    value `g`; constexprs the task cannot name (a direct launch passes only the tuned ones)
    become their numbers."""
    text = getattr(axes, "given", {}).get(i)
    if text is None:
        return None
    values = getattr(axes, "values", {})
    try:
        got = eval(compile(text, "<grid>", "eval"),
                   {"__builtins__": {}, "cdiv": triton.cdiv, "min": min, "max": max, "int": int},
                   dict(values))
    except Exception:  # a tensor's size or anything else the values lack
        return None
    if got != g:
        return None
    if not getattr(axes, "by_name", False):
        fixed = {n: values[n] for n in _names(text) & axes.constexprs if n not in blocks}
        text = substitute(text, fixed) if fixed else text
    return text


def _grid_formula(grid, ints, blocks, axes=None):
    """Each grid dimension as cdiv(S, B) products over the kernel's integer arguments `ints`
    and block constexprs `blocks` (name -> value), or a plain argument, or a number. `axes`
    (_axis_blocks, or _grid_axes) says which blocks each dimension may count, where the
    analysis knows: a value that both a block count and a head count match is then not taken
    for the wrong one, and a product of two counts must count two different blocks of two
    different sizes (cdiv(K, BK) squared is a coincidence, not a tile count); counts of a
    block over the size its tiles are masked against come first. A dimension whose text the
    launching function gives (_grid_axes) is that text where it gives the value."""
    singles = [(s, sv) for s, sv in ints.items() if "stride" not in s]
    dims, uses_block = [], False
    for i, g in enumerate(grid):
        allowed = (axes or {}).get(i, blocks)
        terms = [(f"cdiv({s}, {b})", -(-sv // bv), s, b) for s, sv in singles
                 for b, bv in blocks.items() if bv > 0 and b in allowed]
        relates = getattr(axes, "relates", {})
        terms.sort(key=lambda t: t[2] not in relates.get(t[3], ()))
        # the function's own text first; else a block count of 1 says nothing about which
        # block it counts
        found = _given_dim(axes, i, g, blocks) or ("1" if g == 1 else None)
        if found is None:
            found = next((t for t, v, *_ in terms if v == g and v > 1), None)
        if found is None:
            found = next((f"{a} * {b}" for j, (a, av, sa, ba) in enumerate(terms)
                          for b, bv, sb, bb in terms[j + 1:]
                          if av * bv == g and av > 1 and bv > 1 and sa != sb and ba != bb),
                         None)
        if found is None:
            found = next((f"{a} * {s}" for a, av, *_ in terms for s, sv in singles
                          if av * sv == g and av > 1 and sv > 1), None)
        uses_block |= found is not None and any(b in _names(found) for b in blocks)
        if found is None:
            found = next((s for s, sv in singles if sv == g), None)
        if found is None:  # batch times heads
            found = next((f"{a} * {b}" for j, (a, av) in enumerate(singles)
                          for b, bv in singles[j + 1:] if av * bv == g and av > 1 and bv > 1),
                         str(g))
        dims.append(found)
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")", uses_block


def _names(expr):
    return set(re.findall(r"[A-Za-z_]\w*", expr or ""))


def _kernel_ir(path, kernel, cache):
    if path not in cache:
        try:
            cache[path] = analysis.analyze(path)
        except Exception as e:  # a file the analysis cannot read: tasks still get written
            cache[path] = {"error": f"{type(e).__name__}: {e}", "kernels": []}
    return next((k for k in cache[path].get("kernels", []) if k.get("name") == kernel), None)


def _space(ir, entry, config, symbols, names, forced=None):
    """The inferred space. Its constraints name kernel arguments: each becomes the expression
    the task passes for it (`names`), else the shape symbol of its value, else its value.
    `forced`: parameters to keep at their launched values, with why."""
    if ir is None:
        return {"params": {}, "constraints": []}, {}
    bound = {n: d["value"] for n, d in entry["args"].items()
             if isinstance(d.get("value"), int) and not isinstance(d.get("value"), bool)}
    bound.update(config)
    inferred = analysis.infer_space(ir, bound)
    for n, why in (forced or {}).items():
        if inferred["params"].pop(n, None) is not None:
            inferred["fixed"][n] = why
    rename, values = {}, {}
    for n, v in bound.items():
        if n in config:
            continue
        if names.get(n, "").isidentifier():
            rename[n] = names[n]
        elif v in symbols.by_value:
            rename[n] = symbols.by_value[v]
        else:
            values[n] = v
    # constexprs the space does not tune keep their launched values
    values.update({n: v for n, v in config.items() if n not in inferred.get("params", {})
                   and isinstance(v, (int, float)) and not isinstance(v, bool)})
    constraints = []
    for c in inferred.get("constraints", []):
        text = substitute(c, values)
        for old, new in rename.items():
            text = _rename(text, old, new)
        constraints.append(text)
    return {"params": inferred.get("params", {}), "constraints": constraints}, \
        inferred.get("fixed", {})


def _rename(text, old, new):
    import ast

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(new, node.ctx), node) if node.id == old else node
    return ast.unparse(Rename().visit(ast.parse(text, mode="eval")))


def _relative(path, folder):
    """Relative to the task when that reads well, else absolute."""
    rel = os.path.relpath(path, folder)
    return path if rel.startswith(os.path.join("..", "..", "..")) else rel


def _stride_of(param, value, tensors):
    """The `tensor.stride(axis)` a stride argument is: the tensor whose name starts the
    parameter's (stride_am -> a_ptr), else the first with that stride."""
    token = param.lower().replace("stride", "").strip("_")
    found = [(n, axis) for n, strides in tensors for axis, st in enumerate(strides)
             if st == value]
    for n, axis in found:
        base = n.lower().removesuffix("_ptr").removesuffix("ptr").strip("_")
        if base and token.startswith(base):
            return f"{n}.stride({axis})"
    return f"{found[0][0]}.stride({found[0][1]})" if found else None


def _read_params(ir):
    """The parameters a load's or an atomic's address names directly."""
    ops = [m for m in (ir or {}).get("memops", []) if m.get("op") == "load"] + \
        list((ir or {}).get("atomics", []))
    names = set()
    for m in ops:
        try:
            names |= python_names(m.get("pointer") or "")
        except ValueError:  # an address the analysis wrote as text no parser reads
            pass
    return names


def _output(name, dtype, read_back):
    """An output; one the kernel also read (updated in place) is not poisoned."""
    return {"name": name, **_tolerance(dtype), **({"poison": False} if read_back else {})}


def _integer_args(entry, constexprs):
    return {n: d["value"] for n, d in entry["args"].items()
            if n not in constexprs and isinstance(d.get("value"), int)
            and not isinstance(d.get("value"), bool)}


def _call_launch(entry, symbols, tunable, blocks, constexprs, axes):
    """launch.call through the function that launched the kernel; (launch, inputs, outputs)."""
    caller, written = entry["caller"], set(entry["written"])
    inputs, outputs, by_id, kwargs = [], [], {}, {}
    for p in caller["params"] or [{"name": n} for n in caller["args"]]:
        n = p["name"]
        d = caller["args"].get(n)
        if d is None:
            continue
        if not d.get("tensor"):
            kwargs[n] = _literal(d)
            continue
        ids = caller["arg_ids"].get(n, [])
        if ids:
            by_id[ids[0]] = n
        # the kernel's parameter this tensor became, if any
        param = next((k for k, i in entry["ids"].items() if ids and i == ids[0]), None)
        read_back = entry["read_back"].get(param, True)
        inputs.append(_input_spec(n, d, symbols, param in written and not read_back))
        kwargs[n] = n
        if param in written:
            outputs.append(_output(n, d["dtype"], entry["read_back"].get(param)))
    returned = entry.get("returned") or {}
    values = returned.get("sequence") if "sequence" in returned else [returned]
    ids = entry.get("returned_ids") or []
    returns = []
    for i, d in enumerate(values or []):
        tensor = isinstance(d, dict) and d.get("tensor") and i < len(ids) and ids[i] is not None
        # a returned argument is an output already (the kernel wrote it)
        name = f"out{i}" if tensor and ids[i] not in by_id else None
        returns.append(name)
        if name:
            outputs.append(_output(name, d["dtype"], False))
    while returns and returns[-1] is None:
        returns.pop()
    module = os.path.splitext(os.path.basename(caller["file"]))[0]
    launch = {"call": f"{module}:{caller['name']}", "args": [], "kwargs": kwargs}
    if returns:
        launch["returns"] = returns
    if not entry["grid_callable"]:
        # a tuple grid computed from blocks the function fixes: recompute it from the config,
        # over the kernel's integer arguments and, where the kernel lacks one, the function's
        ints = {n: d["value"] for n, d in caller["args"].items()
                if isinstance(d.get("value"), int) and not isinstance(d.get("value"), bool)}
        ints.update(_integer_args(entry, constexprs))
        formula, uses_block = _grid_formula(entry["grid"], ints, blocks, axes)
        if uses_block:
            launch["grid"] = formula
    return launch, inputs, outputs, {}


def _grid_launch(entry, symbols, tunable, blocks, constexprs, config, axes):
    """The kernel itself with the recorded grid as an expression; (launch, inputs, outputs,
    the expression each integer argument became)."""
    written = set(entry["written"])
    inputs, outputs, tensors = [], [], []
    for p in entry["params"]:
        n, d = p["name"], entry["args"].get(p["name"], {})
        if d.get("tensor"):
            inputs.append(_input_spec(n, d, symbols,
                                      n in written and not entry["read_back"].get(n, True)))
            tensors.append((n, d["stride"]))
            if n in written:
                outputs.append(_output(n, d["dtype"], entry["read_back"].get(n)))
    # Each value lands on its parameter: positional up to the first tuned constexpr (which a
    # config gives by name), by name from there on; fixed constexprs go with the launch, but
    # for those an autotuner's configs set, which the pinned config carries.
    args, names, kwargs, by_name = [], {}, {}, False
    for p in entry["params"]:
        n, d = p["name"], entry["args"].get(p["name"], {})
        v = d.get("value")
        if p["constexpr"] and (n in tunable or n in entry["config_keys"]):
            by_name = True
            continue
        if d.get("tensor"):
            expr = n
        elif p["constexpr"]:
            expr = _value_expr(config[n]) if n in config else _literal(d) or "None"
        elif isinstance(v, int) and not isinstance(v, bool):
            expr = (_stride_of(n, v, tensors) if "stride" in n else None) or \
                symbols.by_value.get(v) or _numel_of(v, entry) or repr(v)
            names[n] = expr
        else:
            expr = _literal(d) or "None"
        if by_name:
            kwargs[n] = expr
        else:
            args.append(expr)
    # a grid may count what only a tensor's shape holds (rows of a 2-D input)
    ints = dict(_integer_args(entry, constexprs))
    ints.update({s: v for v, s in symbols.by_value.items() if s not in ints})
    formula, _ = _grid_formula(entry["grid"], ints, blocks, axes)
    for n, e in names.items():
        if n != e:
            formula = _rename(formula, n, e)
    return {"grid": formula, "args": args, "kwargs": kwargs}, inputs, outputs, names


def _numel_of(value, entry):
    """`x.numel()` of the first tensor argument of `value` elements, of two dimensions or more
    (a flattened elementwise launch over it), or None."""
    for n, d in entry["args"].items():
        if d.get("tensor") and len(d["shape"]) > 1 and value > 1 and \
                math.prod(d["shape"]) == value:
            return f"{n}.numel()"
    return None


def _task_for(entry, reference, irs):
    """One task document for one launch, and notes for the user."""
    ir = _kernel_ir(entry["file"], entry["kernel"], irs)
    # what `torch.empty` left in a tensor the kernel only stores to is no value it reads
    for p in (ir or {}).get("params", []):
        if p.get("written_only") and p["name"] in entry["read_back"]:
            entry["read_back"][p["name"]] = False
    # a tensor an atomic adds into is read, whatever it held (split-K's zeroed output)
    for a in (ir or {}).get("atomics", []):
        for n in _names(a.get("pointer")) & set(entry["written"]):
            entry["read_back"][n] = True
    # a tensor it loads from before writing held what it reads, zeros included (a histogram's
    # counts, partial sums): an input to keep, not one to poison
    for n in _read_params(ir):
        if n in entry["read_back"]:
            entry["read_back"][n] = True
    # integers whose values the kernel runs its loops or masks to (lengths) keep them: the
    # kernel's own argument, and the function's that became it
    bounding = {entry["ids"][p["name"]] for p in (ir or {}).get("params", [])
                if p.get("bounding_loads") and p["name"] in entry["ids"]}
    for n, d in entry["args"].items():
        if entry["ids"].get(n) in bounding:
            d["bounding"] = True
    for n, d in (entry["caller"] or {}).get("args", {}).items():
        if (entry["caller"]["arg_ids"].get(n) or [None])[0] in bounding:
            d["bounding"] = True
    constexprs = {p["name"] for p in entry["params"] if p["constexpr"]}
    scalar_names = {}
    for n, v in _integer_args(entry, constexprs).items():
        if "stride" not in n:
            scalar_names.setdefault(v, n)
    symbols = _Symbols(scalar_names)
    config = {n: entry["args"][n]["value"] for n in constexprs
              if isinstance(entry["args"].get(n, {}).get("value"), (int, bool, float, str))}
    options = {"num_warps": entry["options"].get("num_warps", 4),
               "num_stages": entry["options"].get("num_stages", 3), **entry["options"]}
    launched = {**config, **options}
    caller, notes = entry["caller"], []
    by_call = caller is not None and \
        all(d.get("tensor") or _literal(d) is not None for d in caller["args"].values()) and \
        any(d.get("tensor") for d in caller["args"].values())
    if caller is not None and not by_call:
        notes.append(f"{caller['name']} takes arguments that are neither tensors nor plain "
                     "values: the kernel is launched directly")
    axes = _grid_axes(ir, entry, by_call)
    forced = {}  # blocks the grid counts in a way the task's launch cannot recompute
    while True:
        tunable = set(_space(ir, entry, launched, symbols, {}, forced)[0]["params"])
        # only the constexprs the space tunes may appear in a recomputed grid
        blocks = {n: v for n, v in config.items() if n in tunable and v > 1}
        if by_call:
            launch, inputs, outputs, names = _call_launch(entry, symbols, tunable, blocks,
                                                          constexprs, axes)
            if not outputs and entry["written"]:
                # it writes only what the function allocates and keeps (a scratch buffer that
                # the next kernel reads): launched directly, that buffer is an output to compare
                notes.append(f"{caller['name']} neither returns nor takes what the kernel "
                             f"writes ({', '.join(entry['written'])}): the kernel is launched "
                             "directly")
                by_call, symbols = False, _Symbols(scalar_names)
                axes = _grid_axes(ir, entry, by_call)
        if not by_call:
            launch, inputs, outputs, names = _grid_launch(entry, symbols, tunable, blocks,
                                                          constexprs, config, axes)
        # a tuned block the grid is computed from must be in the grid the task recomputes
        missed = (axes.depends & tunable) - _names(launch.get("grid"))
        if not missed:
            break
        forced.update({b: "the grid counts its blocks in a way the task cannot recompute "
                       f"(launch.grid {launch.get('grid') or 'kept by ' + caller['name']})"
                       for b in missed})
    if not outputs:
        notes.append("no output found: the kernel wrote none of its tensors")
    _index_bounds(inputs, symbols)
    crowded = _kept(inputs)
    if crowded:
        notes.append(f"{', '.join(crowded)}: drawn at random in the recorded range, past the "
                     f"{_KEPT_VALUES} recorded integers a task keeps: the check keeps the tune "
                     "shape, and the values may not be valid indices")
    space, fixed_why = _space(ir, entry, launched, symbols, names, forced)
    if not space["params"]:
        notes.append("the analysis found nothing to tune")
    if fixed_why:
        notes.append("fixed: " + "; ".join(f"{k} ({v})" for k, v in sorted(fixed_why.items())))
    notes += analysis.tile_logic_notes(irs[entry["file"]], entry["kernel"])
    tune = symbols.tune_shape() or {"ONE": 1}  # a task names one symbol at least
    keep = {v for k, v in config.items() if isinstance(v, int) and k not in tunable}
    # recorded values (and a range of fixed numbers) fix the sizes they index or bound: which
    # those are the numbers do not say, so none shrinks
    if crowded or any(i["init"] == "values" for i in inputs):
        keep |= set(tune.values())
    doc = {"description": f"captured launch of {entry['kernel']}", "source": entry["file"],
           "kernel": entry["kernel"], "launch": launch, "inputs": inputs, "outputs": outputs,
           "reference": reference or "baseline",
           "shapes": {"tune": [tune], "check": [_check_shape(tune, [i["shape"] for i in inputs],
                                                             keep)]},
           # what the autotuner's config set, fixed values included: the pinned config is all
           # the kernel gets
           "baseline": {k: v for k, v in launched.items() if k in tunable or k in options or
                        k in entry["config_keys"]},
           "space": space}
    if any(o.get("poison") is False for o in outputs):
        doc["writes_inputs"] = True  # what TASK.md infers; said here for the reader
    explain = _explain_launch(entry, doc, by_call) + _explain_space(entry, doc, ir, fixed_why) + \
        [_explain_check(doc, keep)]
    return doc, notes, explain


_KINDS = {k: "a Triton kernel" for k in ("JITFunction", "InterpretedFunction", "Autotuner",
                                          "Heuristics")}


def _item(what, why, line=None):
    return {"what": what, "why": why, "line": line}


def _explain_launch(entry, doc, by_call):
    """How the task launches the kernel, and why: [{what, why, line}]."""
    caller, launch, site = entry["caller"], doc["launch"], entry.get("site")
    recorded = "(" + ", ".join(map(str, entry["grid"])) + ("," if len(entry["grid"]) == 1
                                                            else "") + ")"
    if by_call:
        defined = f"{caller['file']}:{caller['line']}" if caller.get("line") else caller["file"]
        out = [_item(f"launcher {caller['name']}", f"the function of your code that launched "
                     f"{entry['kernel']} (at {site}) takes tensors and plain values: the task "
                     "calls it, with the config put into its launch", defined)]
        if "grid" in launch:
            out.append(_item(f"grid {launch['grid']}", f"recomputed from the config: "
                             f"{caller['name']} launched {recorded} from block sizes it fixes",
                             site))
        elif entry["grid_callable"]:
            out.append(_item("grid: the launcher's own", "a function of the config (META), "
                             f"{recorded} when recorded", site))
        else:
            out.append(_item(f"grid: the launcher's own, {recorded} when recorded",
                             "it follows no block size the space tunes", site))
        return out
    if caller is None:
        why = "no function of your code that can be called again by name launched it (a " \
            "method, a lambda or module-level code did)"
    elif not any(d.get("tensor") for d in caller["args"].values()):
        why = f"{caller['name']} takes no tensor"
    else:
        odd = [f"{n} ({_KINDS.get(d.get('opaque'), d.get('opaque')) or 'a sequence'})"
               for n, d in caller["args"].items() if not d.get("tensor") and _literal(d) is None]
        why = f"{caller['name']} takes arguments that are neither tensors nor plain values: " \
            + ", ".join(odd)
    return [_item("kernel launched directly", why, site),
            _item(f"grid {launch['grid']}", f"the recorded grid {recorded} over the kernel's "
                  "arguments and the config", site)]


def _param_line(entry, ir, name):
    p = next((p for p in (ir or {}).get("params", []) if p["name"] == name), None)
    return f"{entry['file']}:{p['span']['line']}" if p and "span" in p else None


def _explain_space(entry, doc, ir, fixed_why):
    """What the space tunes and what it keeps fixed, and why: [{what, why, line}]."""
    if ir is None:
        return [_item("nothing tuned", "the analysis could not read "
                      f"{entry['file']}")]
    domains = {t["name"]: t.get("domain") for t in ir.get("tunables", [])}
    out = []
    for n, values in doc["space"]["params"].items():
        launched = doc["baseline"].get(n)
        if len(values) == 1:  # a space of one value keeps it
            out.append(_item(f"fixed {n} = {values[0]}", domains.get(n) or "one value",
                             _param_line(entry, ir, n)))
            continue
        why = f"{values}, launched with {launched}"
        if domains.get(n) and domains[n] != ", ".join(map(str, values)):
            why += f": {domains[n]}"
        out.append(_item(f"tuned {n}", why, _param_line(entry, ir, n)))
    for n, why in sorted(fixed_why.items()):
        d = entry["args"].get(n, {})
        value = _literal(d) if d else None
        what = f"fixed {n}" + (f" = {value}" if value is not None else "")
        out.append(_item(what, why or "not a size the analysis tunes",
                         _param_line(entry, ir, n)))
    return out


def _explain_check(doc, keep):
    tune, check = doc["shapes"]["tune"][0], doc["shapes"]["check"][0]
    cut = [f"{n} {v} -> {check[n]}" for n, v in tune.items() if check.get(n) != v]
    kept = sorted(n for n, v in tune.items() if v > 128 and v in keep)
    why = f"the recorded shape {json.dumps(tune)}"
    why += (": " + ", ".join(cut) + " (smaller sizes of the same power-of-two alignment, up to "
            "128, and small odd factors, for the interpreter)") if cut else \
        ", small enough to check as it is"
    if kept:
        why += f"; kept: {', '.join(kept)} (a size the launch fixes)"
    return _item(f"check shape {json.dumps(check)}", why)


def _signature_key(entry):
    """Launches of one kernel at one shape are one task, unless a flag differs (a constexpr
    that is a word, a truth value or a dtype: `reduction="sum"`, `INTERLEAVED`), which makes
    another kernel. Numbers are left out: an autotuner's benchmark launches differ in them."""
    shapes = tuple((n, tuple(d["shape"]), d["dtype"]) for n, d in sorted(entry["args"].items())
                   if d.get("tensor"))
    def flag(d):
        v = d.get("value", d.get("dtype_value", d.get("tl_dtype")))
        return None if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v)
    flags = tuple((p["name"], flag(entry["args"].get(p["name"], {}))) for p in entry["params"]
                  if p["constexpr"])
    return entry["file"], entry["kernel"], shapes, flags


def _write_tasks(rec, out, reference, kernel, check):
    os.makedirs(out, exist_ok=True)
    # The last launch of a kernel and shape stands for them all: an autotuner's benchmark
    # launches come first, the config it chose last.
    last, counts = {}, {}
    for entry in rec.launches:
        if (kernel and entry["kernel"] != kernel) or "failed" in entry:
            continue
        key = _signature_key(entry)
        last.pop(key, None)
        last[key] = entry
        counts[key] = counts.get(key, 0) + 1
    seen, written, irs = {}, [], rec.irs  # the analyses the recording made
    for key in last:  # in the order of their last launches
        entry = last[key]
        index = sum(1 for k in seen if k[1] == entry["kernel"])
        folder = os.path.join(out, f"{entry['kernel']}_{index}")
        os.makedirs(folder, exist_ok=True)
        doc, notes, explain = _task_for(entry, reference, irs)
        doc["source"] = _relative(doc["source"], folder)
        if "call" in doc["launch"]:
            explain += _launcher_path(doc, entry, folder)
        path = os.path.join(folder, "task.json")
        with open(path, "w") as f:
            f.write(_dumps(doc) + "\n")
        report = {"task": path, "kernel": entry["kernel"], "launch": (
            "call " + doc["launch"]["call"]) if "call" in doc["launch"] else "grid",
            "shape": doc["shapes"]["tune"][0], "check_shape": doc["shapes"]["check"][0],
            "baseline": doc["baseline"], "space": doc["space"], "notes": notes,
            "explain": explain,
            "launches": counts[key]}
        if check:
            _check(report, path, doc["shapes"]["check"][0])
        else:  # the caller checks each task in a process it can lose
            report["check"] = "pending"
        seen[key] = report
        written.append(report)
    return written


def _launcher_path(doc, entry, folder):
    """A launching function in another folder than the kernel file: `launch.call` names its
    module as it was imported (dotted, in a package, so that its relative imports work) and
    `python_path` the folder that import starts from, relative to the task. Returns what it
    did as report items."""
    caller = entry["caller"]
    where = os.path.dirname(caller["file"])
    if where == os.path.dirname(entry["file"]):
        return []
    package, root = loader._package_of(where)
    stem = os.path.splitext(os.path.basename(caller["file"]))[0]
    module = f"{package}.{stem}" if package else stem
    doc["launch"]["call"] = f"{module}:{caller['name']}"
    doc["python_path"] = [_relative(root, folder)]
    return [_item(f"python_path {doc['python_path']}", f"{caller['name']} is in another folder "
                  f"than the kernel file: imported as {module} from {root}",
                  f"{caller['file']}:{caller['line']}")]
def _dumps(doc):
    """The task as JSON, indented, each input's recorded values on one line (a table of
    thousands of numbers is not thousands of lines)."""
    values, inputs = {}, []
    for i, spec in enumerate(doc["inputs"]):
        if "values" in spec:
            mark = f"@values{i}@"
            values[json.dumps(mark)] = json.dumps(spec["values"], separators=(",", ":"))
            spec = dict(spec, values=mark)
        inputs.append(spec)
    text = json.dumps(dict(doc, inputs=inputs), indent=2)
    for mark, numbers in values.items():
        text = text.replace(mark, numbers, 1)
    return text


def _check(report, path, shape):
    """The task's baseline run once at `shape`: its status (and message) into `report`."""
    try:
        spec = load_task(path)
        result = run_check(spec, spec["baseline"][0], shape, seed=1)
        report["check"] = result["status"]
        if result["message"]:
            report["check_message"] = result["message"]
        if "compared" in result:  # elements compared of each output's, and its size
            report["check_compared"] = {n: [c, result["elements"][n]]
                                        for n, c in result["compared"].items()}
    except Exception as e:
        report["check"] = "task"
        report["check_message"] = f"{type(e).__name__}: {e}"


def _script_runner(argv, cwd):
    """What running `argv` (python SCRIPT.py ARGS / python -m MODULE ARGS / SCRIPT.py ARGS)
    means, as a function."""
    args = list(argv)
    if args and os.path.basename(args[0]).startswith("python"):
        args = args[1:]
    if not args:
        raise ValueError("capture: expected a script to run (python SCRIPT.py ARGS...)")
    if args[0] == "-m":
        if len(args) < 2:
            raise ValueError("capture: -m expects a module name")
        module, rest = args[1], args[2:]

        def run():
            sys.argv = [module] + rest
            sys.path.insert(0, cwd)  # as `python -m` does: the package may sit in this folder
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        return run
    script = os.path.abspath(os.path.join(cwd, args[0]))
    if not os.path.isfile(script):
        raise ValueError(f"capture: {script}: no such script")

    def run():
        sys.argv = [script] + args[1:]
        sys.path.insert(0, os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")
    return run


def _summary(rec, tasks, error):
    """`error`: the script's failure (message), `error_kind` (`script`, or `interpreter_gap`
    when it met what Triton's CPU interpreter lacks: then `gap` says what and `error_at` where
    in the user's code; the same script captures on a GPU)."""
    out = {"launches": len(rec.launches), "tasks": tasks,
           "error": error["message"] if error else None,
           "error_kind": error["kind"] if error else None,
           "kernels": sorted({e["kernel"] for e in rec.launches})}
    if error and error["kind"] == "interpreter_gap":
        out.update(gap=error["gap"], error_at=error["at"])
    return out


def capture(argv, out, cwd=None, reference=None, kernel=None, check=True):
    """Run `argv` once, recording every Triton launch; write one task per kernel and shape
    under `out`. Returns {launches, kernels, tasks: [{task, kernel, launch, shape, check_shape,
    baseline, space, notes, explain, check, check_message}], error, error_kind (and with an
    interpreter gap, gap and error_at)}; without `check`, each task's check
    is "pending" (`tforge capture` runs them in a worker of their own)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    run = _script_runner(argv, cwd)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        rec, error = _run_user_code(run)
    finally:
        os.chdir(here)
    return _summary(rec, _write_tasks(rec, os.path.abspath(os.path.join(cwd, out)), reference,
                                      kernel, check), error)


def init(path, out, reference=None, kernel=None, check=True):
    """Run a kernel file's own `__main__` block (or, without one, its test_* functions that
    take no arguments) and capture its launches as capture() does."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    has_main = any(loader._is_main_guard(s) for s in __import__("ast").parse(text).body)
    if has_main:
        def run():
            sys.argv = [path]
            sys.path.insert(0, os.path.dirname(path))
            runpy.run_path(path, run_name="__main__")
    else:
        def run():
            module, _ = loader.load(path)
            tests = [f for n, f in sorted(vars(module).items()) if n.startswith("test")
                     and inspect.isfunction(f) and not inspect.signature(f).parameters]
            if not tests:
                raise ValueError(f"{path}: no `if __name__ == \"__main__\":` block and no "
                                 "test_* function without arguments to run")
            for t in tests:
                t()
    rec, error = _run_user_code(run)
    return _summary(rec, _write_tasks(rec, os.path.abspath(out), reference, kernel, check),
                    error)
