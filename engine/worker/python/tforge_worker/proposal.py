"""A model's answer, checked before anything of it runs.

`check_answer(answer, kernel, source)` takes the model's message, the kernel's name and the kernel
file's text, and returns {status: "ok", source, reason: ""} with the proposal's whole file, or
{status: "refused", source: None, reason} with one line saying why. Nothing here imports, compiles
or runs the answer: it is read with Python's `ast` alone.

The checks, in order (those on names and torch read only what the model wrote: a top-level
statement of the file kept as it is, a reference computing with torch, is the user's own code):
  * a code block: the fenced block that defines the kernel (else the first), or the whole message
    when it parses as Python and defines the kernel;
  * it parses;
  * it imports only triton, triton.language, torch and math (and names from them);
  * no name or call that reaches outside the kernel's business: exec, eval, compile, open,
    __import__, globals, locals, vars, getattr, setattr, delattr, breakpoint, input, and no
    dunder attribute or name but `__name__` (`__builtins__`, `__class__`, `__globals__` ...);
  * torch only to allocate and describe tensors, never to compute the answer: `torch.X` only for
    the allocators, dtypes and device queries of TORCH_ALLOWED; outside `@triton.jit` functions
    a method is called only when it is one of METHODS_ALLOWED (layout and metadata: `x.stride`,
    `x.view` ...; not `x.sum`, `x.softmax`), and the `@` operator not at all. Element-wise
    operators on tensors in the wrapper cannot be told from integer arithmetic by reading the
    source; the check on fresh inputs and outputs poisoned is what stands there;
  * the kernel is one @triton.jit function (triton's decorators only: none of the answer's own,
    which could cache or skip launches), bound once, and keeps its name and its parameters (in
    order, with `tl.constexpr` where the file has it, so that the search can re-tune the block
    sizes), and every other function at the file's top level keeps its name and parameters (the
    wrapper's contract).
Only the kernel of a proposal runs: the worker swaps it in for the file's (variants.py) and
keeps the file's wrappers and reference; the rest of the proposal's file is executed when it is
loaded, which is why all of it is checked.
"""

import ast
import re

MODULES_ALLOWED = ("triton", "triton.language", "torch", "math")
NAMES_REFUSED = frozenset((
    "exec", "eval", "compile", "open", "__import__", "globals", "locals", "vars", "getattr",
    "setattr", "delattr", "breakpoint", "input", "memoryview", "help", "exit", "quit"))
DUNDERS_ALLOWED = frozenset(("__name__",))
TORCH_ALLOWED = frozenset((
    # allocators: the outputs the kernel writes
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "full", "full_like",
    # dtypes and their limits
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16",
    "int32", "int64", "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "dtype", "finfo", "iinfo",
    # what a wrapper asks about tensors and devices
    "Tensor", "Size", "device", "cuda", "get_device_properties", "current_device",
    "is_available", "is_tensor"))
METHODS_ALLOWED = frozenset((
    "stride", "size", "numel", "dim", "element_size", "is_contiguous", "contiguous", "view",
    "reshape", "flatten", "unsqueeze", "squeeze", "t", "transpose", "permute", "expand",
    "new_empty", "new_zeros", "data_ptr", "get_device_properties", "current_device",
    "is_available", "get", "items", "keys", "values", "append", "extend", "index", "format",
    "cdiv", "next_power_of_2"))

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)


class Refused(Exception):
    """Why an answer is refused, one line."""


def _defines(tree, name):
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def extract(answer, kernel):
    """The answer's code: the fenced block that defines `kernel`, else the first fenced block,
    else the whole answer when it is Python that defines `kernel`. Raises Refused when there is
    none."""
    if not isinstance(answer, str) or not answer.strip():
        raise Refused("the answer is empty")
    blocks = [body for lang, body in _FENCE.findall(answer)
              if lang.lower() in ("", "python", "py", "python3")]
    for body in blocks:
        if re.search(r"^\s*def\s+%s\s*\(" % re.escape(kernel), body, re.M):
            return body
    if blocks:
        return blocks[0]
    try:
        if _defines(ast.parse(answer), kernel):
            return answer
    except SyntaxError:
        pass
    raise Refused("the answer holds no code block")


def _parse(code):
    try:
        return ast.parse(code)
    except SyntaxError as e:
        raise Refused(f"the code does not parse: line {e.lineno}: {e.msg}") from None


def _is_jit(fn):
    """Whether a function is a Triton kernel (@triton.jit, @jit, @triton.autotune(...) over one)."""
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        text = ast.unparse(target)
        if text.split(".")[-1] in ("jit", "autotune", "heuristics"):
            return True
    return False


def _check_imports(tree):
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name not in MODULES_ALLOWED:
                    raise Refused(f"line {n.lineno}: imports {a.name}; only "
                                  f"{', '.join(MODULES_ALLOWED)} may be imported")
        elif isinstance(n, ast.ImportFrom):
            if n.level or n.module not in MODULES_ALLOWED:
                raise Refused(f"line {n.lineno}: imports from {'.' * n.level}{n.module or ''}; "
                              f"only {', '.join(MODULES_ALLOWED)} may be imported")
            for a in n.names:
                if a.name == "*":
                    raise Refused(f"line {n.lineno}: imports * from {n.module}")


def _torch_aliases(tree):
    """The names torch is bound to (`import torch`, `import torch as th`)."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names.update(a.asname or a.name for a in n.names if a.name == "torch")
    return names


def _walk(nodes):
    for top in nodes:
        yield from ast.walk(top)


def _check_names(nodes):
    for n in _walk(nodes):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else \
            n.name if isinstance(n, ast.alias) else None
        if name is None:
            continue
        if name in NAMES_REFUSED:
            raise Refused(f"line {n.lineno}: uses {name}, which a kernel file may not")
        if name.startswith("__") and name.endswith("__") and name not in DUNDERS_ALLOWED:
            raise Refused(f"line {n.lineno}: reaches {name}, which a kernel file may not")


def _torch_chain(node, aliases):
    """`torch.a.b` as ["a", "b"] when `node` is an attribute chain on torch, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases and parts:
        return parts[::-1]
    return None


def _check_torch(nodes, aliases):
    jit_nodes = set()
    for fn in _walk(nodes):
        if isinstance(fn, ast.FunctionDef) and _is_jit(fn):
            jit_nodes.update(id(n) for n in ast.walk(fn))
    for n in _walk(nodes):
        if isinstance(n, ast.Attribute):
            chain = _torch_chain(n, aliases)
            if chain and any(p not in TORCH_ALLOWED for p in chain):
                raise Refused(f"line {n.lineno}: calls torch.{'.'.join(chain)}: torch may only "
                              f"allocate and describe tensors, the kernel computes the answer")
        if id(n) in jit_nodes:
            continue
        if isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ast.MatMult):
            raise Refused(f"line {n.lineno}: multiplies tensors with @ outside the kernel")
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            owner = n.func.value
            on_module = isinstance(owner, ast.Name) and owner.id in ("triton", "tl", "math") or \
                _torch_chain(n.func, aliases) is not None
            if not on_module and n.func.attr not in METHODS_ALLOWED:
                raise Refused(f"line {n.lineno}: calls .{n.func.attr}() outside the kernel: the "
                              f"wrapper may only allocate, describe and launch")


def _params(fn):
    """A function's parameters as (name, constexpr) pairs, in order."""
    a = fn.args
    every = a.posonlyargs + a.args + ([a.vararg] if a.vararg else []) + a.kwonlyargs + \
        ([a.kwarg] if a.kwarg else [])
    return [(p.arg, p.annotation is not None and
             ast.unparse(p.annotation).split(".")[-1] == "constexpr") for p in every]


def _check_contract(tree, original, kernel):
    mine = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    theirs = [n for n in original.body if isinstance(n, ast.FunctionDef)]
    if kernel not in mine:
        raise Refused(f"the kernel {kernel} is not defined at the file's top level")
    for fn in theirs:
        if fn.name not in mine:
            raise Refused(f"the function {fn.name} of the file is gone (its wrapper contract)")
        was, now = _params(fn), _params(mine[fn.name])
        if [p for p, _ in was] != [p for p, _ in now]:
            raise Refused(f"{fn.name}'s parameters changed: ({', '.join(p for p, _ in was)}) "
                          f"became ({', '.join(p for p, _ in now)})")
        lost = [p for (p, c), (_, k) in zip(was, now) if c and not k]
        if lost:
            raise Refused(f"{fn.name}: {', '.join(lost)} must stay tl.constexpr (the search "
                          f"re-tunes them)")
    if not _is_jit(mine[kernel]):
        raise Refused(f"the kernel {kernel} is no longer a @triton.jit function")
    for d in mine[kernel].decorator_list:
        name = ast.unparse(d.func if isinstance(d, ast.Call) else d)
        if name.split(".")[-1] not in ("jit", "autotune", "heuristics") or \
                name.split(".")[0] not in ("triton", "jit", "autotune", "heuristics"):
            raise Refused(f"the kernel {kernel} is decorated with {name}: only triton's jit, "
                          f"autotune and heuristics may wrap it")
    for n in tree.body:
        targets = n.targets if isinstance(n, ast.Assign) else \
            [n.target] if isinstance(n, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == kernel for t in targets) or \
                (isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == kernel and
                 n is not mine[kernel]):
            raise Refused(f"line {n.lineno}: {kernel} is bound again after its definition")


def _written(tree, original):
    """The proposal's top-level statements the model wrote: those not in the file as they are
    (the user's own code, a reference that computes with torch, is trusted as it is)."""
    theirs = {ast.dump(n) for n in original.body}
    return [n for n in tree.body if ast.dump(n) not in theirs]


def check_answer(answer, kernel, source):
    """The model's `answer` checked against the kernel file's text `source` for kernel `kernel`:
    {status: ok, source: the proposal's file, reason: ""} or {status: refused, source: None,
    reason: one line}."""
    try:
        code = extract(answer, kernel)
        tree, original = _parse(code), ast.parse(source)
        _check_imports(tree)
        written = _written(tree, original)
        _check_names(written)
        _check_torch(written, _torch_aliases(tree))
        _check_contract(tree, original, kernel)
    except Refused as e:
        return {"status": "refused", "source": None, "reason": str(e)}
    if not code.endswith("\n"):
        code += "\n"
    return {"status": "ok", "source": code, "reason": ""}
