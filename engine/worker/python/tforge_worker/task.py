"""The task manifest (task.json): schema, validation, normalisation. See engine/task/TASK.md.

validate(doc, path) checks every field and raises one TaskError listing every malformed field as
`file: json.path: expected ..., got ...`. It returns the normalised manifest, a JSON-able dict.
"""

import ast
import collections
import json
import math
import os
import re

DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
          "int8", "int16", "int32", "int64", "uint8", "bool")
FLOAT_DTYPES = DTYPES[:6]
INITS = ("randn", "rand", "zeros", "ones", "randint:LO:HI", "arange", "values")
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
INT64_MAX = 2 ** 63 - 1  # sizes are int64 to torch and Triton
_FIELDS = ("source", "kernel", "inputs", "inputs_fn", "outputs", "launch", "reference", "shapes",
           "baseline", "writes_inputs", "space", "cost", "description", "python_path", "dtypes")
_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8_e4m3fn": 1,
                "float8_e5m2": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1,
                "bool": 1}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REF = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$")
# HI may name a shape symbol: indices into a dimension that the check shapes shrink
_RANDINT = re.compile(r"^randint:(-?\d+):(-?\d+|[A-Za-z_][A-Za-z0-9_]*)$")

# The expression subset shared with the C side (shape sizes, constraints): numbers, names,
# + - * / // % **, comparisons, and/or/not, min() and max().
_ARITH = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.Add,
          ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd)
_LOGIC = _ARITH + (ast.BoolOp, ast.And, ast.Or, ast.Not, ast.Compare, ast.Lt, ast.LtE, ast.Gt,
                   ast.GtE, ast.Eq, ast.NotEq, ast.Call)
_FUNCS = {"min": min, "max": max}


class TaskError(ValueError):
    """A malformed task; `errors` lists one 'file: field: problem' line per problem."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class Problems:
    """Collects errors so that one run reports every malformed field."""

    def __init__(self, path):
        self.path = path
        self.errors = []

    def add(self, field, expected, got=None, has_got=True):
        msg = f"{self.path}: {field}: expected {expected}"
        if has_got:
            msg += f", got {json.dumps(got) if _jsonable(got) else repr(got)}"
        self.errors.append(msg)

    def note(self, field, text):
        self.errors.append(f"{self.path}: {field}: {text}")

    def raise_if_any(self):
        if self.errors:
            raise TaskError(self.errors)


def _jsonable(v):
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


def parse_expression(text, allowed_nodes):
    """Parse an expression of the restricted subset; returns (tree, names) or raises ValueError."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not a valid expression ({e.msg})") from None
    names = set()
    for n in ast.walk(tree):
        if not isinstance(n, allowed_nodes):
            raise ValueError(f"'{ast.unparse(n) if isinstance(n, ast.AST) else n}' is not allowed")
        if isinstance(n, ast.Constant) and type(n.value) not in (int, float, bool):
            raise ValueError(f"constant {n.value!r} is not a number")
        if isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name) or n.func.id not in _FUNCS or n.keywords:
                raise ValueError("only min(...) and max(...) may be called")
        elif isinstance(n, ast.Name) and n.id not in _FUNCS:
            names.add(n.id)
    return tree, names


def eval_expression(text, env):
    """Evaluate an expression of the restricted subset (already validated) over `env`."""
    return eval(compile(text, "<expr>", "eval"), {"__builtins__": {}, **_FUNCS}, dict(env))


def _python_expression(text):
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not a valid Python expression ({e.msg})") from None


def python_names(text):
    """Names a (full Python) expression reads, lambda and comprehension variables included."""
    return {n.id for n in ast.walk(_python_expression(text)) if isinstance(n, ast.Name)}


def _is_scalar(v):
    return isinstance(v, (bool, int, float, str))


def _check_ref(p, field, v):
    if not isinstance(v, str) or not _REF.match(v):
        p.add(field, "\"module:function\"", v)
        return None
    return v


def _check_inputs(p, inputs, outputs_names):
    out = []
    if not isinstance(inputs, list) or not inputs:
        p.add("inputs", "a non-empty list of tensors", inputs)
        return out
    seen = set()
    for i, spec in enumerate(inputs):
        f = f"inputs[{i}]"
        if not isinstance(spec, dict):
            p.add(f, "an object {name, shape, dtype, init, scale}", spec)
            continue
        for k in spec:
            if k not in ("name", "shape", "dtype", "init", "scale", "values", "order",
                         "requires_grad"):
                p.add(f"{f}.{k}", "one of name, shape, dtype, init, scale, values, order, "
                      "requires_grad (unknown field)", has_got=False)
        name = spec.get("name")
        if not isinstance(name, str) or not _IDENT.match(name):
            p.add(f"{f}.name", "an identifier", name)
        elif name in seen:
            p.add(f"{f}.name", "a name not used by another input", name)
        seen.add(name)
        shape = spec.get("shape")
        dims = []
        if not isinstance(shape, list):
            p.add(f"{f}.shape", "a list of sizes (integers or expressions over shape symbols)",
                  shape)
        else:
            for j, d in enumerate(shape):
                if isinstance(d, bool) or not isinstance(d, (int, str)) or \
                        (isinstance(d, int) and d < 0):
                    p.add(f"{f}.shape[{j}]", "a size >= 0 or an expression over shape symbols", d)
                    continue
                if isinstance(d, str):
                    try:
                        parse_expression(d, _ARITH)
                    except ValueError as e:
                        p.add(f"{f}.shape[{j}]", f"an arithmetic expression ({e})", d)
                        continue
                dims.append(d)
        dtype = spec.get("dtype")
        if dtype not in DTYPES:
            p.add(f"{f}.dtype", f"one of {', '.join(DTYPES)}", dtype)
        is_output = name in outputs_names
        init = spec.get("init", "zeros" if is_output else None)
        m = _RANDINT.match(init) if isinstance(init, str) else None
        if init is None:
            p.add(f"{f}.init", f"one of {', '.join(INITS)} (required for a tensor that is not "
                  "an output)", has_got=False)
        elif not (init in INITS or m):
            p.add(f"{f}.init", f"one of {', '.join(INITS)}", init)
        elif m and m.group(2).lstrip("-").isdigit() and int(m.group(1)) >= int(m.group(2)):
            p.add(f"{f}.init", "randint:LO:HI with LO < HI", init)
        elif init in ("randn", "rand") and dtype in DTYPES and dtype not in FLOAT_DTYPES:
            p.add(f"{f}.init", f"randint:LO:HI, zeros, ones or arange for dtype {dtype}", init)
        values = spec.get("values")
        if init == "values" and not (
                isinstance(values, list) and
                all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) and
                all(isinstance(d, int) for d in dims) and len(values) == math.prod(dims)):
            p.add(f"{f}.values", "with init values: a list of numbers, as many as the shape "
                  "(of fixed sizes) holds", values)
        scale = spec.get("scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            p.add(f"{f}.scale", "a number", scale)
        order = spec.get("order")
        if order is not None and sorted(order) != list(range(len(dims))):
            p.add(f"{f}.order", f"a permutation of 0..{len(dims) - 1} (the dimensions from the "
                  "outermost in memory to the innermost)", order)
        requires_grad = spec.get("requires_grad", False)
        if not isinstance(requires_grad, bool):
            p.add(f"{f}.requires_grad", "true or false", requires_grad)
        elif requires_grad and dtype in DTYPES and dtype not in FLOAT_DTYPES:
            p.add(f"{f}.requires_grad", f"false for dtype {dtype} (only floating tensors take "
                  "gradients)", requires_grad)
        out.append({"name": name, "shape": dims, "dtype": dtype, "init": init, "scale": scale,
                    **({"values": values} if init == "values" else {}),
                    **({"order": order} if order else {}),
                    **({"requires_grad": True} if requires_grad is True else {})})
    return out


def _check_outputs(p, outputs):
    out = []
    if not isinstance(outputs, list) or not outputs:
        p.add("outputs", "a non-empty list of {name, atol, rtol}", outputs)
        return out
    for i, spec in enumerate(outputs):
        f = f"outputs[{i}]"
        if not isinstance(spec, dict):
            p.add(f, "an object {name, atol, rtol}", spec)
            continue
        for k in spec:
            if k not in ("name", "atol", "rtol", "poison"):
                p.add(f"{f}.{k}", "one of name, atol, rtol, poison (unknown field)",
                      has_got=False)
        if not isinstance(spec.get("name"), str) or not _IDENT.match(spec.get("name")):
            p.add(f"{f}.name", "the name of an input tensor", spec.get("name"))
        for tol in ("atol", "rtol"):
            v = spec.get(tol)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                p.add(f"{f}.{tol}", "a number >= 0", v)
        poison = spec.get("poison", True)
        if not isinstance(poison, bool):
            p.add(f"{f}.poison", "true or false", poison)
        out.append({"name": spec.get("name"), "atol": spec.get("atol"),
                    "rtol": spec.get("rtol"), "poison": poison})
    return out


def _check_expression(p, field, a, expected="a Python expression"):
    """A Python expression (a number allowed) -> its text, or None."""
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        a = repr(a)
    if not isinstance(a, str):
        p.add(field, f"{expected} (a string) or a number", a)
        return None
    try:
        _python_expression(a)
    except ValueError as e:
        p.add(field, f"{expected} ({e})", a)
    return a


def _check_expressions(p, field, values):
    if not isinstance(values, list):
        p.add(field, "a list of argument expressions", values)
        return []
    texts = [_check_expression(p, f"{field}[{i}]", a) for i, a in enumerate(values)]
    return [t for t in texts if t is not None]


def _check_keywords(p, field, values):
    """{name: expression} -> the same with texts."""
    if not isinstance(values, dict):
        p.add(field, "an object {parameter: expression}", values)
        return {}
    out = {}
    for name, a in values.items():
        if not _IDENT.match(name):
            p.add(f"{field}.{name}", "a parameter name (identifier)", name)
        text = _check_expression(p, f"{field}.{name}", a)
        if text is not None:
            out[name] = text
    return out


_GRID = "a Python expression giving the grid tuple"
_LAUNCH_FORMS = {"grid": ("grid", "args", "kwargs"), "call": ("call", "args", "kwargs",
                                                             "returns", "grid"),
                 "wrapper": ("wrapper",)}


def _check_launch(p, launch):
    forms = [f for f in ("call", "wrapper") if isinstance(launch, dict) and f in launch]
    if isinstance(launch, dict) and not forms and "grid" in launch:
        forms = ["grid"]
    if len(forms) != 1:
        p.add("launch", "an object with one of \"call\" (the file's own function), \"grid\" "
              "and \"args\" (the kernel itself), or \"wrapper\"", launch)
        return None
    form = forms[0]
    for k in launch:
        if k not in _LAUNCH_FORMS[form]:
            p.add(f"launch.{k}", f"one of {', '.join(_LAUNCH_FORMS[form])} with launch.{form} "
                  "(unknown field)", has_got=False)
    if form == "wrapper":
        return {"wrapper": _check_ref(p, "launch.wrapper", launch["wrapper"])}
    out = {"args": _check_expressions(p, "launch.args", launch.get("args", [])),
           "kwargs": _check_keywords(p, "launch.kwargs", launch.get("kwargs", {}))}
    if form == "grid":
        if "args" not in launch:
            p.add("launch.args", "a list of argument expressions", has_got=False)
        return {"grid": _check_expression(p, "launch.grid", launch["grid"], _GRID), **out}
    out["call"] = _check_ref(p, "launch.call", launch["call"])
    out["grid"] = _check_expression(p, "launch.grid", launch["grid"], _GRID) \
        if "grid" in launch else None
    returns = launch.get("returns", [])
    if isinstance(returns, str):
        returns = [returns]
    if not isinstance(returns, list) or not all(r is None or (isinstance(r, str) and
                                                              _IDENT.match(r)) for r in returns):
        p.add("launch.returns", "a list of names (null for a returned value not compared)",
              returns)
        returns = []
    out["returns"] = list(returns)
    return out


def _check_shapes(p, shapes, symbols):
    out = {"tune": [], "check": []}
    if not isinstance(shapes, dict):
        p.add("shapes", "an object {\"tune\": [...], \"check\": [...]}", shapes)
        return out
    for k in shapes:
        if k not in out:
            p.add(f"shapes.{k}", "tune or check (unknown field)", has_got=False)
    for kind in out:
        lst = shapes.get(kind)
        if not isinstance(lst, list) or not lst:
            p.add(f"shapes.{kind}", "a non-empty list of {symbol: size} objects", lst)
            continue
        for i, s in enumerate(lst):
            f = f"shapes.{kind}[{i}]"
            if not isinstance(s, dict) or not s:
                p.add(f, "an object {symbol: size}", s)
                continue
            for name, v in s.items():
                if not _IDENT.match(name):
                    p.add(f"{f}.{name}", "a symbol name (identifier)", name)
                if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= INT64_MAX:
                    p.add(f"{f}.{name}", f"an integer from 1 to {INT64_MAX} (int64)", v)
            for sym in sorted(symbols - set(s)):
                p.add(f, f"a size for symbol '{sym}' (used in inputs[].shape)", has_got=False)
            out[kind].append(dict(s))
    return out


def _check_cost(p, cost, symbols):
    """{"bytes": EXPR, "flops": EXPR}, each optional, arithmetic over the shape symbols."""
    if cost is None:
        return {}
    if not isinstance(cost, dict):
        p.add("cost", "an object {\"bytes\": EXPR, \"flops\": EXPR}", cost)
        return {}
    out = {}
    for k, v in cost.items():
        if k not in ("bytes", "flops"):
            p.add(f"cost.{k}", "bytes or flops (unknown field)", has_got=False)
            continue
        text = str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
        try:
            unknown = parse_expression(text, _ARITH)[1] - symbols
        except (ValueError, SyntaxError, TypeError) as e:
            p.add(f"cost.{k}", "an arithmetic expression over the shape symbols", f"{v} ({e})")
            continue
        if unknown:
            p.add(f"cost.{k}", "names that are shape symbols only", ", ".join(sorted(unknown)))
            continue
        out[k] = text
    return out


def cost_at(spec, shape):
    """The launch's DRAM bytes and flops at `shape`: the task's `cost` expressions, else for
    bytes the tensors' sizes (inputs read once, outputs written once: the compulsory traffic);
    None where neither says. Returns {"bytes", "flops", "bytes_from": "task" | "tensors" | None}."""
    cost = spec.get("cost") or {}
    out = {k: float(eval_expression(cost[k], shape)) if k in cost else None
           for k in ("bytes", "flops")}
    out["bytes_from"] = "task" if "bytes" in cost else None
    if out["bytes"] is None and spec.get("inputs"):
        total = 0
        for t in spec["inputs"]:
            n = 1
            for d in t["shape"]:
                n *= d if isinstance(d, int) else eval_expression(d, shape)
            written = any(o["name"] == t["name"] for o in spec["outputs"])
            read = not written or not any(o["name"] == t["name"] and o["poison"]
                                          for o in spec["outputs"])
            total += n * _DTYPE_BYTES[t["dtype"]] * (int(read) + int(written))
        out["bytes"], out["bytes_from"] = float(total), "tensors"
    return out


def check_config(p, field, cfg):
    """A config: values are numbers, booleans, strings, or {"expr": EXPR}, a Python expression
    over the shape's symbols (with triton, math, cdiv) evaluated per shape."""
    if not isinstance(cfg, dict):
        p.add(field, "an object {parameter: value}", cfg)
        return None
    for k, v in cfg.items():
        if not _IDENT.match(k):
            p.add(f"{field}.{k}", "a parameter name (identifier)", k)
        if isinstance(v, dict):
            if set(v) != {"expr"} or not isinstance(v["expr"], str):
                p.add(f"{field}.{k}", "{\"expr\": \"expression over shape symbols\"}", v)
            else:
                try:
                    _python_expression(v["expr"])
                except ValueError as e:
                    p.add(f"{field}.{k}.expr", f"a Python expression ({e})", v["expr"])
        elif not _is_scalar(v):
            p.add(f"{field}.{k}", "a number, boolean, string or {\"expr\": ...}", v)
        elif k in LAUNCH_OPTIONS and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            p.add(f"{field}.{k}", "an integer >= 1", v)
    return dict(cfg)


def _check_baseline(p, baseline):
    """None, a config, a list of configs, or "module:function" (called with the shape)."""
    if baseline is None:
        return None
    if isinstance(baseline, str):
        return _check_ref(p, "baseline", baseline)
    if isinstance(baseline, dict):
        return [check_config(p, "baseline", baseline)]
    if isinstance(baseline, list) and baseline:
        return [check_config(p, f"baseline[{i}]", c) for i, c in enumerate(baseline)]
    p.add("baseline", "a config object, a non-empty list of them, or \"module:function\"",
          baseline)
    return None


def substitute(text, values):
    """An expression of the restricted subset with some names replaced by numbers."""
    tree = ast.parse(text, mode="eval")

    class Bind(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in values:
                return ast.copy_location(ast.Constant(values[node.id]), node)
            return node
    return ast.unparse(Bind().visit(tree))


def _check_space(p, space, symbols):
    out = {"params": {}, "constraints": []}
    if space is None:
        return out
    if not isinstance(space, dict):
        p.add("space", "an object {\"params\": {...}, \"constraints\": [...]}", space)
        return out
    for k in space:
        if k not in out:
            p.add(f"space.{k}", "params or constraints (unknown field)", has_got=False)
    params = space.get("params", {})
    if not isinstance(params, dict):
        p.add("space.params", "an object {name: [values]}", params)
        params = {}
    for name, values in params.items():
        f = f"space.params.{name}"
        if not _IDENT.match(name):
            p.add(f, "a parameter name (identifier)", name)
        if not isinstance(values, list) or not values or not all(map(_is_scalar, values)):
            p.add(f, "a non-empty list of numbers, booleans or strings", values)
            continue
        if len(set(map(json.dumps, values))) != len(values):
            p.add(f, "a list without repeated values", values)
        if name in LAUNCH_OPTIONS and not all(isinstance(v, int) and not isinstance(v, bool)
                                              and v >= 1 for v in values):
            p.add(f, "integers >= 1", values)
        out["params"][name] = list(values)
    constraints = space.get("constraints", [])
    if not isinstance(constraints, list):
        p.add("space.constraints", "a list of expression strings", constraints)
        constraints = []
    for i, c in enumerate(constraints):
        f = f"space.constraints[{i}]"
        if not isinstance(c, str):
            p.add(f, "an expression string", c)
            continue
        try:
            _, names = parse_expression(c, _LOGIC)
        except ValueError as e:
            p.add(f, f"an expression over parameters and shape symbols ({e})", c)
            continue
        for n in sorted(names - set(params) - symbols):
            p.add(f, f"names of space.params and shape symbols; '{n}' is neither", c)
        out["constraints"].append(c)
    return out


def validate(doc, path):
    """Check a parsed task document; returns the normalised manifest or raises TaskError."""
    path = os.path.abspath(path)
    p = Problems(path)
    if not isinstance(doc, dict):
        p.add("(top level)", "an object", doc)
        p.raise_if_any()
    folder = os.path.dirname(path)
    for k in doc:
        if k not in _FIELDS:
            p.add(k, f"one of {', '.join(_FIELDS)} (unknown field)", has_got=False)

    source = doc.get("source")
    if not isinstance(source, str) or not source.endswith(".py"):
        p.add("source", "the path of a Triton .py file, relative to the task file", source)
        source = None
    elif not os.path.isfile(os.path.join(folder, source)):
        p.add("source", f"an existing file (looked for {os.path.join(folder, source)})", source)
        source = None
    else:
        source = os.path.normpath(os.path.join(folder, source))

    kernel = doc.get("kernel")
    if not isinstance(kernel, str) or not _IDENT.match(kernel):
        p.add("kernel", "the name of the @triton.jit function", kernel)

    outputs = _check_outputs(p, doc.get("outputs"))
    out_names = {o["name"] for o in outputs}
    inputs, inputs_fn = None, None
    if ("inputs" in doc) == ("inputs_fn" in doc):
        p.add("inputs", "either \"inputs\" (a list of tensors) or \"inputs_fn\" "
              "(\"module:function\"), not both and not neither", has_got=False)
    elif "inputs" in doc:
        inputs = _check_inputs(p, doc["inputs"], out_names)
        names = {i["name"] for i in inputs}
    else:
        inputs_fn = _check_ref(p, "inputs_fn", doc["inputs_fn"])

    symbols = set()
    for i, spec in enumerate(inputs or []):
        for d in spec["shape"]:
            if isinstance(d, str):
                symbols |= parse_expression(d, _ARITH)[1]

    launch = _check_launch(p, doc.get("launch"))
    returned = [r for r in (launch or {}).get("returns", []) if r]
    if inputs is not None:
        known = names | set(returned)
        for i, o in enumerate(outputs):
            if isinstance(o["name"], str) and o["name"] not in known:
                p.add(f"outputs[{i}].name", "the name of an input or of launch.returns "
                      f"({', '.join(sorted(known))})", o["name"])
    for i, o in enumerate(outputs):
        if o["name"] in returned and o["name"] in (names if inputs is not None else ()):
            p.add(f"outputs[{i}].name", "a name used by one of inputs and launch.returns only",
                  o["name"])
    reference = doc.get("reference")
    if reference != "baseline":
        reference = _check_ref(p, "reference", reference)
    shapes = _check_shapes(p, doc.get("shapes"), symbols)

    baseline = _check_baseline(p, doc.get("baseline"))
    writes_inputs = doc.get("writes_inputs", any(not o["poison"] for o in outputs))
    if not isinstance(writes_inputs, bool):
        p.add("writes_inputs", "true or false", writes_inputs)
    shape_symbols = symbols | {k for lst in shapes.values() for sh in lst for k in sh}
    space = _check_space(p, doc.get("space"), shape_symbols)
    cost = _check_cost(p, doc.get("cost"), shape_symbols)
    python_path = _check_python_path(p, doc.get("python_path", []), folder)
    dtypes = _check_dtypes(p, doc.get("dtypes"))
    if dtypes and inputs is None:
        p.add("dtypes", "no dtypes with an inputs_fn (it makes its inputs itself)", dtypes)
    p.raise_if_any()
    return {
        "id": path, "dir": folder, "source": source, "kernel": kernel, "inputs": inputs,
        "inputs_fn": inputs_fn, "outputs": outputs, "launch": launch, "reference": reference,
        "shapes": shapes, "baseline": baseline, "writes_inputs": writes_inputs, "space": space,
        "cost": cost, "description": doc.get("description", ""), "python_path": python_path,
        "dtypes": dtypes,
    }


def _check_dtypes(p, value):
    """dtypes: the floating dtypes the task's floating inputs may take (the first the default);
    None when absent (the inputs keep their own)."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or \
            any(d not in FLOAT_DTYPES for d in value) or len(set(value)) != len(value):
        p.add("dtypes", f"a non-empty list of distinct floating dtypes ({', '.join(FLOAT_DTYPES)})",
              value)
        return None
    return list(value)


def _check_python_path(p, value, folder):
    """python_path: folders (relative to the task file) to put on sys.path; absolute."""
    if not isinstance(value, list):
        p.add("python_path", "a list of folders, relative to the task file", value)
        return []
    out = []
    for i, d in enumerate(value):
        if not isinstance(d, str) or not d:
            p.add(f"python_path[{i}]", "a folder, relative to the task file", d)
        elif not os.path.isdir(os.path.join(folder, d)):
            p.add(f"python_path[{i}]", f"an existing folder (looked for "
                  f"{os.path.normpath(os.path.join(folder, d))})", d)
        else:
            out.append(os.path.normpath(os.path.join(folder, d)))
    return out


def read(path):
    """Read and validate a task file."""
    where = os.path.abspath(path)

    def no_constant(name):
        raise ValueError(f"{name} is not a number JSON allows")

    def finite(text):
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{text} is too large for a number")
        return value

    # told by stat, which never waits: opening a FIFO would wait for a writer for good
    if os.path.exists(path) and not os.path.isfile(path):
        kind = "a directory" if os.path.isdir(path) else "a FIFO, device or socket"
        raise TaskError([f"{where}: not a regular file ({kind}): expected a task file"])
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_constant=no_constant, parse_float=finite)
    except OSError as e:
        raise TaskError([f"{where}: cannot read: {e.strerror}"]) from None
    except json.JSONDecodeError as e:
        raise TaskError([f"{where}:{e.lineno}:{e.colno}: not JSON: {e.msg}"]) from None
    except UnicodeDecodeError as e:
        raise TaskError([f"{where}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                         f"{e.start})"]) from None
    except RecursionError:
        raise TaskError([f"{where}: not JSON this engine reads: nested too deeply"]) from None
    except ValueError as e:
        raise TaskError([f"{where}: not JSON: {e}"]) from None
    _refuse_surrogates(doc, where)
    return validate(doc, path)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_surrogates(doc, where):
    """A JSON \\u escape may spell half of a UTF-16 pair alone: no character, and no UTF-8 text
    (the engine's documents, the reports, the store) can hold it. Each field holding one is
    named, before anything else is read from the task."""
    p = Problems(where)
    todo = collections.deque([("", doc)])
    while todo:  # not recursive: a document as deep as the JSON reader allows
        field, value = todo.popleft()
        items = value.items() if isinstance(value, dict) else \
            enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            if isinstance(value, list):
                name = f"{field}[{key}]"
            elif _SURROGATE.search(key):
                name = f"{field}.{key!a}" if field else ascii(key)
                p.add(name, "a field name of Unicode characters (a lone UTF-16 surrogate "
                      "escape, \\ud800 to \\udfff, is none)", has_got=False)
                continue
            else:
                name = f"{field}.{key}" if field else key
            lone = _SURROGATE.search(item) if isinstance(item, str) else None
            if lone:
                p.add(name, "text of Unicode characters, got a lone UTF-16 surrogate escape "
                      f"\\u{ord(lone.group()):04x} at character {lone.start()}", has_got=False)
            todo.append((name, item))
    p.raise_if_any()
