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
- launch: through that function (`launch.call`) when its arguments are tensors and plain values
  and the kernel writes one of them or of what it returns, with the grid recomputed from the
  kernel's arguments when the function computed it from block sizes it hard-codes; otherwise
  the kernel itself with the recorded grid as an expression;
- inputs: the function's (or kernel's) tensors, their sizes named by shape symbols; integer
  tensors drawn in the recorded range;
- outputs: what the function returns, and tensors the kernel writes (found by comparing them
  before and after the launch; one it also reads is marked `poison: false`);
- reference: the user's function given with `reference`, else the kernel's own output with the
  recorded config (`"baseline"`);
- baseline: the recorded config; space: inferred by the static analysis (analyze.py);
- shapes: the recorded sizes to tune, smaller ones of the same alignment to check.
Each written task is loaded and checked once at its check shape; the result is reported.
"""

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
from . import loader
from .task import DTYPES, FLOAT_DTYPES, LAUNCH_OPTIONS, python_names, substitute
from .worker import hooked_runs, layers, load_task, run_check, unwrap

_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-4, "float64": 1e-8,
              "float8_e4m3fn": 1.25e-1, "float8_e5m2": 2.5e-1}
_CHECK_ELEMENTS = 1 << 18  # the largest tensor at a check shape (the interpreter is slow)
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
        """The innermost user function that can be called again by name: module level, or a
        class's static method (not an autograd Function's forward: it takes a ctx)."""
        for frame, args, _ in reversed(self.stack):
            code = frame.f_code
            qual = getattr(code, "co_qualname", code.co_name)
            if "<" in qual or "." in qual or code.co_name.startswith("_tforge"):
                continue
            module = frame.f_globals.get(code.co_name)
            if getattr(module, "__code__", None) is code:
                return frame, args
        return None, None

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
        if frame is not None:
            entry["caller"] = {"name": frame.f_code.co_name,
                               "file": os.path.abspath(frame.f_code.co_filename),
                               "args": {n: _describe_value(v) for n, v in call_args.items()},
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

    def written(self, entry, bound, before):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        for n, old in before.items():
            new = bound[n]
            changed = not torch.equal(old, new) if old.dtype != torch.bool else \
                not bool((old == new).all())
            if changed and not (old.is_floating_point() and
                                bool((torch.isnan(old) & torch.isnan(new)).all())):
                entry["written"].append(n)
        entry["read_back"] = {n: bool(before[n].abs().sum() != 0) if before[n].dtype != torch.bool
                              else bool(before[n].any()) for n in entry["written"]}


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
            if v.dim() == 1 and 2 <= v.numel() <= _KEPT_VALUES and bool((v[1:] >= v[:-1]).all()):
                d["values"] = v.tolist()  # offsets (cu_seqlens, indptr): no random stand-in
        return d
    if isinstance(v, torch.dtype):
        return {"dtype_value": str(v)}
    if isinstance(v, (tuple, list)):
        return {"sequence": [_describe_value(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"value": v}
    if isinstance(v, triton.language.constexpr):
        return {"value": v.value}
    return {"opaque": type(v).__name__}


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
                rec.written(entry, bound, before)
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
    with _installed(rec):
        try:
            run()
        except SystemExit as e:
            if e.code not in (None, 0):
                error = f"the script exited with status {e.code}"
        except BaseException as e:  # the user's code: whatever it raises is reported
            error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
    return rec, error


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
    that equal a fixed constexpr (a head dimension) stay."""
    if v <= 128 or v in keep:
        return v
    g = math.gcd(v, 128)
    k = -(-96 // g)
    if g < 128 and k % 2 == 0:
        k += 1
    return g * k


def _check_shape(tune, tensors, keep):
    shape = {n: _check_size(v, keep) for n, v in tune.items()}

    def largest():
        return max((math.prod(shape.get(d, d) if isinstance(d, str) else d for d in dims)
                    for dims in tensors), default=0)
    while largest() > _CHECK_ELEMENTS:
        free = [n for n, v in shape.items() if v > 16 and v not in keep]
        if not free:
            break
        n = max(free, key=lambda k: shape[k])
        shape[n] = max(16, shape[n] // 2) if shape[n] % 2 == 0 else max(15, shape[n] // 2 | 1)
    return shape


_KEPT_VALUES = 4096


def _order(desc):
    """The dimensions from the outermost in memory to the innermost, when the tensor is a dense
    permutation other than row-major (a weight passed as `w.t()`), else None. Slices (a view
    into a fused qkv) are not kept: their task tensors are contiguous."""
    shape, stride = desc["shape"], desc.get("stride")
    if desc.get("contiguous", True) or not stride or len(shape) < 2 or min(shape) <= 1:
        return None
    order = sorted(range(len(shape)), key=lambda d: -stride[d])
    expect = 1
    for d in reversed(order):
        if stride[d] != expect:
            return None
        expect *= shape[d]
    return order


def _input_spec(name, desc, symbols, output_only):
    """A tensor of the task: floats drawn from randn, integers in their recorded range, a tensor
    the kernel only writes zeros. Integers that look like indices (labels, ids) are drawn where
    an index is valid: without the one or two negative sentinels (ignore_index) the range holds,
    since a value between a sentinel and 0 is no index at all; and below the size they index
    (`_index_bounds`), so that the smaller check shapes keep them in range. A short sorted
    integer vector (the offsets of a packed batch) keeps its recorded values: random ones would
    point anywhere, and the task then keeps its shape for the checks too."""
    dtype = desc["dtype"]
    if "values" in desc and not output_only:
        return {"name": name, "shape": list(desc["shape"]), "dtype": dtype, "init": "values",
                "values": desc["values"]}
    spec = {"name": name, "shape": [symbols.of(d) for d in desc["shape"]], "dtype": dtype}
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
    return None


def _axis_blocks(ir):
    """Per grid axis, the blocks its program id is multiplied by (the analysis'), when known."""
    axes = {}
    for p in (ir or {}).get("program_ids", []):
        if "blocks" in p and p["axis"].isdigit():
            axes.setdefault(int(p["axis"]), set()).update(p["blocks"])
    return axes


def _grid_formula(grid, ints, blocks, axes=None):
    """Each grid dimension as cdiv(S, B) products over the kernel's integer arguments `ints`
    and block constexprs `blocks` (name -> value), or a plain argument, or a number. `axes`
    (_axis_blocks) says which blocks each dimension may count, where the analysis knows: a
    value that both a block count and a head count match is then not taken for the wrong one."""
    singles = [(s, sv) for s, sv in ints.items() if "stride" not in s]
    dims, uses_block = [], False
    for i, g in enumerate(grid):
        allowed = (axes or {}).get(i, blocks)
        terms = [(f"cdiv({s}, {b})", -(-sv // bv)) for s, sv in singles
                 for b, bv in blocks.items() if bv > 0 and b in allowed]
        # a block count of 1 says nothing about which block it counts
        found = "1" if g == 1 else next((t for t, v in terms if v == g and v > 1), None)
        if found is None:
            found = next((f"{a} * {b}" for j, (a, av) in enumerate(terms) for b, bv in terms[j:]
                          if av * bv == g and av > 1 and bv > 1), None)
        if found is None:
            found = next((f"{a} * {s}" for a, av in terms for s, sv in singles
                          if av * sv == g and av > 1 and sv > 1), None)
        uses_block |= found not in (None, "1")
        if found is None:
            found = next((s for s, sv in singles if sv == g), None)
        if found is None:  # batch times heads
            found = next((f"{a} * {b}" for j, (a, av) in enumerate(singles)
                          for b, bv in singles[j + 1:] if av * bv == g and av > 1 and bv > 1),
                         str(g))
        dims.append(found)
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")", uses_block


def _kernel_ir(path, kernel, cache):
    if path not in cache:
        try:
            cache[path] = analysis.analyze(path)
        except Exception as e:  # a file the analysis cannot read: tasks still get written
            cache[path] = {"error": f"{type(e).__name__}: {e}", "kernels": []}
    return next((k for k in cache[path].get("kernels", []) if k.get("name") == kernel), None)


def _space(ir, entry, config, symbols, names):
    """The inferred space. Its constraints name kernel arguments: each becomes the expression
    the task passes for it (`names`), else the shape symbol of its value, else its value."""
    if ir is None:
        return {"params": {}, "constraints": []}, {}
    bound = {n: d["value"] for n, d in entry["args"].items()
             if isinstance(d.get("value"), int) and not isinstance(d.get("value"), bool)}
    bound.update(config)
    inferred = analysis.infer_space(ir, bound)
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
    args, names, fixed = [], {}, {}
    for p in entry["params"]:
        n, d = p["name"], entry["args"].get(p["name"], {})
        v = d.get("value")
        if d.get("tensor"):
            args.append(n)
        elif p["constexpr"]:
            if n not in tunable:  # fixed constexprs go with the launch, tuned ones in configs
                fixed[n] = _value_expr(config[n]) if n in config else _literal(d) or "None"
        elif isinstance(v, int) and not isinstance(v, bool):
            expr = (_stride_of(n, v, tensors) if "stride" in n else None) or \
                symbols.by_value.get(v) or repr(v)
            names[n] = expr
            args.append(expr)
        else:
            args.append(_literal(d) or "None")
    formula, _ = _grid_formula(entry["grid"], _integer_args(entry, constexprs), blocks, axes)
    for n, e in names.items():
        if n != e:
            formula = _rename(formula, n, e)
    return {"grid": formula, "args": args, "kwargs": fixed}, inputs, outputs, names


def _task_for(entry, reference, irs):
    """One task document for one launch, and notes for the user."""
    ir = _kernel_ir(entry["file"], entry["kernel"], irs)
    # what `torch.empty` left in a tensor the kernel only stores to is no value it reads
    for p in (ir or {}).get("params", []):
        if p.get("written_only") and p["name"] in entry["read_back"]:
            entry["read_back"][p["name"]] = False
    # a tensor it loads from or adds to atomically before writing held what it reads, zeros
    # included (a histogram's counts, partial sums): an input to keep, not one to poison
    for n in _read_params(ir):
        if n in entry["read_back"]:
            entry["read_back"][n] = True
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
    tunable = set(_space(ir, entry, launched, symbols, {})[0]["params"])
    # only the constexprs the space tunes may appear in a recomputed grid
    blocks = {n: v for n, v in config.items() if n in tunable and v > 1}
    caller, notes = entry["caller"], []
    by_call = caller is not None and \
        all(d.get("tensor") or _literal(d) is not None for d in caller["args"].values()) and \
        any(d.get("tensor") for d in caller["args"].values())
    if by_call:
        launch, inputs, outputs, names = _call_launch(entry, symbols, tunable, blocks,
                                                      constexprs, _axis_blocks(ir))
        if not outputs and entry["written"]:
            # it writes only what the function allocates and keeps (a scratch buffer that the
            # next kernel reads): launched directly, that buffer is an output to compare
            notes.append(f"{caller['name']} neither returns nor takes what the kernel writes "
                         f"({', '.join(entry['written'])}): the kernel is launched directly")
            by_call, symbols = False, _Symbols(scalar_names)
    elif caller is not None:
        notes.append(f"{caller['name']} takes arguments that are neither tensors nor plain "
                     "values: the kernel is launched directly")
    if not by_call:
        launch, inputs, outputs, names = _grid_launch(entry, symbols, tunable, blocks,
                                                      constexprs, config, _axis_blocks(ir))
    if not outputs:
        notes.append("no output found: the kernel wrote none of its tensors")
    _index_bounds(inputs, symbols)
    space, fixed_why = _space(ir, entry, launched, symbols, names)
    if not space["params"]:
        notes.append("the analysis found nothing to tune")
    if fixed_why:
        notes.append("fixed: " + "; ".join(f"{k} ({v})" for k, v in sorted(fixed_why.items())))
    tune = symbols.tune_shape() or {"ONE": 1}  # a task names one symbol at least
    keep = {v for k, v in config.items() if isinstance(v, int) and k not in tunable}
    if any(i["init"] == "values" for i in inputs):  # recorded offsets fix every size
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
    return doc, notes


def _signature_key(entry):
    """Launches of one kernel at one shape are one task, unless a flag differs (a constexpr
    that is a word, a truth value or a dtype: `reduction="sum"`, `INTERLEAVED`), which makes
    another kernel. Numbers are left out: an autotuner's benchmark launches differ in them."""
    shapes = tuple((n, tuple(d["shape"]), d["dtype"]) for n, d in sorted(entry["args"].items())
                   if d.get("tensor"))
    def flag(d):
        v = d.get("value", d.get("dtype_value"))
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
    seen, written, irs = {}, [], {}
    for key in last:  # in the order of their last launches
        entry = last[key]
        index = sum(1 for k in seen if k[1] == entry["kernel"])
        folder = os.path.join(out, f"{entry['kernel']}_{index}")
        os.makedirs(folder, exist_ok=True)
        doc, notes = _task_for(entry, reference, irs)
        doc["source"] = _relative(doc["source"], folder)
        caller = entry["caller"]
        if "call" in doc["launch"] and os.path.dirname(caller["file"]) != \
                os.path.dirname(entry["file"]):
            notes.append(f"{caller['file']}: the launching function is in another folder than the "
                         "kernel file: add that folder to TFORGE_PYTHONPATH")
        path = os.path.join(folder, "task.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        report = {"task": path, "kernel": entry["kernel"], "launch": (
            "call " + doc["launch"]["call"]) if "call" in doc["launch"] else "grid",
            "shape": doc["shapes"]["tune"][0], "check_shape": doc["shapes"]["check"][0],
            "baseline": doc["baseline"], "space": doc["space"], "notes": notes,
            "launches": counts[key]}
        if check:
            _check(report, path, doc["shapes"]["check"][0])
        else:  # the caller checks each task in a process it can lose
            report["check"] = "pending"
        seen[key] = report
        written.append(report)
    return written


def _check(report, path, shape):
    """The task's baseline run once at `shape`: its status (and message) into `report`."""
    try:
        spec = load_task(path)
        result = run_check(spec, spec["baseline"][0], shape, seed=1)
        report["check"] = result["status"]
        if result["status"] != "ok":
            report["check_message"] = result["message"]
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
    return {"launches": len(rec.launches), "tasks": tasks, "error": error,
            "kernels": sorted({e["kernel"] for e in rec.launches})}


def capture(argv, out, cwd=None, reference=None, kernel=None, check=True):
    """Run `argv` once, recording every Triton launch; write one task per kernel and shape
    under `out`. Returns {launches, kernels, tasks: [{task, kernel, launch, shape, check_shape,
    baseline, space, notes, check, check_message}], error}; without `check`, each task's check
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
