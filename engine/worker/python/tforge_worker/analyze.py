"""Static analysis of a Triton source file: what `tforge analyze` prints and `capture` builds on.

The file is parsed with `ast` and never imported or run. `analyze(path, kernel=None)` returns
one JSON-able document (the IR): every `@triton.jit` function with its parameters, loops, memory
operations, dots, reductions, atomics, program ids, calls, decorators, launch sites and the
tunables inferred from them; the file's other functions; its module-level device queries. Every
node carries a span {line, col, end_line, end_col}: lines from 1, columns in UTF-8 bytes from 0
(as `ast` counts), so that a later rewrite can cut the source at exactly those bytes.

Parameter kinds: `constexpr` when annotated `tl.constexpr`; `pointer` when it is the base of the
address of a load, store, atomic, block pointer or descriptor (offsets are products, so in
`X + row * stride` only X is a base), or its name ends in `ptr`; else `scalar`. A pointer has
`written_only` when the kernel stores through it and never reads it, `stored` when a store or an
atomic reaches it at all, `bounding_loads` when the values loaded from it bound a loop or an
ordering comparison (lengths and offsets: `seq_lens`, `cu_seqlens`), as no mere index does.

Constexpr uses, from the nearest enclosing construct of each occurrence: `arange` (an argument of
tl.arange), `loop_step` / `loop_bound` (step / start or stop of range or tl.range),
`static_range`, `shape` (tl.zeros, tl.full, reshape, view, block_shape), `condition` (the test
of an `if` or a ternary), `dot` (an argument of tl.dot), `mask` (in a mask); anything else is
`other`. Two uses are derived from tile shapes (tracked through assignments, broadcasting and
`[:, None]` indexing): `mask` when a tile along the constexpr's extent is compared in a mask, a
tl.where condition or covered by a block pointer's boundary_check; `dot` when it is a dimension
of a tl.dot operand.

Tunable rules, in order, for each constexpr:
  1. set by @triton.heuristics: fixed;
  2. a dtype (default `tl.*` that is not a number, or DTYPE in the name): fixed;
  3. used as a tl.range `num_stages=`: kind `stages`;
  4. GROUP in the name (and no arange extent): kind `group`;
  5. no tile extent, i.e. neither an arange extent nor a loop step nor the extent of a masked
     tile (or of a block pointer's block_shape): fixed (a flag when used in conditions, a
     static loop count under tl.static_range, else not a size; a bound in a mask, a shape or a
     dot dimension alone is a count, a stride or a per-group size, not a tile);
  6. an arange extent whose tiles are never masked and never a loop step: fixed, it must equal
     a size (a head dimension);
  7. the extent of a tile a store or atomic writes with no mask (or boundary_check) over that
     axis, and no loop step: fixed, it must fit the buffer (a padded head count);
  8. a loop step: kind `step`; otherwise kind `block`;
  9. then, a block, step or group that a launch passes as a name unpacked from (or indexed in) a
     tensor's `.shape`, or through `**config` while the launching function reads
     `config["NAME"]` itself (outside the grid), or as a local the launching function also
     sizes a tensor with (torch.empty/zeros/..., view, reshape, expand, pad): fixed, the host's
     layout or padding holds it.
Then `num_warps` (kind `warps`) and `num_stages` (kind `stages`; without loops it changes
nothing, and its domain is the launched value alone).
Last, the file's own @triton.autotune configs: a constexpr, num_warps or num_stages whose value
differs across them gets `levels` (the values they use); one the rules above fixed (other than
by heuristics or as a dtype) becomes kind `block` with `only_levels`: the configs are the file's
word that those values keep the result. The config list is evaluated without running the file
(_Static): literals, module-level names, list comprehensions, filter/list/slices taken as the
whole list, both branches of a condition it cannot decide.

Constraints (expression texts over the kernel's parameter names):
  - `X >= n` when `tl.arange(0, X)` itself (through names, not offset by a program id or a loop
    variable) is masked by `< n`, n made of kernel parameters, and X is not a loop step: one
    block covers the row;
  - for kernels with tl.dot, a shared-memory estimate: the sum over dot operands that are loaded
    tiles of rows*cols, times the operand's element size (from an explicit `.to(tl.X)`, else 2),
    times num_stages when there are loops, `<= 232448` (an H100/H200's shared memory per block).

`infer_space(ir_kernel, bound)` turns the tunables into values around one real launch (`bound`:
the launch's values of the kernel's parameters, num_warps and num_stages): a block covering a row
of n: next_pow2(n), 2x, 4x (at most 65536); a dot block or step: powers of two 16..256 (at most
next_pow2 of the size it is masked against); any other block or step: powers of two from a
quarter to four times the launched value (16..65536, at most next_pow2 of its size); groups 1, 4,
8, 16; num_warps 2, 4, 8, 16; num_stages 1..5 with loops, else the launched value alone (blocks
launched under 16 range down to 1); a tunable with `levels` adds them, one with `only_levels`
has them alone. Every domain holds the launched value. A constraint the launched config breaks is dropped (the
estimate, not the launch, is wrong).

`gemm`, per kernel (None unless every part below holds): the GEMM of Triton's tutorial 03, what
the descriptors, persistent and splitk rewrites cut. One tl.dot in a loop, `acc = tl.dot(a, b,
acc)` or `acc += tl.dot(a, b)`, at the top of a top-level K loop `for k in range(0, K, BK)` (an
iteration's tiles start at k along K) or `range(tl.cdiv(K, BK))` (at k * BK; the count maybe a
name assigned once before the loop), range or tl.range; other dots only after the loop, outside
loops; `acc = tl.zeros((BM, BN), ...)` the name's one top-level assignment before the loop,
assigned nowhere else in the loop (an epilogue after the loop may rebind it: `acc = acc * alpha
+ bias`, or a block peeled by hand, `acc += tl.dot(..)`). A loop `range(0, S, BK)` whose stop S
is not a parameter (its names bound nowhere in the body) is taken when, after it, a top-level
statement loads each operand's tile once more (same base, strides and offsets across K) at K
offsets `R = S + tl.arange(0, BK)` made after the loop (R and S's names bound by nothing in
between), masked along K by `R < K` alone (made after R) with masked-off lanes 0: K is that
bound, the same for A and B (the last K block peeled by hand).
Each operand is a tl.load in the loop (its value, or a name a statement of the body assigns it
to before the dot, bound nowhere else in the loop but by casts of itself, `a = a.to(..)`) of a
pointer tile `P = base + rows[:, None] * stride_r +
cols[None, :] * stride_c` (terms in any order; a missing stride is 1), either made at the top
level before the loop and advanced once after the load, `P += BK * stride` along K, P assigned
nowhere else; or made again each iteration (the load's pointer itself, or a name the body
assigns once before the load) from K offsets the body makes before the load, `rk = S +
tl.arange(0, B)` (assigned nowhere else in the body, S the iteration's start along K, its names
bound nowhere in the body), no advance. Offsets along K made before the loop may be advanced in
place instead, `rk = tl.arange(0, BK)` at the top level and `rk += BK` a statement of the body
after the load, their one binding there (`k_advanced`: before that statement they are the
iteration's start plus tl.arange(0, BK)). Strides are parameters the body never rebinds (so are
M, N, K); base is a pointer parameter never rebound, or rebound once to the tile itself by the
statement making it (`C = C + offsets`), or moved once along a batch axis before the tile
(`batch`: `X = P + I * S`, or the parameter in place, `P += I * S`, the name's one binding; P a
pointer parameter, I a name assigned once that is not a tile, S's factors scalar parameters never
rebound or integers): their launched values are the matrices' addresses and layouts. The other
offsets are `offs = X * B + tl.arange(0, B)` (start X * B, its names bound by no statement
after it) or `tl.arange(0, B)` (start 0; K's), at the top level, assigned once or every time
alike (made again to free registers), maybe `% size` for A's rows and B's columns, maybe under
value hints (`tl.multiple_of`, `tl.max_contiguous`); A is BM x BK, B BK x BN. A load's mask is
None (and no `other`) or made only of bounds, `rows[:, None] < M` (or `(rows < M)[:, None]`)
and, along K, `cols[None, :] < K - <k's start>` for offsets made before the loop, `< K` for
offsets the loop makes or advances, joined by &, with `other` 0 or none (Triton gives 0 in a
masked-off lane without one); through names (each value the kernel assigns one, in if / else
branches or not: whichever reaches the access is one of them), maybe indexed (`m[:, None]`),
conditional expressions (each side), `None` for no mask. Every bound along K is made in the
loop before the load (it depends on the iteration). The one tl.store is at the top level after
the loop, of a BM x BN value through such a tile (a name or the expression itself, offsets
without `%`), masked by `< M` / `< N` bounds or not. M, N, K are scalar parameters, one each
wherever bounds or wraps name them. Recorded: the sizes, blocks, GROUP constexpr, the
accumulator and its dtype, the store's `.to()` dtype, per operand (a, b, c) its base, `batch`
({pointer, index, stride: the factors' texts}, or None), strides, offsets' starts, pointer name
and statement (None for a tile the load or store takes as an expression), load/store call
(`access`), mask, advance (None for a tile the loop makes), stored value, and C's store's
pointer text and `plain` (it passes pointer, value and mask alone); `stores_acc` when the stored
value is the accumulator itself or its `.to(D)` and no epilogue rebinds it; the loop, the dot
statement, k's name and offset text, the loop's positional range arguments (`k_args`, a span)
with its stop's and step's texts ("1" where left out; the start is 0), `k_advanced`; and
`tile_body` when no
matrix has a batch axis and the body from `pid = tl.program_id(0)` (the one program id, no
num_programs, no return, nothing bound before it bound again after it, parameters included) can
run once per tile in a loop: the statement, the call, and the lines where re-indenting it
inserts (starts of logical lines and of own-line comments outside brackets).

`loop_tails`, per kernel: loops `for v in range(0, B, E)` ("step") or `range(0, tl.cdiv(B, E))`
("count"; start and step may be left out), range or tl.range, B a scalar parameter and E a
constexpr never rebound, v bound nowhere in the body, whose tl.load / tl.store masks (`mask=`)
hold a bound along the loop: `X < B - O` with X tl.arange(0, E) (through names assigned once,
maybe indexed `[:, None]`), or `Y < B` with Y `O + tl.arange(0, E)` set by a statement of the
body before the access (its one assignment in the loop); O is the iteration's start along B, v
or v * E. Such a bound holds in every iteration that ends by B, all but the last. Recorded: the
form, v, B, E, the loop, the stop argument, the body (from col 0 of its first line, which must
not be the loop's) and the cuts that take the bounds out: a bound among several `&`-joined
terms with its `&` and the parentheses around it alone, or a mask that is only bounds with its
`other` (each cut from the end of the argument before it). A mask given as a name (maybe indexed
`[:, None]`) is read through its one assignment in the kernel or the one a statement of the body
makes before the access; a bound may be indexed after the compare, `(Y < B)[:, None]`. Held
drops: a bound that is one of several `&`-joined (or `and`-joined: Triton's elementwise and)
terms of a mask held in a name, `mask = (rows < N) & (cols < K)` (set by a statement of the
body, read in the loop only after it and only as the mask of loads and stores, `mask=` or in its
place, or as where conditions, and nowhere else that could see that value),
or of a where condition itself, is cut from that expression, when each use broadcasts the mask
to a shape at least as wide as its own (the load's pointer, the where's values): then the
elements each use sees are the same where the bound holds. A mask with two bounds among other
terms keeps them; each cut is checked by parsing the call with it applied. The loop variable may
be rebound by `v = tl.multiple_of(v, ..)` (or max_contiguous) alone. `trues`: the conditions of
tl.where calls in the loop (themselves, or the value of a name the body sets before and uses only
as where conditions) that are such a bound: True in those iterations. Form "diagonal": `for v
in range(0, S, E)` (S of names the body never binds, numbers, arithmetic, min/max/tl.minimum/
cdiv) whose where conditions hold `R >= C` (or `C <= R`), R a row tile `X * B + tl.arange(0, B)`
set once outside the loop (through its name, maybe `[:, None]`), C the columns `v +
tl.arange(0, E)` (maybe indexed, maybe through a name set before in the body), every such
condition with the same first row L = X * B (recorded as the size, its names bound nowhere in
the body): attention's causal mask, true wherever v + E <= L; no drops.

`scale_folds`, per kernel: scores scaled at one statement of a for loop's body, `X = tl.dot(A,
B) * S` (or `S * tl.dot(A, B)`, or `tl.dot(A, B) * s * c`, S then the factors after the dot;
the dot without an accumulator), or in place, `X *= S` or `X = X
* S` (either order; alone on its line; X made earlier in the same iteration by an assignment
that does not read it, before any read of X in the body); X a name, S a scalar (shape ()) made
of names the loop never binds, numbers and arithmetic, and a product or quotient of positive
numbers and scalar parameters, directly or through names assigned once outside the loop
(`qk_scale = sm_scale * 1.44269504`): S > 0 whenever those parameters are. X is read outside
the loop only where no value the loop made can reach (a block after the loop that assigns X
afresh before the read, as a tail block `if remainder: qk = tl.dot(..)` does), and in the body after the scaling statement only as the first argument of
`tl.max(X, ..)`, as the left operand of `X - ..`, and in `X = tl.where(C, X, -inf)` (C without
X). Recorded: X, S, the parameters, the statement, the cut that takes S out (` * S` after the
dot's call, with parentheses around the call alone, or `S * ` before it; the in-place
statement's whole line), the max calls and the subtractions' X after it, the loop.

`tile_logic`, per jit function: Python's `and`, `or` and `not` with an operand that is, or may be,
a tile, and chained comparisons (`0 <= offs < n`) of tiles. A tile: an expression whose shape
(above) has an axis or is unknown, or that reads a parameter some jit function of the file passes
such a value (a helper's `mask`; through helpers calling helpers); a constexpr, a program id, a
scalar parameter or a question about a type (`x.dtype.is_fp16()`) is none. Triton's compiler
makes and/or/not of tiles elementwise (&, |, ~) and refuses a chain; its CPU interpreter runs
them as Python does, a tile always true (`a and b` is b, `a or b` is a), so a mask joined that
way loses a part there. Recorded: op ("and", "or", "not",
"chain"), the span, the text and `note`, the sentence for the user (file:line, why the CPU check
is unreliable there, what to write instead).
"""

import ast
import io
import math
import re
import tokenize

_SMEM_BYTES = 232448  # shared memory per block on H100/H200 (227 KiB)
_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "cumsum", "cumprod",
               "associative_scan"}
_SHAPE_CALLS = {"zeros": 0, "full": 0, "reshape": 1, "broadcast_to": 1}  # where the shape is
_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8e4nv": 1,
                "float8e5": 1, "float8e4b15": 1, "int8": 1, "uint8": 1}
_LOAD_ARGS = ("pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
              "eviction_policy", "volatile")
_STORE_ARGS = ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy")
_MATH = ("exp",)  # elementwise math a rewrite may change (exp -> exp2)
_LOOP_OPTIONS = ("num_stages", "loop_unroll_factor", "flatten", "warp_specialize")
_AUTOTUNE_KNOWN = ("configs", "key", "prune_configs_by", "reset_to_zero", "restore_value",
                   "pre_hook", "post_hook")
_DEVICE_CHAINS = ("torch.cuda.", "triton.runtime.driver.active")


def analyze(path, kernel=None):
    """The IR of the Triton file at `path` (see the module's docstring); with `kernel`, only that
    jit function. Raises ValueError naming the file for a syntax error or an unknown kernel."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        tree = ast.parse(data, filename=path)
    except SyntaxError as e:
        raise ValueError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    return _with_offsets(_File(path, data, tree).document(kernel), data)


def _with_offsets(doc, data):
    """Every span of the document gains `start` and `end`: byte offsets into the file, which is
    what a span edit cuts."""
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def visit(o):
        if isinstance(o, dict):
            if {"line", "col", "end_line", "end_col"} <= o.keys():
                o["start"] = starts[o["line"] - 1] + o["col"]
                o["end"] = starts[o["end_line"] - 1] + o["end_col"]
            for v in o.values():
                visit(v)
        elif isinstance(o, list):
            for v in o:
                visit(v)
    visit(doc)
    return doc


def _is_name(node, name):
    return isinstance(node, ast.Name) and node.id == name


def _span(node):
    return {"line": node.lineno, "col": node.col_offset, "end_line": node.end_lineno,
            "end_col": node.end_col_offset}


def _literal(node):
    """The value of a literal node, when JSON can hold it; else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple):
        value = list(value)
    ok = (bool, int, float, str, list, dict, type(None))
    return value if isinstance(value, ok) else None


def _keyword(call, name, index=None):
    """The argument `name` of a call, by keyword or at positional `index`."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    if index is not None and index < len(call.args):
        return call.args[index]
    return None


def _constant(e):
    """A literal number (or its negation)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return isinstance(e, ast.Constant) and isinstance(e.value, (int, float))


def _is_main_guard(node):
    t = node.test if isinstance(node, ast.If) else None
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and \
        t.left.id == "__name__" and any(isinstance(c, ast.Constant) and c.value == "__main__"
                                        for c in t.comparators)


class _File:
    def __init__(self, path, data, tree):
        self.path = path
        self.lines = data.splitlines(keepends=True)
        self.tree = tree
        self.triton = {"triton"}  # names bound to the triton module
        self.tl = {"tl"}          # names bound to triton.language
        self.imported = {}        # local name -> "jit" / "autotune" / "heuristics" / "Config"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "triton":
                        self.triton.add(a.asname or "triton")
                    elif a.name == "triton.language" and a.asname:
                        self.tl.add(a.asname)
            elif isinstance(node, ast.ImportFrom) and node.module in ("triton", "triton.runtime"):
                for a in node.names:
                    if a.name == "language":
                        self.tl.add(a.asname or a.name)
                    elif a.name in ("jit", "autotune", "heuristics", "Config"):
                        self.imported[a.asname or a.name] = a.name
        # the name a rewrite writes triton.language as: the file's own alias, else the module
        bound = self._bound_language(tree)
        self.language = "tl" if "tl" in bound else min(bound) if bound else "triton.language"
        self.module_assigns = _assignments(tree.body)
        self.jit = {}  # name -> FunctionDef of every jit function
        self.functions = []  # (qualname, FunctionDef) of every other function
        self._collect(tree.body, "")

    @staticmethod
    def _bound_language(tree):
        """The names the file binds to triton.language."""
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out |= {a.asname for a in node.names if a.name == "triton.language" and a.asname}
            elif isinstance(node, ast.ImportFrom) and node.module == "triton":
                out |= {a.asname or a.name for a in node.names if a.name == "language"}
        return out

    def text(self, node):
        """The source text of a node, exactly (UTF-8 byte columns)."""
        if node is None:
            return None
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            raw = self.lines[first][node.col_offset:node.end_col_offset]
        else:
            raw = self.lines[first][node.col_offset:] + b"".join(self.lines[first + 1:last]) + \
                self.lines[last][:node.end_col_offset]
        return raw.decode("utf-8", "replace")

    def decorator_kind(self, dec):
        """"jit", "autotune" or "heuristics" for a triton decorator, else None."""
        f = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(f, ast.Name):
            return self.imported.get(f.id) if self.imported.get(f.id) != "Config" else None
        if isinstance(f, ast.Attribute) and f.attr in ("jit", "autotune", "heuristics"):
            v = f.value
            if isinstance(v, ast.Name) and v.id in self.triton:
                return f.attr
            if isinstance(v, ast.Attribute) and v.attr == "runtime":  # triton.runtime.jit
                return f.attr
        return None

    def tl_attr(self, func):
        """`arange` for tl.arange / triton.language.arange (and `math.exp2` style names for
        tl.math.*), else None."""
        if not isinstance(func, ast.Attribute):
            return None
        v = func.value
        if isinstance(v, ast.Name) and v.id in self.tl:
            return func.attr
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name):
            if v.value.id in self.triton and v.attr == "language":
                return func.attr
            if v.value.id in self.tl and v.attr in ("math", "extra"):
                return func.attr
        return None

    def is_config(self, func):
        if isinstance(func, ast.Name):
            return self.imported.get(func.id) == "Config"
        return isinstance(func, ast.Attribute) and func.attr == "Config"

    def _collect(self, body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(self.decorator_kind(d) == "jit" for d in node.decorator_list):
                    self.jit.setdefault(node.name, node)
                else:
                    self.functions.append((prefix + node.name, node))
                    self._collect(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.ClassDef):
                self._collect(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.If, ast.Try, ast.With)) and not _is_main_guard(node):
                for part in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, part, [])
                    for b in inner:
                        self._collect(b.body if isinstance(b, ast.ExceptHandler) else [b],
                                      prefix)

    def document(self, only):
        if only is not None and only not in self.jit:
            found = ", ".join(self.jit) or "none"
            raise ValueError(f"{self.path}: no @triton.jit function '{only}' (found: {found})")
        sites = {name: [] for name in self.jit}
        for qualname, fn in self.functions:
            for site in _launches(self, qualname, fn):
                sites[site["kernel"]].append(site)
        every = {name: _Kernel(self, fn) for name, fn in self.jit.items()}
        tiles_in = self._tile_params(every)
        kernels = [dict(k.document(sites[name]), tile_logic=k.tile_logic(tiles_in[name]))
                   for name, k in every.items() if only is None or name == only]
        functions = [{"name": fn.name, "qualname": q, "span": _span(fn),
                      "launches": sorted({s["kernel"] for ss in sites.values() for s in ss
                                          if s["qualname"] == q})}
                     for q, fn in self.functions]
        return {"path": self.path, "kernels": kernels, "functions": functions,
                "device_queries": self._device_queries(self.tree.body)}

    def _tile_params(self, kernels):
        """Per jit function (`kernels`: each one's _Kernel by name), its parameters that a jit
        function of the file passes a tile (or a value of unknown shape) to, as a helper's
        `mask`; through helpers calling helpers."""
        out = {name: set() for name in self.jit}
        changed = True
        while changed:
            changed = False
            for k in kernels.values():
                for c in k.calls():
                    if not (isinstance(c.func, ast.Name) and c.func.id in self.jit):
                        continue
                    params = [a.arg for a in _params_of(self.jit[c.func.id])]
                    passed = list(zip(params, c.args)) + \
                        [(kw.arg, kw.value) for kw in c.keywords if kw.arg in params]
                    tiles = {p for p, v in passed if k.may_be_tile(v, out[k.fn.name])}
                    if not tiles <= out[c.func.id]:
                        out[c.func.id] |= tiles
                        changed = True
        return out

    def _device_queries(self, body):
        """Module-level statements (inside if/try/with too, never in definitions or a
        __main__ guard) that ask the GPU or its driver something."""
        out = []
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Import, ast.ImportFrom)) or _is_main_guard(node):
                continue
            if isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                inner = node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
                inner += [s for h in getattr(node, "handlers", []) for s in h.body]
                out += self._device_queries(inner)
                continue
            text = self.text(node)
            if any(chain in text for chain in _DEVICE_CHAINS):
                out.append({"text": text, "span": _span(node)})
        return out


def _assignments(body):
    """name -> [statement] for every assignment of a plain name in `body` (not in nested
    definitions), in source order."""
    out = {}

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.setdefault(n.id, []).append(node)
            visit(ast.iter_child_nodes(node))
    visit(body)
    return out


def _assigned_before(assigns, name, line):
    """The last assignment statement of `name` starting before `line`."""
    before = [s for s in assigns.get(name, []) if s.lineno < line]
    return before[-1] if before else None


def _launches(f, qualname, fn):
    """Every `kernel[grid](...)` call in function `fn` (not in functions nested in it)."""
    assigns = _assignments(fn.body)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    out = []
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and
                isinstance(node.func.value, ast.Name) and node.func.value.id in f.jit):
            continue
        kernel = f.jit[node.func.value.id]
        kparams = _params_of(kernel)
        constexprs = {p.arg for p in kparams if _is_constexpr(f, p)}
        grid = node.func.slice

        def assigned(name):
            stmt = _assigned_before(assigns, name, node.lineno) or \
                _assigned_before(f.module_assigns, name, 1 << 30)
            return f.text(stmt) if stmt is not None else None
        kind = "tuple" if isinstance(grid, (ast.Tuple, ast.List)) else \
            "lambda" if isinstance(grid, ast.Lambda) else \
            "name" if isinstance(grid, ast.Name) else "expression"
        passed = [(kparams[i].arg, a, True) for i, a in enumerate(node.args) if i < len(kparams)]
        passed += [(k.arg, k.value, False) for k in node.keywords if k.arg]
        meta = []
        for name, value, positional in passed:
            if name in constexprs:
                is_name = isinstance(value, ast.Name)
                meta.append({"name": name, "value": f.text(value), "positional": positional,
                             "from_param": is_name and value.id in params,
                             "assigned": assigned(value.id) if is_name and value.id not in params
                             else None})
        kwargs = {k.arg: f.text(k.value) for k in node.keywords if k.arg}
        # `**config`: the keys the function reads from that dict itself, outside the grid (the
        # host pads or routes by them: such a key must keep the value the dict gives it)
        splats = {k.value.id for k in node.keywords if k.arg is None and
                  isinstance(k.value, ast.Name)}
        in_grid = {id(n) for n in ast.walk(grid)}
        host_keys = sorted({n.slice.value for n in ast.walk(fn) if id(n) not in in_grid and
                            isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and
                            n.value.id in splats and isinstance(n.slice, ast.Constant) and
                            isinstance(n.slice.value, str)})
        out.append({
            "kernel": kernel.name, "function": fn.name, "qualname": qualname,
            "span": _span(node), "function_span": _span(fn), "params": params,
            "grid": {"text": f.text(grid), "kind": kind,
                     "assigned": assigned(grid.id) if kind == "name" else None},
            "args": [f.text(a) for a in node.args], "kwargs": kwargs, "constexprs": meta,
            "splats": sorted(splats), "host_keys": host_keys,
            "num_warps": kwargs.get("num_warps"), "num_stages": kwargs.get("num_stages")})
    return sorted(out, key=lambda s: (s["span"]["line"], s["span"]["col"]))


def _params_of(fn):
    return fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs


def _is_constexpr(f, arg):
    a = arg.annotation
    if a is None:
        return False
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        return a.value.endswith("constexpr")
    return (isinstance(a, ast.Name) and a.id == "constexpr") or \
        (isinstance(a, ast.Attribute) and a.attr == "constexpr")


def _broadcast(a, b):
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a, b = ("1",) * (n - len(a)) + a, ("1",) * (n - len(b)) + b
    return tuple(y if x == "1" else x for x, y in zip(a, b))


class _Kernel:
    def __init__(self, f, fn):
        self.f, self.fn = f, fn
        self.args = _params_of(fn)
        self.names = [a.arg for a in self.args]
        self.constexprs = [a.arg for a in self.args if _is_constexpr(f, a)]
        self.assigns = {}  # local name -> [value expressions]
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._bind(t, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind(node.target, node.value)
            elif isinstance(node, ast.AugAssign):  # x += v binds x to x + v
                self._bind(node.target, ast.copy_location(
                    ast.BinOp(left=node.target, op=node.op, right=node.value), node))
        self.parents = {}
        for node in ast.walk(fn):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.shapes = {}  # memo: local name -> its tile shape
        self._calls = None
        self.autotune_levels = {}  # constexpr or launch option -> the values its configs use

    def _bind(self, target, value):
        if isinstance(target, ast.Name):
            self.assigns.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)) and \
                isinstance(value, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                self._bind(t, v)

    def text(self, node):
        return self.f.text(node)

    def calls(self):
        """Every call in the body (not in the decorators), in walk order."""
        if self._calls is None:
            self._calls = sorted((n for stmt in self.fn.body for n in ast.walk(stmt)
                                  if isinstance(n, ast.Call)),
                                 key=lambda n: (n.lineno, n.col_offset))
        return self._calls

    def in_loop(self, node):
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.For, ast.While)):
                return True
        return False

    def expand(self, expr, seen=frozenset()):
        """`expr` and the values assigned to the local names in it, transitively."""
        out = [expr]
        for n in ast.walk(expr):
            if isinstance(n, ast.Name) and n.id not in self.names and n.id not in seen:
                seen = seen | {n.id}
                for v in self.assigns.get(n.id, []):
                    out += self.expand(v, seen)
        return out

    # ---- tile shapes: tuples of dimension texts ("1" for a broadcast axis), None unknown ----
    def shape(self, e, seen=frozenset()):
        if isinstance(e, ast.Constant):
            return ()
        if isinstance(e, ast.Name):
            if e.id in self.names or e.id not in self.assigns:
                return ()
            if e.id in self.shapes:
                return self.shapes[e.id]
            if e.id in seen:
                return None
            for v in reversed(self.assigns[e.id]):
                s = self.shape(v, seen | {e.id})
                if s is not None:
                    if not seen:
                        self.shapes[e.id] = s
                    return s
            return None
        if isinstance(e, ast.Subscript):
            base = self.shape(e.value, seen)
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            if base is None or not all(isinstance(p, ast.Slice) or
                                       (isinstance(p, ast.Constant) and p.value is None)
                                       for p in parts):
                return None
            dims, it = [], iter(base)
            for p in parts:
                dims.append("1" if isinstance(p, ast.Constant) else next(it, None))
            return None if None in dims else tuple(dims)
        if isinstance(e, ast.BinOp):
            return _broadcast(self.shape(e.left, seen), self.shape(e.right, seen))
        if isinstance(e, ast.BoolOp):
            s = ()
            for v in e.values:
                s = _broadcast(s, self.shape(v, seen))
            return s
        if isinstance(e, ast.Compare):
            s = self.shape(e.left, seen)
            for c in e.comparators:
                s = _broadcast(s, self.shape(c, seen))
            return s
        if isinstance(e, ast.UnaryOp):
            return self.shape(e.operand, seen)
        if isinstance(e, ast.IfExp):
            return self.shape(e.body, seen)
        if isinstance(e, ast.Attribute):
            if e.attr != "T":
                return ()  # x.dtype, ptr.type.element_ty: not tiles
            s = self.shape(e.value, seen)
            return s[::-1] if s is not None else None
        if isinstance(e, ast.Call):
            return self._call_shape(e, seen)
        return None

    def _call_shape(self, e, seen):
        name = self.f.tl_attr(e.func)
        method = e.func.attr if isinstance(e.func, ast.Attribute) and name is None else None
        if method and isinstance(e.func.value, ast.Name) and e.func.value.id not in self.names \
                and e.func.value.id not in self.assigns:
            method = None  # a module's function (`libdevice.exp`, a program id wrapper), no method
        if name == "arange" and len(e.args) == 2:
            start = self.text(e.args[0])
            stop = self.text(e.args[1])
            return (stop if start == "0" else f"{stop} - {start}",)
        if name in _SHAPE_CALLS or method in ("reshape", "view"):
            if name:
                node = _keyword(e, "shape", _SHAPE_CALLS[name])
            else:  # x.reshape(a, b) or x.reshape((a, b))
                node = e.args[0] if len(e.args) == 1 else ast.Tuple(elts=e.args)
            if isinstance(node, (ast.Tuple, ast.List)):
                return tuple(self.text(x) for x in node.elts)
            return None
        if name == "make_block_ptr":
            node = _keyword(e, "block_shape", 4)
            return tuple(self.text(x) for x in node.elts) \
                if isinstance(node, (ast.Tuple, ast.List)) else None
        if name in ("advance", "load", "multiple_of", "max_contiguous") and e.args:
            return self.shape(e.args[0], seen)
        if method == "to":
            return self.shape(e.func.value, seen)
        if name == "trans" and e.args:
            s = self.shape(e.args[0], seen)
            return s[::-1] if s is not None else None
        if name == "dot" and len(e.args) >= 2:
            a, b = self.shape(e.args[0], seen), self.shape(e.args[1], seen)
            return (a[-2], b[-1]) if a and b and len(a) >= 2 and len(b) >= 2 else None
        if name in _REDUCTIONS:
            s = self.shape(e.args[0], seen) if e.args else None
            axis = _literal(_keyword(e, "axis", 1)) if _keyword(e, "axis", 1) else None
            if s is None or not isinstance(axis, int) or not -len(s) <= axis < len(s):
                return None
            return s[:axis] + s[axis + 1:] if axis >= 0 else s[:axis] + s[len(s) + axis + 1:]
        if name in ("program_id", "num_programs", "cdiv"):
            return ()
        if name == "make_tensor_descriptor" or method is not None:
            return None  # a descriptor, or a method of unknown result
        s = ()  # anything else (min, tl.exp, a jit helper) taken as elementwise
        for a in e.args:
            s = _broadcast(s, self.shape(a, seen))
        return s

    def may_be_tile(self, e, tile_params):
        """Whether `e` is, or may be, a tile: its shape has an axis or is unknown, or it reads a
        parameter in `tile_params` (one a caller passes a tile)."""
        s = self.shape(e)
        if s is None and any(_type_query(n) for n in ast.walk(e)):
            return False  # `x.dtype.is_fp16()`: a method of unknown result, but on a type
        if s != ():
            return True
        return any(isinstance(n, ast.Name) and n.id in tile_params
                   for x in self.expand(e) for n in ast.walk(x))

    def tile_logic(self, tile_params):
        """Python's `and`, `or`, `not` and chained comparisons over tiles in the body: Triton's
        compiler makes and/or/not elementwise (and refuses a chain), while its CPU interpreter
        runs them as Python does, on one truth value for a whole tile."""
        out = []
        for node in sorted((n for stmt in self.fn.body for n in ast.walk(stmt)),
                           key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
            if isinstance(node, ast.BoolOp):
                op, operands = ("and" if isinstance(node.op, ast.And) else "or"), node.values
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                op, operands = "not", [node.operand]
            elif isinstance(node, ast.Compare) and len(node.ops) > 1:
                op, operands = "chain", [node.left] + node.comparators
            else:
                continue
            if any(self.may_be_tile(v, tile_params) for v in operands):
                out.append({"op": op, "span": _span(node), "text": self.text(node),
                            "note": _logic_note(self.f.path, node.lineno, op,
                                                self.text(node))})
        return out

    def pointer_bases(self, e, seen=frozenset()):
        """Kernel parameters that are the base of the address `e` (not its offsets)."""
        if isinstance(e, ast.Name):
            if e.id in self.names:
                return {e.id}
            if e.id in seen:
                return set()
            return set().union(*[self.pointer_bases(v, seen | {e.id})
                                 for v in self.assigns.get(e.id, [])])
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
            return self.pointer_bases(e.left, seen) | self.pointer_bases(e.right, seen)
        if isinstance(e, ast.Subscript):
            return self.pointer_bases(e.value, seen)
        if isinstance(e, ast.IfExp):
            return self.pointer_bases(e.body, seen) | self.pointer_bases(e.orelse, seen)
        if isinstance(e, ast.Call):
            name = self.f.tl_attr(e.func)
            if name in ("make_block_ptr", "make_tensor_descriptor"):
                base = _keyword(e, "base", 0)
                return self.pointer_bases(base, seen) if base is not None else set()
            if name in ("advance", "multiple_of", "max_contiguous") and e.args:
                return self.pointer_bases(e.args[0], seen)
            if isinstance(e.func, ast.Attribute) and e.func.attr == "to" and name is None:
                return self.pointer_bases(e.func.value, seen)
        return set()

    def _written_only(self, memops, atomics_bases):
        """The pointer parameters the kernel stores through and never reads: no load or atomic
        reaches them, no function but triton.language's is handed them (a helper may load), and
        every load's base is known (one whose address the analysis cannot follow might read any
        of them)."""
        loads = [m["_bases"] for m in memops if m["op"] == "load"]
        if any(not b for b in loads):
            return set()
        read = set().union(*loads, *atomics_bases)
        handed = {n for c in self.calls() if self.f.tl_attr(c.func) is None
                  for a in [*c.args, *(k.value for k in c.keywords)]
                  # `acc.to(c_ptr.dtype.element_ty)` reads no memory
                  for n in re.findall(r"[A-Za-z_]\w*",
                                      re.sub(r"[A-Za-z_]\w*\s*\.\s*dtype\b", "", self.text(a)))}
        stored = set().union(*[m["_bases"] for m in memops if m["op"] == "store"])
        return stored - read - handed

    def _bounding_loads(self):
        """The pointer parameters whose loaded values bound something: a loop's range, or an
        ordering comparison with something other than a constant (`offs < seq_len`, `if start
        >= end: return`). Lengths and offsets (`seq_lens`, `b_seq_len`, `cu_seqlens`) do; an
        index used only to address memory (a block table's page, a label) does not, and a
        sentinel test (`slot < 0`) says nothing of a size."""
        carries = {}  # local name -> parameters whose loaded values it holds

        def loaded(e):
            found, todo = set(), [e]
            while todo:
                x = todo.pop()
                if isinstance(x, ast.Call) and self.f.tl_attr(x.func) == "load":
                    pointer = _keyword(x, "pointer", 0)
                    found |= self.pointer_bases(pointer) if pointer is not None else set()
                    continue  # its mask and `other` are not what it loads
                if isinstance(x, ast.Name):
                    found |= carries.get(x.id, set())
                todo.extend(ast.iter_child_nodes(x))
            return found
        grew = True
        while grew:
            grew = False
            for name, values in self.assigns.items():
                got = set().union(*(loaded(v) for v in values))
                if not got <= carries.get(name, set()):
                    carries[name] = carries.get(name, set()) | got
                    grew = True
        bound = set()
        for n in ast.walk(self.fn):
            if isinstance(n, ast.Compare) and all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt,
                                                                  ast.GtE)) for op in n.ops):
                sides = [n.left, *n.comparators]
                if all(_constant(s) for s in sides[1:]) or _constant(sides[0]):
                    continue
                for s in sides:
                    bound |= loaded(s)
            elif isinstance(n, ast.Call) and (
                    (isinstance(n.func, ast.Name) and n.func.id == "range") or
                    self.f.tl_attr(n.func) in ("range", "static_range")):
                for a in n.args:
                    bound |= loaded(a)
        return bound & set(self.names)

    def _helper_math(self):
        """The math calls in the jit helpers the kernel calls, through helpers of helpers (a tanh
        written with tl.exp, as Liger's and Unsloth's files write it), each once: rewriting one
        keeps the result of every caller of that helper."""
        f, out, seen = self.f, [], {self.fn.name}
        todo = [c.func.id for c in self.calls() if isinstance(c.func, ast.Name)]
        while todo:
            name = todo.pop()
            if name in seen or name not in f.jit:
                continue
            seen.add(name)
            for c in (n for stmt in f.jit[name].body for n in ast.walk(stmt)
                      if isinstance(n, ast.Call)):
                if f.tl_attr(c.func) in _MATH and len(c.args) == 1 and not c.keywords:
                    out.append({"op": f.tl_attr(c.func), "span": _span(c),
                                "func_span": _span(c.func), "arg_span": _span(c.args[0]),
                                "helper": name})
                elif isinstance(c.func, ast.Name):
                    todo.append(c.func.id)
        return sorted(out, key=lambda m: (m["span"]["line"], m["span"]["col"]))

    def _pid_blocks(self, call):
        """The constexprs that the program id `call`, or a name computed from it, is multiplied
        by: the blocks whose count along that axis the grid holds (none for an axis that counts
        heads or batches, or a persistent loop's programs)."""
        derived, grew = set(), True
        while grew:
            grew = False
            for name, values in self.assigns.items():
                if name not in derived and any(x is call or (isinstance(x, ast.Name) and
                                                             x.id in derived)
                                               for v in values for x in ast.walk(v)):
                    derived.add(name)
                    grew = True
        blocks = set()
        for n in ast.walk(self.fn):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                for a, b in ((n.left, n.right), (n.right, n.left)):
                    if isinstance(b, ast.Name) and b.id in self.constexprs and any(
                            x is call or (isinstance(x, ast.Name) and x.id in derived)
                            for x in ast.walk(a)):
                        blocks.add(b.id)
        return sorted(blocks)

    def made_by(self, e, names):
        """Whether `e` is (through local names) a call of tl.<one of names>."""
        for x in self.expand(e):
            if isinstance(x, ast.Call) and self.f.tl_attr(x.func) in names:
                return True
        return False

    def pure_arange(self, e, seen=frozenset()):
        """X when `e` is tl.arange(0, X) itself (through names and [:, None] indexing)."""
        if isinstance(e, ast.Subscript):
            return self.pure_arange(e.value, seen)
        if isinstance(e, ast.Name) and e.id not in self.names and e.id not in seen:
            values = self.assigns.get(e.id, [])
            return self.pure_arange(values[0], seen | {e.id}) if len(values) == 1 else None
        if isinstance(e, ast.Call) and self.f.tl_attr(e.func) == "arange" and len(e.args) == 2 \
                and self.text(e.args[0]) == "0" and isinstance(e.args[1], ast.Name):
            return e.args[1].id
        return None

    # ---- the document ----
    def document(self, sites):
        f = self.f
        self.loops = self._loops()
        memops, dots, reductions, atomics, pids, nprogs, calls = [], [], [], [], [], [], []
        math_calls = []
        masks = []  # (mask expression, node) pairs compared against sizes
        for c in self.calls():
            name = f.tl_attr(c.func)
            if name in ("load", "store"):
                memops.append(self._memop(c, name))
                if memops[-1]["_mask"] is not None:
                    masks.append(memops[-1]["_mask"])
            elif name in ("make_block_ptr", "make_tensor_descriptor", "advance"):
                memops.append(self._memop(c, name))
            elif name in ("load_tensor_descriptor", "store_tensor_descriptor"):
                memops.append(self._memop(c, name.split("_")[0], descriptor=True))
            elif isinstance(c.func, ast.Attribute) and c.func.attr in ("load", "store") and \
                    name is None and self._is_descriptor(c.func.value):
                memops.append(self._memop(c, c.func.attr, descriptor=True))
            elif name == "dot":
                dots.append(self._dot(c))
            elif name in _MATH and len(c.args) == 1 and not c.keywords:
                math_calls.append({"op": name, "span": _span(c), "func_span": _span(c.func),
                                   "arg_span": _span(c.args[0])})
            elif name in _REDUCTIONS:
                axis = _keyword(c, "axis", 1)
                reductions.append({"op": name, "span": _span(c), "input": self.text(
                    c.args[0]) if c.args else None, "axis": self.text(axis)})
            elif name and name.startswith("atomic_"):
                mask = _keyword(c, "mask", 3 if name == "atomic_cas" else 2)
                if mask is not None:
                    masks.append(mask)
                atomics.append({"op": name, "span": _span(c),
                                "pointer": self.text(_keyword(c, "pointer", 0)),
                                "value": self.text(_keyword(c, "val", 2 if name == "atomic_cas"
                                                            else 1)),
                                "mask": self.text(mask), "sem": self.text(_keyword(c, "sem")),
                                "scope": self.text(_keyword(c, "scope"))})
            elif name in ("program_id", "num_programs"):
                (pids if name == "program_id" else nprogs).append(
                    {"axis": self.text(_keyword(c, "axis", 0)), "span": _span(c),
                     **({"blocks": self._pid_blocks(c)} if name == "program_id" else {})})
            elif name == "where" and c.args:
                masks.append(c.args[0])
            elif isinstance(c.func, ast.Name) and c.func.id in f.jit:
                calls.append({"callee": c.func.id, "span": _span(c),
                              "args": [self.text(a) for a in c.args]})
        math_calls += self._helper_math()
        self.memops, self.dots = memops, dots
        self.masked, sizes, rows = self._masks(masks, memops)
        atomics_bases = [self.pointer_bases(_keyword(a, "pointer", 0)) for a in self.calls()
                         if (f.tl_attr(a.func) or "").startswith("atomic_")]
        pointers = set().union(*[m["_bases"] for m in memops] + atomics_bases)
        written_only = self._written_only(memops, atomics_bases)
        self.unguarded = self._unguarded_writes(memops, self._heuristic_names())
        stored = set().union(*[m["_bases"] for m in memops if m["op"] == "store"],
                             *atomics_bases)
        bounding = self._bounding_loads()
        for m in memops:
            for internal in [k for k in m if k.startswith("_")]:
                del m[internal]
        uses = self._uses()
        params = []
        defaults = [None] * (len(self.fn.args.posonlyargs + self.fn.args.args) -
                             len(self.fn.args.defaults)) + self.fn.args.defaults
        defaults += self.fn.args.kw_defaults
        for a, d in zip(self.args, defaults):
            kind = "constexpr" if a.arg in self.constexprs else \
                "pointer" if a.arg in pointers or a.arg.lower().endswith("ptr") else "scalar"
            p = {"name": a.arg, "kind": kind, "span": _span(a),
                 "default": _literal(d) if d is not None else None}
            if kind == "constexpr":
                p["uses"] = sorted(uses.get(a.arg, ()))
            if a.arg in written_only:
                p["written_only"] = True
            if a.arg in stored:
                p["stored"] = True  # stores or atomics reach it: a tensor it writes
            if a.arg in bounding:
                p["bounding_loads"] = True
            params.append(p)
        self.default_nodes = dict(zip(self.names, defaults))
        autotune, heuristics, jit_options, decorators = None, None, {}, []
        for d in self.fn.decorator_list:
            kind = f.decorator_kind(d)
            decorators.append({"kind": kind or "other", "span": _span(d), "text": self.text(d)})
            if kind == "autotune" and isinstance(d, ast.Call):
                autotune = self._autotune(d)
            elif kind == "heuristics" and isinstance(d, ast.Call) and d.args:
                values = d.args[0]
                heuristics = {"span": _span(d), "values": {
                    k.value: self.text(v) for k, v in zip(values.keys, values.values)
                    if isinstance(k, ast.Constant)} if isinstance(values, ast.Dict) else {},
                    "text": self.text(values)}
            elif kind == "jit" and isinstance(d, ast.Call):
                jit_options = {k.arg: self.text(k.value) for k in d.keywords if k.arg}
        tunables, constraints = self._tunables(params, uses, heuristics, sizes, rows)
        for t in tunables:
            source = _shape_source(sites, t["name"])
            host = next((s for s in sites if t["name"] in s["host_keys"]), None)
            sized = _host_sized(f, sites, t["name"])
            why = f"a size of an input ({source})" if source else \
                f"{host['function']} uses {t['name']} of the dict it splats on the host too" \
                if host else f"the launching code sizes a tensor with it too ({sized})" \
                if sized else None
            if why and t["kind"] in ("block", "step", "group"):
                t.update(kind="fixed", why=why, domain="", relates_to=[], covers_row=None)
        for d in dots:
            del d["_operands"]
        return {"name": self.fn.name, "span": _span(self.fn), "language": f.language,
                "decorators": decorators,
                "jit_options": jit_options, "autotune": autotune, "heuristics": heuristics,
                "params": params, "loops": self.loops, "memops": memops, "dots": dots,
                "reductions": reductions, "atomics": atomics, "program_ids": pids,
                "num_programs": nprogs, "calls": calls, "math": math_calls,
                "offsets": self._offsets(), "tile_map": self._tile_map(),
                "launch_sites": sites,
                "tunables": tunables, "constraints": constraints, "gemm": self._gemm(),
                "loop_tails": self._loop_tails(), "scale_folds": self._scale_folds(pointers)}

    def _offsets(self):
        """Assignments `offs = X * B + tl.arange(0, B)` (either order; B a constexpr, X a scalar
        by its tracked shape): a run of B consecutive integers starting at a multiple of B."""
        out = []
        for node in ast.walk(self.fn):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                    isinstance(node.targets[0], ast.Name)):
                continue
            run = self._scaled_run(node.value)
            if run is not None:
                out.append({"name": node.targets[0].id, "span": _span(node.value),
                            "multiple": run[1], "contiguous": run[1]})
        return sorted(out, key=lambda o: (o["span"]["line"], o["span"]["col"]))

    def _scaled_run(self, e):
        """(X * B, B) when `e` is `X * B + tl.arange(0, B)` (either order; B a constexpr, X a
        scalar by its tracked shape); else None."""
        if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add)):
            return None
        for scaled, rng in ((e.left, e.right), (e.right, e.left)):
            block = self.pure_arange(rng) if isinstance(rng, ast.Call) else None
            if block is None or block not in self.constexprs or \
                    not (isinstance(scaled, ast.BinOp) and isinstance(scaled.op, ast.Mult)):
                continue
            # the other factor must be a scalar (a program id, a loop variable): a tile there
            # (a gathered row index) would make every element its own run
            if any(isinstance(x, ast.Name) and x.id == block for x in (scaled.left, scaled.right)) \
                    and self.shape(scaled) == ():
                return scaled, block
        return None

    def _tile_map(self):
        """How the program id becomes a 2-D tile, when the body's top level says so plainly:
        `linear` for `pid_m = pid // NPN` then `pid_n = pid % NPN` (pid from tl.program_id(0)),
        `grid2d` for `pid_m = tl.program_id(0)` then `pid_n = tl.program_id(1)`; None when the
        kernel groups programs already (a GROUP constexpr or a min() over program counts)."""
        if any("GROUP" in c for c in self.constexprs):
            return None
        stmts = [st for st in self.fn.body if isinstance(st, ast.Assign) and
                 len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)]

        def pid_of(e):  # the axis of tl.program_id(axis) behind e, through one name
            if isinstance(e, ast.Name) and len(self.assigns.get(e.id, [])) == 1:
                e = self.assigns[e.id][0]
            if isinstance(e, ast.Call) and self.f.tl_attr(e.func) == "program_id":
                axis = _keyword(e, "axis", 0)
                return self.text(axis) if axis is not None else None
            return None

        for i, m in enumerate(stmts):
            for n in stmts[i + 1:]:
                if len(self.assigns.get(m.targets[0].id, [])) != 1 or \
                        len(self.assigns.get(n.targets[0].id, [])) != 1:
                    continue
                mv, nv = m.value, n.value
                common = {"m_stmt": _span(m), "n_stmt": _span(n), "m_target": m.targets[0].id,
                          "n_target": n.targets[0].id}
                if isinstance(mv, ast.BinOp) and isinstance(mv.op, ast.FloorDiv) and \
                        isinstance(nv, ast.BinOp) and isinstance(nv.op, ast.Mod) and \
                        self.text(mv.left) == self.text(nv.left) and \
                        self.text(mv.right) == self.text(nv.right) and pid_of(mv.left) == "0":
                    return {"form": "linear", "pid": self.text(mv.left),
                            "num_pid_n": self.text(mv.right), **common}
                if pid_of(mv) == "0" and pid_of(nv) == "1":
                    return {"form": "grid2d", "pid": None, "num_pid_n": None, **common}
        return None

    # ---- the GEMM of tutorial 03: what the descriptors, persistent and splitk rewrites cut ----
    def _gemm(self):
        """The kernel's GEMM when it has the tutorial-03 shape (see the module's docstring), with
        the texts a rewrite reuses and the spans it replaces; None otherwise."""
        dots = [c for c in self.calls() if self.f.tl_attr(c.func) == "dot"]
        looped = [c for c in dots if self.in_loop(c)]
        if len(looped) != 1 or len(looped[0].args) < 2:
            return None
        dot = looped[0]
        stmt, body = self.parents.get(dot), self.fn.body
        loop = self.parents.get(stmt)
        if not (isinstance(loop, ast.For) and loop in body and stmt in loop.body):
            return None
        # other dots only after the loop, outside loops (the last K block peeled by hand):
        # what they add to the accumulator rebinds it there, as an epilogue does
        if any(body.index(self._top_statement(c)) < body.index(loop) for c in dots
               if c is not dot):
            return None
        acc = self._accumulator(stmt, dot)
        a, b = (self._operand(x, loop, axis) for x, axis in zip(dot.args[:2], (1, 0)))
        store = self._gemm_store(loop)
        if acc is None or a is None or b is None or store is None:
            return None
        (a_rows, a_k), (b_k, b_cols) = a["_offsets"], b["_offsets"]
        k_advanced = bool(a_k.get("advanced") or b_k.get("advanced"))
        (c_rows, c_cols), value = store.pop("_offsets"), store.pop("_value")
        bm, bk, bn = a_rows["block"], a_k["block"], b_cols["block"]
        if b_k["block"] != bk or \
                (c_rows["block"], c_cols["block"]) != (bm, bn) or \
                c_rows["wrap"] or c_cols["wrap"] or a_k["wrap"] or b_k["wrap"] or \
                acc["shape"] != [bm, bn] or self.shape(value) != (bm, bn):
            return None
        k_loop = self._k_loop(loop, bk)
        if k_loop is None:
            return None
        size_k, k_var, k_offset = k_loop
        if size_k is None:  # the loop stops short of K: the last block peeled after it says K
            peeled = {self._peeled_size(loop, x, axis) for x, axis in ((a, 1), (b, 0))}
            size_k = self._one_size(list(peeled)) if None not in peeled else None
            if size_k is None:
                return None
        k_args = loop.iter.args
        for x in (a, b):
            del x["_offsets"], x["_names"]
        rows_a, cols_b = a.pop("_bounds"), b.pop("_bounds")
        rows_c, cols_c = store.pop("_bounds")
        size_m = self._one_size(rows_c + rows_a.get(0, []) + [a_rows["wrap"]])
        size_n = self._one_size(cols_c + cols_b.get(1, []) + [b_cols["wrap"]])
        k_bound = ast.unparse(ast.parse(f"{size_k} - {k_offset}", mode="eval").body)

        def along_k(offset, bounds):
            """An operand's K offsets start at 0 before the loop, bounded by K minus the
            iteration's start, or at the iteration's start in the loop, bounded by K."""
            if offset.get("advanced"):  # bounded where it is the iteration's start + arange
                return not set(bounds) - {size_k}
            if offset.get("in_loop"):
                same = ast.unparse(ast.parse(offset["start"], mode="eval")) == \
                    ast.unparse(ast.parse(k_offset, mode="eval"))
                return same and not set(bounds) - {size_k}
            return offset["start"] == "0" and not set(bounds) - {k_bound}
        if size_m is None or size_n is None or not along_k(a_k, rows_a.get(1, [])) or \
                not along_k(b_k, cols_b.get(0, [])):
            return None
        group = [n for n in self.constexprs if "GROUP" in n.upper() and n in self._body_names()]
        return {"m": size_m, "n": size_n, "k": size_k, "block_m": bm, "block_n": bn,
                "block_k": bk, "group_m": group[0] if group else None,
                "acc": acc["name"], "acc_dtype": acc["dtype"], "store_dtype": self._to_dtype(value),
                "stores_acc": not acc["rebound"] and (_is_name(value, acc["name"]) or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and
                    value.func.attr == "to" and _is_name(value.func.value, acc["name"]))),
                "a": {**a, "row_start": a_rows["start"], "col_start": "0"},
                "b": {**b, "row_start": "0", "col_start": b_cols["start"]},
                "c": {**store, "row_start": c_rows["start"], "col_start": c_cols["start"]},
                "k_var": k_var, "k_offset": k_offset, "loop": _span(loop), "dot": _span(stmt),
                "k_args": {**_span(k_args[0]), "end_line": k_args[-1].end_lineno,
                           "end_col": k_args[-1].end_col_offset},
                "k_stop": self.text(k_args[1] if len(k_args) == 3 else k_args[-1]),
                "k_step": self.text(k_args[2]) if len(k_args) == 3 else "1",
                "k_advanced": k_advanced,
                # a batch axis takes a program id of its own: no one tile body per tile
                "tile_body": None if a["batch"] or b["batch"] or store["batch"] else
                self._tile_body()}

    def _top_statement(self, node):
        """The statement of the kernel's top level that holds the node."""
        while node not in self.fn.body:
            node = self.parents[node]
        return node

    def _peeled_size(self, loop, operand, k_axis):
        """K when, after the loop `for k in range(0, S, BK)`, a top-level statement loads the
        operand's tile once more (the same base, strides and offsets across K) at K offsets
        `R = S + tl.arange(0, BK)` made after the loop (R and S's names bound by no statement
        between that and the load), masked along K by `R < K` alone (made there too) with
        masked-off lanes 0: the last block peeled by hand, which names K as the bound of the
        operand's reads along K. None otherwise."""
        body, stop = self.fn.body, loop.iter.args[1]
        names = operand["_names"]
        after = body[body.index(loop) + 1:]
        for stmt in after:
            for load in (c for c in ast.walk(stmt) if isinstance(c, ast.Call) and
                         self.f.tl_attr(c.func) == "load" and not self.in_loop(c)):
                tile = self._pointer_tile(_keyword(load, "pointer", 0), stmt)
                if tile is None or tile[0] != operand["base"] or \
                        (tile[1][1], tile[2][1]) != (operand["stride_row"],
                                                     operand["stride_col"]):
                    continue
                axes = (tile[1][0], tile[2][0])
                if axes[1 - k_axis] != names[1 - k_axis]:
                    continue
                size = self._peel_bound(load, stmt, axes, k_axis, stop, after, operand)
                if size is not None:
                    return size
        return None

    def _peel_bound(self, load, stmt, axes, k_axis, stop, after, operand):
        """_peeled_size's K for one load of the operand's tile after the loop, or None."""
        made = [s for s in after[:after.index(stmt)] if axes[k_axis] in _binds_names(s)]
        if not made or not isinstance(made[-1], ast.Assign) or len(made[-1].targets) != 1:
            return None
        start = made[-1]
        v = start.value
        parts = (v.left, v.right) if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add) \
            else ()
        block = next((self.pure_arange(x) for x in parts if isinstance(x, ast.Call) and
                      self.pure_arange(x)), None)
        begin = next((x for x in parts if not (isinstance(x, ast.Call) and self.pure_arange(x))),
                     None)
        between = after[after.index(start) + 1:after.index(stmt)]
        stop_names = {n.id for n in ast.walk(stop) if isinstance(n, ast.Name)}
        if block != operand["_offsets"][k_axis]["block"] or begin is None or \
                ast.unparse(begin) != ast.unparse(stop) or \
                any(stop_names & _binds_names(s) for s in after[:after.index(stmt)]) or \
                any(axes[k_axis] in _binds_names(s) for s in between):
            return None
        sites = []
        bounds = self._load_bounds(load, *axes, None, k_axis, sites) \
            if _keyword(load, "mask", 1) is not None else None
        if not bounds or len(set(bounds.get(k_axis, []))) != 1:
            return None
        for axis, compare in sites:
            if axis == k_axis and (compare.lineno, compare.col_offset) < \
                    (start.lineno, start.col_offset):
                return None
        return bounds[k_axis][0]

    def _body_names(self):
        return {n.id for stmt in self.fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}

    def _accumulator(self, stmt, dot):
        """{name, dtype, shape} for `acc = tl.dot(a, b, acc)` or `acc += tl.dot(a, b)` with
        `acc = tl.zeros((BM, BN), dtype=D)` at the top level before the loop; else None."""
        acc_arg = _keyword(dot, "acc", 2)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is dot:
            target = stmt.targets[0]
            ok = isinstance(acc_arg, ast.Name) and isinstance(target, ast.Name) and \
                acc_arg.id == target.id
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and \
                stmt.value is dot:
            target, ok = stmt.target, acc_arg is None and isinstance(stmt.target, ast.Name)
        else:
            return None
        loop = self.parents.get(stmt)
        body = self.fn.body
        # before the loop, one top-level assignment; after it, an epilogue may rebind the name
        # (`acc = acc * alpha + bias`), which then no longer holds the loop's sum alone
        binds = [s for s in body if target.id in _binds_names(s)] if ok else []
        before = [s for s in binds if body.index(s) < body.index(loop)]
        init = before[0] if len(before) == 1 and isinstance(before[0], ast.Assign) and \
            len(before[0].targets) == 1 and isinstance(before[0].targets[0], ast.Name) else None
        in_loop = [s for s in ast.walk(loop) if target.id in _binds_names(s) and
                   isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
        if init is None or in_loop != [stmt] or not (
                isinstance(init.value, ast.Call) and self.f.tl_attr(init.value.func) == "zeros"):
            return None
        shape = _keyword(init.value, "shape", 0)
        dtype = _keyword(init.value, "dtype", 1)
        return {"name": target.id, "dtype": self.text(dtype),
                "shape": [self.text(x) for x in shape.elts]
                if isinstance(shape, (ast.Tuple, ast.List)) else None,
                "rebound": len(binds) > 2}

    def _top_assign(self, name):
        """The kernel's top-level statement `name = ...` when it is the name's only one there."""
        found = [s for s in self.fn.body if isinstance(s, ast.Assign) and len(s.targets) == 1 and
                 isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
        return found[0] if len(found) == 1 else None

    def _operand(self, e, loop, k_axis):
        """An operand of the dot loaded in the loop from a pointer tile made before it and
        advanced after the load by one block along `k_axis` (A's columns, B's rows): {base, stride_row, stride_col, ptrs, ptrs_stmt, access (the
        load call), mask, other, advance}, with the offsets' facts and the load's bounds
        (`_offsets`, `_bounds`) for _gemm; None otherwise."""
        load, where = e, self.parents.get(e)
        if isinstance(e, ast.Name):
            where = next((s for s in loop.body if isinstance(s, ast.Assign) and
                          len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and
                          s.targets[0].id == e.id), None)
            load = where.value if where is not None and self._loaded_once(e, where, loop) \
                else None
        if not (isinstance(load, ast.Call) and self.f.tl_attr(load.func) == "load"):
            return None
        while where is not None and where not in loop.body:
            where = self.parents.get(where)
        pointer = _keyword(load, "pointer", 0)
        if where is None:
            return None
        if not isinstance(pointer, ast.Name) or pointer.id in self.names or \
                len(self.assigns.get(pointer.id, [])) != 2:
            return self._operand_made_in_loop(load, pointer, where, loop, k_axis)
        init = self._top_assign(pointer.id)
        step = next((s for s in loop.body if isinstance(s, ast.AugAssign) and
                     isinstance(s.op, ast.Add) and isinstance(s.target, ast.Name) and
                     s.target.id == pointer.id), None)
        tile = self._pointer_tile(init.value, init) if init is not None else None
        if tile is None or step is None or self.fn.body.index(init) > self.fn.body.index(loop) \
                or loop.body.index(where) > loop.body.index(step):
            return None
        base, (rows, stride_row), (cols, stride_col), batch = tile
        offsets = [self._offset_def(rows), self._offset_def(cols)]
        advanced = self._advanced_offsets((rows, cols)[k_axis], loop, where)
        if advanced is not None:
            offsets[k_axis] = advanced
        bounds = self._load_bounds(load, rows, cols, loop, k_axis)
        if None in offsets or bounds is None:
            return None
        k_block, k_stride = offsets[k_axis]["block"], (stride_row, stride_col)[k_axis]
        want = sorted([k_block] + ([k_stride] if k_stride != "1" else []))
        if sorted(self.text(x) for x in _product(step.value)) != want:
            return None
        return {"base": base, "batch": batch, "stride_row": stride_row, "stride_col": stride_col,
                "ptrs": pointer.id, "ptrs_stmt": _span(init), "access": _span(load),
                "mask": self.text(_keyword(load, "mask", 1)),
                "other": self.text(_keyword(load, "other", 2)), "advance": _span(step),
                "value": None, "_offsets": offsets, "_bounds": bounds, "_names": (rows, cols)}

    def _loaded_once(self, e, where, loop):
        """Whether the dot's operand `e`, a name, holds what the statement `where` of the loop's
        body loads in the same iteration, maybe cast: `where` comes before the dot's statement
        and the loop binds the name nowhere else but by casts of itself, `x = x.to(..)`
        (elementwise: a zero the load gives stays zero). Bindings outside the loop (a block
        peeled after it) cannot reach the dot."""
        dot_stmt = self.parents[self.parents[e]]
        if loop.body.index(where) > loop.body.index(dot_stmt):
            return False
        for node in ast.walk(loop):
            if not (isinstance(node, ast.Name) and node.id == e.id and
                    isinstance(node.ctx, (ast.Store, ast.Del))) or node in where.targets:
                continue
            cast = self.parents[node]
            value = getattr(cast, "value", None)
            if not (isinstance(cast, ast.Assign) and cast.targets == [node] and
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and
                    value.func.attr == "to" and _is_name(value.func.value, e.id)):
                return False
        return True

    def _load_bounds(self, load, rows, cols, loop, k_axis, sites=None):
        """The bounds of an operand's load (`_bounds`) when its masked-off lanes are zero and
        its bounds along K are made in the loop before the load (they depend on the
        iteration; with no loop, anywhere: `sites` then collects them); None otherwise. A load
        with a mask and no `other` gives zeros there too: Triton sets the register to 0 before
        the predicated load, and cp.async fills with zeros (its source size 0); the
        interpreter does the same."""
        mask, other = _keyword(load, "mask", 1), _keyword(load, "other", 2)
        zero = other is None or (mask is not None and isinstance(other, ast.Constant) and
                                 other.value == 0 and other.value is not False)
        sites = [] if sites is None else sites
        bounds = self._bounds(mask, rows, cols, sites) if mask is not None else {}
        if bounds is None or not zero or loop is None:
            return bounds if zero else None
        inside = {id(n) for n in ast.walk(loop)}
        for axis, compare in sites:
            if axis == k_axis and not (id(compare) in inside and (
                    id(compare) in {id(n) for n in ast.walk(load)} or
                    (compare.lineno, compare.col_offset) < (load.lineno, load.col_offset))):
                return None
        return bounds

    def _advanced_offsets(self, name, loop, where):
        """{start "0", block, wrap None, advanced True} for offsets along K made once at the top
        level before the loop, `name = tl.arange(0, B)`, and advanced in place one block each
        iteration by a statement of the loop's body after the load's (`name += B`, its one
        binding there): in the body before that statement they are the iteration's start plus
        tl.arange(0, B). None otherwise."""
        stores = [n for n in ast.walk(self.fn) if isinstance(n, ast.Name) and n.id == name and
                  isinstance(n.ctx, (ast.Store, ast.Del))]
        init = self._top_assign(name)
        step = next((s for s in loop.body if isinstance(s, ast.AugAssign) and
                     isinstance(s.op, ast.Add) and _is_name(s.target, name)), None)
        body = self.fn.body
        if name in self.names or len(stores) != 2 or init is None or step is None or \
                {id(self.parents[n]) for n in stores} != {id(init), id(step)} or \
                body.index(init) > body.index(loop) or \
                loop.body.index(step) < loop.body.index(where):
            return None
        block = self.pure_arange(init.value) if isinstance(init.value, ast.Call) else None
        if block not in self.constexprs or self.text(step.value) != block:
            return None
        return {"start": "0", "block": block, "wrap": None, "advanced": True}

    def _operand_made_in_loop(self, load, pointer, where, loop, k_axis):
        """_operand for a pointer tile the loop makes again each iteration, before the load (the
        load's pointer itself, or a name the body assigns once, with a statement before it):
        its offset along K made in the body too (`rk = k + tl.arange(0, BK)`, rk assigned once
        in the body, before the load), the other one before the loop. No advance; ptrs (the
        name) and ptrs_stmt only for a named tile; `_offsets`' K start is the iteration's
        start, which _gemm compares with the loop's."""
        stmt, tile = None, None
        if isinstance(pointer, ast.Name):
            stmt = next((s for s in loop.body if isinstance(s, ast.Assign) and
                         len(s.targets) == 1 and _is_name(s.targets[0], pointer.id)), None)
            if stmt is None or pointer.id in self.names or \
                    len(self.assigns.get(pointer.id, [])) != 1 or \
                    loop.body.index(stmt) >= loop.body.index(where):
                return None
            tile = self._pointer_tile(stmt.value, loop)
        elif pointer is not None:
            tile = self._pointer_tile(pointer, loop)
        if tile is None:
            return None
        base, (rows, stride_row), (cols, stride_col), batch = tile
        names = (rows, cols)
        made = [s for s in loop.body if isinstance(s, ast.Assign) and len(s.targets) == 1 and
                _is_name(s.targets[0], names[k_axis])]
        in_body = [s for s in ast.walk(loop) if names[k_axis] in _binds_names(s) and
                   isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
        if len(made) != 1 or in_body != made or \
                loop.body.index(made[0]) >= loop.body.index(where):
            return None
        offsets = [None, None]
        offsets[k_axis] = self._offset_value(made[0].value, made[0], loop)
        offsets[1 - k_axis] = self._offset_def(names[1 - k_axis])
        bounds = self._load_bounds(load, rows, cols, loop, k_axis)
        if None in offsets or bounds is None:
            return None
        offsets[k_axis]["in_loop"] = True
        return {"base": base, "batch": batch, "stride_row": stride_row, "stride_col": stride_col,
                "ptrs": pointer.id if stmt is not None else None,
                "ptrs_stmt": _span(stmt) if stmt is not None else None, "access": _span(load),
                "mask": self.text(_keyword(load, "mask", 1)),
                "other": self.text(_keyword(load, "other", 2)), "advance": None,
                "value": None, "_offsets": offsets, "_bounds": bounds, "_names": (rows, cols)}

    def _gemm_store(self, loop):
        """The kernel's one tl.store, at the top level after the loop, of a tile of the dot's
        shape through a pointer tile (a name made at the top level, or the expression itself),
        masked by bounds or not: {base, strides, ptrs, ptrs_stmt, access, mask, value} with
        `_offsets`, `_bounds` (rows, cols) and `_value` for _gemm; None otherwise."""
        stores = [c for c in self.calls() if self.f.tl_attr(c.func) == "store"]
        stmt = self.parents.get(stores[0]) if len(stores) == 1 else None
        body = self.fn.body
        if stmt not in body or body.index(stmt) < body.index(loop) or \
                not isinstance(stmt, ast.Expr):
            return None
        store = stores[0]
        pointer = _keyword(store, "pointer", 0)
        # a name made once at the top level, maybe the base parameter itself (`C = C + ...`)
        init = self._top_assign(pointer.id) if isinstance(pointer, ast.Name) and \
            len(self.assigns.get(pointer.id, [])) == 1 else None
        if init is not None and body.index(init) > body.index(stmt):
            return None
        tile = self._pointer_tile(init.value if init is not None else pointer,
                                  init if init is not None else stmt)
        value, mask = _keyword(store, "value", 1), _keyword(store, "mask", 2)
        if tile is None or value is None:
            return None
        base, (rows, stride_row), (cols, stride_col), batch = tile
        offsets = [self._offset_def(rows), self._offset_def(cols)]
        bounds = self._bounds(mask, rows, cols) if mask is not None else {}
        if None in offsets or bounds is None:
            return None
        return {"base": base, "batch": batch, "stride_row": stride_row, "stride_col": stride_col,
                "ptrs": pointer.id if init is not None else None,
                "ptrs_stmt": _span(init) if init is not None else None, "access": _span(store),
                "mask": self.text(mask), "other": None, "advance": None,
                "value": self.text(value), "pointer": self.text(pointer),
                "plain": len(store.args) + len(store.keywords) == len(
                    [x for x in (pointer, value, mask) if x is not None]),
                "_offsets": offsets, "_value": value,
                "_bounds": (bounds.get(0, []), bounds.get(1, []))}

    def _pointer_tile(self, e, at):
        """(base, (rows, stride), (cols, stride), batch) for `base + rows[:, None] * stride_r +
        cols[None, :] * stride_c` (terms in any order, a factor's order either way, a stride
        left out meaning 1) made by the top-level statement `at`, the strides parameters and
        base a pointer parameter (batch None) or a pointer offset along a batch axis before
        `at` (`_batch_base`); else None."""
        terms = []

        def flat(x):
            if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Add):
                flat(x.left)
                flat(x.right)
            else:
                terms.append(x)
        flat(e)
        bases = [t for t in terms if isinstance(t, ast.Name) and (
            (t.id in self.names and t.id not in self.constexprs and (
                t.id not in self.assigns or self._rebinds_once(at, t.id))) or
            self._batch_base(t.id, at) is not None)]
        if len(terms) != 3 or len(bases) != 1:
            return None
        axes = {}
        for t in terms:
            if t is bases[0]:
                continue
            factors = _product(t)
            tiles = [x for x in factors if _axis(x) is not None]
            strides = [x for x in factors if x not in tiles]
            if len(tiles) != 1 or len(strides) > 1 or \
                    (strides and not (isinstance(strides[0], ast.Name) and
                                      strides[0].id in self.names and
                                      strides[0].id not in self.assigns)):
                return None
            axis, name = _axis(tiles[0])
            axes[axis] = (name, strides[0].id if strides else "1")
        if sorted(axes) != [0, 1]:
            return None
        return bases[0].id, axes[0], axes[1], self._batch_base(bases[0].id, at)

    def _rebinds_once(self, stmt, name):
        """Whether `stmt` is the top-level `name = ...`, the only binding of parameter `name`
        (read in its own value before it is bound: `C = C + offsets`)."""
        return isinstance(stmt, ast.Assign) and stmt in self.fn.body and \
            len(stmt.targets) == 1 and _is_name(stmt.targets[0], name) and \
            len(self.assigns.get(name, [])) == 1 and \
            [s for s in self.fn.body if name in _binds_names(s)] == [stmt]

    def _batch_base(self, name, at):
        """{pointer, index, stride} when `name` is a pointer offset along a batch axis by one
        top-level statement before `at`, the name's only binding: `name = P + I * S` or, P being
        `name` itself, `P += I * S` (either order of terms and factors); P a pointer parameter
        bound nowhere else, I a name assigned once that is not a tile (a program's batch index;
        the descriptor made from the base would not compile were it one), S the product of the
        other factors (`stride`: their texts), each a scalar parameter the body never rebinds or
        an integer. None otherwise."""
        body = self.fn.body
        found = [s for s in body if name in _binds_names(s)]
        stmt = found[0] if len(found) == 1 else None
        if stmt is None or at not in body or body.index(stmt) >= body.index(at) or \
                len(self.assigns.get(name, [])) != 1 or \
                not isinstance(stmt, (ast.Assign, ast.AugAssign)):
            return None
        value = self.assigns[name][0]
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
            return None
        for pointer, offset in ((value.left, value.right), (value.right, value.left)):
            if not isinstance(pointer, ast.Name) or pointer.id not in self.names or \
                    pointer.id in self.constexprs or \
                    (pointer.id in self.assigns and pointer.id != name):
                continue
            factors = _product(offset)
            index = [f for f in factors if isinstance(f, ast.Name) and f.id not in self.names]
            stride = [f for f in factors if f not in index]
            if len(index) == 1 and len(self.assigns.get(index[0].id, [])) == 1 and \
                    self.shape(index[0]) == () and stride and all(
                        (isinstance(f, ast.Name) and f.id not in self.constexprs and
                         f.id not in self.assigns) or
                        (isinstance(f, ast.Constant) and type(f.value) is int) for f in stride):
                return {"pointer": pointer.id, "index": index[0].id,
                        "stride": [self.text(f) for f in stride]}
        return None

    def _offset_def(self, name):
        """{start, block, wrap} for the top-level `name = S * B + tl.arange(0, B)` (start the
        text of S * B) or `name = tl.arange(0, B)` (start "0"), B a constexpr, either maybe
        `% W` (wrap W); the names in S bound by no statement after it (S's text means the same
        wherever a rewrite uses it later). None otherwise."""
        init = self._top_assign(name)
        if name in self.names:
            return None
        if init is None or len(self.assigns.get(name, [])) != 1:  # maybe made again alike
            return self._offset_value(ast.Name(id=name, ctx=ast.Load()), self.fn.body[-1], None)
        return self._offset_value(init.value, init, None)

    def _offset_value(self, v, stmt, loop):
        """_offset_def's facts of the value `v` that `stmt` assigns: at the top level (loop
        None), `S * B + tl.arange(0, B)`, S's names bound by no statement after `stmt`; in the
        body of `loop`, `S + tl.arange(0, B)` with any start S (the caller compares it with the
        iteration's start along K), S's names bound nowhere in the body. Value-preserving hints
        (`tl.multiple_of`, `tl.max_contiguous`) are looked through, and so is a name whose
        assignments, all top-level, all make the same value (offsets made again to free
        registers) when that value's names are bound by no statement after its first."""
        v = self._without_hints(v)
        wrap = None
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mod):
            v, wrap = self._without_hints(v.left), self.text(v.right)
        body = self.fn.body
        if loop is None and isinstance(v, ast.Name) and v.id not in self.names:
            binds = [s for s in body if v.id in _binds_names(s)]
            values = {ast.unparse(x) for x in self.assigns.get(v.id, [])}
            if binds and len(values) == 1 and len(binds) == len(self.assigns[v.id]) and \
                    all(isinstance(s, ast.Assign) for s in binds) and \
                    body.index(binds[0]) < body.index(stmt):
                inner = self._offset_value(self.assigns[v.id][0], binds[0], None)
                if inner is None or (wrap and inner["wrap"]):
                    return None
                return {**inner, "wrap": wrap or inner["wrap"]}
            return None
        block, start = self.pure_arange(v) if isinstance(v, ast.Call) else None, "0"
        if block is None and isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
            later = set().union(*[_binds_names(s) for s in (
                loop.body if loop is not None else body[body.index(stmt) + 1:])])
            for scaled, rng in ((v.left, v.right), (v.right, v.left)):
                b = self.pure_arange(rng) if isinstance(rng, ast.Call) else None
                if b and (loop is not None or (
                        isinstance(scaled, ast.BinOp) and isinstance(scaled.op, ast.Mult) and
                        any(isinstance(x, ast.Name) and x.id == b for x in _product(scaled)))):
                    block, start = b, self.text(scaled)
                    block = None if later & {n.id for n in ast.walk(scaled)
                                             if isinstance(n, ast.Name)} else block
                    break
        if block not in self.constexprs:
            return None
        return {"start": start, "block": block, "wrap": wrap}

    def _without_hints(self, v):
        """X for `tl.multiple_of(X, ..)` or `tl.max_contiguous(X, ..)` (nested), else v."""
        while isinstance(v, ast.Call) and v.args and \
                self.f.tl_attr(v.func) in ("multiple_of", "max_contiguous"):
            v = v.args[0]
        return v

    def _bounds(self, mask, rows, cols, sites=None):
        """{axis: [bound texts]} for a mask made only of `rows[:, None] < X` and `cols[None, :] <
        Y` (or `(rows < X)[:, None]`, `(cols < Y)[None, :]`) joined by &, maybe through names,
        maybe indexed (`mask_m[:, None]`); None for any other mask. A name stands for each value
        the kernel assigns it (masks chosen in if / else branches: whichever reaches the access
        is one of them), `X if C else Y` for X and Y, `None` for no mask at all. `sites` collects each compare found along
        an axis: (axis, compare node), for the caller to place."""
        if isinstance(mask, ast.Constant) and mask.value is None:
            return {}
        index = None
        if isinstance(mask, ast.Subscript) and isinstance(mask.value, ast.Name):
            mask, index = mask.value, mask.slice
        values = self._values_of(mask) if isinstance(mask, ast.Name) else \
            [mask.body, mask.orelse] if isinstance(mask, ast.IfExp) else None
        if values is not None:
            found = [self._bounds(v if index is None else ast.Subscript(value=v, slice=index),
                                  rows, cols, sites) for v in values]
            if None in found:
                return None
            return {k: [t for f in found for t in f.get(k, [])]
                    for k in set().union(*found)}
        if index is not None:
            mask = ast.Subscript(value=mask, slice=index)
        if isinstance(mask, ast.Subscript) and isinstance(mask.value, ast.Compare) and \
                len(mask.value.ops) == 1:
            compare = mask.value  # the bound indexed after the compare: index its tile instead
            bound = self._bounds(ast.Compare(left=ast.Subscript(value=compare.left,
                                                                slice=mask.slice),
                                             ops=compare.ops, comparators=compare.comparators),
                                 rows, cols)
            if bound and sites is not None:
                sites.extend((axis, compare) for axis in bound)
            return bound
        if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
            left = self._bounds(mask.left, rows, cols, sites)
            right = self._bounds(mask.right, rows, cols, sites)
            if left is None or right is None:
                return None
            return {k: left.get(k, []) + right.get(k, []) for k in set(left) | set(right)}
        if isinstance(mask, ast.Compare) and len(mask.ops) == 1 and \
                isinstance(mask.ops[0], ast.Lt) and _axis(mask.left) in ((0, rows), (1, cols)):
            if sites is not None and hasattr(mask, "lineno"):
                sites.append((_axis(mask.left)[0], mask))
            return {_axis(mask.left)[0]: [ast.unparse(mask.comparators[0])]}
        return None

    def _values_of(self, name, seen=frozenset()):
        """Every value the kernel assigns a local name (plain assignments only, each binding of
        it one of them), or None: a parameter, a name bound otherwise (in place, by a loop,
        unpacked from a call), or one read in its own value."""
        if name.id in self.names or name.id in seen:
            return None
        values = self.assigns.get(name.id, [])
        stores = [n for n in ast.walk(self.fn) if isinstance(n, ast.Name) and
                  n.id == name.id and isinstance(n.ctx, (ast.Store, ast.Del))]
        if not values or len(stores) != len(values) or any(
                isinstance(self.parents.get(n), ast.AugAssign) for n in stores) or any(
                _is_name(n, name.id) for v in values for n in ast.walk(v)):
            return None
        return values

    def _one_size(self, texts):
        """The one size the texts name (a scalar parameter), or None when none or several."""
        found = {t for t in texts if t is not None}
        size = found.pop() if len(found) == 1 else None
        return size if size in self.names and size not in self.constexprs and \
            size not in self.assigns else None

    def _k_loop(self, loop, block_k):
        """(K, var, offset) for `for k in range(0, K, BK)` (offset k) or `range(tl.cdiv(K, BK))`
        / `range(0, tl.cdiv(K, BK))` (offset k * BK; the count maybe a name assigned once
        before the loop), range or tl.range, K a scalar parameter; the offset is where the
        iteration's tiles start along K. K is None for `range(0, S, BK)` whose stop S is not
        a parameter (its names bound nowhere in the loop): the caller looks for the last
        block peeled after the loop. None otherwise."""
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(loop.target, ast.Name) and
                ((isinstance(it.func, ast.Name) and it.func.id == "range") or
                 self.f.tl_attr(it.func) == "range")):
            return None
        args, var = it.args, loop.target.id
        first = self.text(args[0]) if args else None
        if len(args) == 3 and first == "0" and self.text(args[2]) == block_k:
            size, offset = args[1], var
            in_loop = set().union(*[_binds_names(s) for s in loop.body])
            if not (isinstance(size, ast.Name) and size.id in self.names) and \
                    var not in self.assigns and not in_loop & {
                        n.id for n in ast.walk(size) if isinstance(n, ast.Name)}:
                return None, var, offset
        elif len(args) == 1 or (len(args) == 2 and first == "0"):
            cdiv = args[-1]
            values = self._values_of(cdiv) if isinstance(cdiv, ast.Name) else None
            if values is not None and len(values) == 1 and \
                    self._top_statement(values[0]) in self.fn.body[:self.fn.body.index(loop)]:
                cdiv = values[0]  # the count named before the loop (`num_iters = cdiv(..)`)
            f = cdiv.func if isinstance(cdiv, ast.Call) else None
            is_cdiv = self.f.tl_attr(f) == "cdiv" or (
                isinstance(f, ast.Attribute) and f.attr == "cdiv" and
                isinstance(f.value, ast.Name) and f.value.id in self.f.triton)
            if not is_cdiv or len(cdiv.args) != 2 or self.text(cdiv.args[1]) != block_k:
                return None
            size, offset = cdiv.args[0], f"{var} * {block_k}"
        else:
            return None
        if not (isinstance(size, ast.Name) and size.id in self.names) or var in self.assigns or \
                size.id in self.assigns:
            return None
        return size.id, var, offset

    def _to_dtype(self, value):
        """D when the stored value is `x.to(D)`, itself or through a name assigned once."""
        if isinstance(value, ast.Name) and len(self.assigns.get(value.id, [])) == 1:
            value = self.assigns[value.id][0]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "to" and value.args:
            return self.text(value.args[0])
        return None

    def _tile_body(self):
        """When the body from `pid = tl.program_id(0)` (the kernel's one program id, no
        tl.num_programs) to its end can run once per tile in a loop: no return, no name bound
        before it (parameters included) bound again after it. {pid, stmt, call, lines}: lines
        are the starts of its logical lines and of its own-line comments outside brackets,
        where a rewrite indents it. None otherwise."""
        ids = [c for c in self.calls() if self.f.tl_attr(c.func) in ("program_id", "num_programs")]
        call = ids[0] if len(ids) == 1 and self.f.tl_attr(ids[0].func) == "program_id" else None
        axis = _keyword(call, "axis", 0) if call is not None else None
        stmt = self.parents.get(call)
        body = self.fn.body
        if axis is None or self.text(axis) != "0" or stmt not in body or \
                not (isinstance(stmt, ast.Assign) and stmt.value is call and
                     len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)) or \
                any(isinstance(n, ast.Return) for n in ast.walk(self.fn)):
            return None
        i = body.index(stmt)
        bound = [set(self.names)] + [_binds_names(s) for s in body[:i]]
        if set().union(*bound) & set().union(*[_binds_names(s) for s in body[i:]]):
            return None
        first, last = stmt.lineno, self.fn.end_lineno
        lines = [{"line": n, "col": 0, "end_line": n, "end_col": 0}
                 for n in _line_starts(b"".join(self.f.lines)) if first <= n <= last]
        return {"pid": stmt.targets[0].id, "stmt": _span(stmt), "call": _span(call),
                "lines": lines}

    def _is_descriptor(self, e):
        if not isinstance(e, ast.Name):
            return False
        if e.id in self.names:
            return e.id not in self.constexprs and e.id not in self.f.tl
        return self.made_by(e, {"make_tensor_descriptor"})

    def _loops(self):
        out = []
        for node in ast.walk(self.fn):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)):
                continue
            it = node.iter
            name = self.f.tl_attr(it.func)
            kind = "range" if isinstance(it.func, ast.Name) and it.func.id == "range" else \
                f"tl.{name}" if name in ("range", "static_range") else None
            if kind is None or not it.args:
                continue
            args = [self.text(a) for a in it.args]
            start, stop, step = (["0"] + args + ["1"])[:3] if len(args) == 1 else \
                (args + ["1"])[:3]
            span = stop if start == "0" else f"{stop} - {start}"
            if step == "1":
                trip = span
            else:
                trip = f"cdiv({span}, {step})"
            depth = 0
            p = node
            while p in self.parents:
                p = self.parents[p]
                depth += isinstance(p, ast.For)
            out.append({"kind": kind, "var": self.text(node.target), "start": start,
                        "stop": stop, "step": step, "trip_count": trip, "depth": depth,
                        "span": _span(node), "iter_span": _span(it),
                        "func_span": _span(it.func),
                        "options": {k.arg: self.text(k.value) for k in it.keywords
                                    if k.arg in _LOOP_OPTIONS}})
        return sorted(out, key=lambda lp: (lp["span"]["line"], lp["span"]["col"]))

    def _memop(self, c, op, descriptor=False):
        names = _STORE_ARGS if op == "store" else _LOAD_ARGS
        if descriptor:
            names = ("offsets", "value") if op == "store" else ("offsets",)
        get = {n: _keyword(c, n, i) for i, n in enumerate(names)}
        if op in ("make_block_ptr", "make_tensor_descriptor"):
            get = {"pointer": _keyword(c, "base", 0),
                   "block_shape": _keyword(c, "block_shape", 4 if op == "make_block_ptr" else 3)}
        elif op == "advance":
            get = {"pointer": _keyword(c, "base", 0), "offsets": _keyword(c, "offsets", 1)}
        pointer = get.get("pointer")
        if descriptor and isinstance(c.func, ast.Attribute) and c.func.attr in ("load", "store"):
            pointer = c.func.value
        elif descriptor:
            pointer = _keyword(c, "desc", 0)
        block = op in ("make_block_ptr", "advance") or (
            op in ("load", "store") and not descriptor and pointer is not None and
            self.made_by(pointer, {"make_block_ptr", "advance"}))
        out = {"op": op, "span": _span(c), "pointer": self.text(pointer),
               "block_pointer": bool(block), "descriptor": descriptor or
               op == "make_tensor_descriptor", "in_loop": self.in_loop(c),
               # for the analysis only, dropped from the document:
               "_bases": self.pointer_bases(pointer) if pointer is not None else set(),
               "_mask": get.get("mask"), "_check": get.get("boundary_check"),
               "_pointer": pointer}
        for field in ("value", "mask", "other", "boundary_check", "padding_option",
                      "cache_modifier", "eviction_policy", "volatile", "block_shape", "offsets"):
            out[field] = self.text(get.get(field))
        return out

    def _dot(self, c):
        a, b = (c.args + [None, None])[:2]
        sa = self.shape(a) if a is not None else None
        sb = self.shape(b) if b is not None else None
        dims = (sa[-2], sb[-1], sa[-1]) if sa and sb and len(sa) >= 2 and len(sb) >= 2 \
            else (None, None, None)
        out = {"span": _span(c), "_operands": [x for x in (a, b) if x is not None],
               "a": self.text(a), "b": self.text(b),
               "acc": self.text(_keyword(c, "acc", 2)), "m": dims[0], "n": dims[1], "k": dims[2],
               "in_loop": self.in_loop(c)}
        for name in ("input_precision", "out_dtype", "max_num_imprecise_acc", "allow_tf32"):
            out[name] = self.text(_keyword(c, name))
        return out

    def _masks(self, masks, memops):
        """(constexprs whose tiles are masked, {constexpr: sizes its tiles are compared with},
        {constexpr: sizes its bare tl.arange is compared with by <}); sizes are texts over the
        kernel's parameters."""
        masked, sizes, rows = set(), {}, {}
        for m in masks:
            for x in self.expand(m):
                for cmp in (n for n in ast.walk(x) if isinstance(n, ast.Compare)):
                    op, right = cmp.ops[0], cmp.comparators[0]
                    if isinstance(op, (ast.Lt, ast.LtE)):
                        index, bound = cmp.left, right
                    elif isinstance(op, (ast.Gt, ast.GtE)):
                        index, bound = right, cmp.left
                    else:
                        continue
                    dims = [d for d in self.shape(index) or () if d != "1"]
                    masked.update(dims)
                    names = {n.id for n in ast.walk(bound) if isinstance(n, ast.Name)}
                    if not names or not names <= set(self.names):
                        continue
                    for d in dims:
                        sizes.setdefault(d, set()).add(self.text(bound))
                    extent = self.pure_arange(index)
                    if extent and isinstance(op, ast.Lt):
                        rows.setdefault(extent, set()).add(self.text(bound))
        for m in memops:  # a block pointer's boundary_check masks those axes of its block
            check = _literal(m["_check"]) if m["_check"] is not None else None
            dims = self.shape(m["_pointer"]) if m["block_pointer"] else None
            for axis in check if isinstance(check, list) and dims else []:
                if isinstance(axis, int) and 0 <= axis < len(dims):
                    masked.add(dims[axis])
        return masked, sizes, rows

    def _heuristic_names(self):
        """The constexprs a @triton.heuristics decorator sets (from its dict's literal keys)."""
        names = set()
        for d in self.fn.decorator_list:
            if self.f.decorator_kind(d) == "heuristics" and isinstance(d, ast.Call) and d.args \
                    and isinstance(d.args[0], ast.Dict):
                names |= {k.value for k in d.args[0].keys if isinstance(k, ast.Constant)}
        return names

    def _under_flag(self, node, flags):
        """Whether `node` lies in a branch of an `if` that tests one of `flags`."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id in flags
                                                for n in ast.walk(node.test)):
                return True
        return False

    def _unguarded_writes(self, memops, flags):
        """The tile extents a store or atomic writes along with no mask (or boundary check) over
        that axis: a larger block there writes past the buffer, a smaller one leaves it short.
        A store in a branch on a flag that @triton.heuristics sets (`if EVEN_N:`) is left out:
        the heuristic is worked out again from each config's blocks."""
        writes = [(m["_pointer"], m["_mask"], m["_check"] if m["block_pointer"] else None,
                   m["block_pointer"]) for m in memops if m["op"] == "store" and
                  not m["descriptor"] and m["_pointer"] is not None and
                  not self._under_flag(m["_pointer"], flags)]
        for c in self.calls():
            name = self.f.tl_attr(c.func) or ""
            if name.startswith("atomic_"):
                writes.append((_keyword(c, "pointer", 0),
                               _keyword(c, "mask", 3 if name == "atomic_cas" else 2), None, False))
        out = set()
        for pointer, mask, check, block in writes:
            dims = self.shape(pointer) if pointer is not None else None
            if not dims:
                continue
            if block:
                axes = _literal(check) if check is not None else None
                guarded = {dims[a] for a in axes if isinstance(a, int) and 0 <= a < len(dims)} \
                    if isinstance(axes, list) else set()
            else:
                guarded = set(self.shape(mask) or ()) if mask is not None else set()
            out |= {d for d in dims if d not in guarded and d != "1"}
        return out

    def _block_shapes(self):
        """Names in the block_shape of a block pointer or descriptor: tile extents there."""
        out = set()
        for c in self.calls():
            name = self.f.tl_attr(c.func)
            if name in ("make_block_ptr", "make_tensor_descriptor"):
                node = _keyword(c, "block_shape", 4 if name == "make_block_ptr" else 3)
                out |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else set()
        return out

    def _uses(self):
        uses = {}
        for node in (n for stmt in self.fn.body for n in ast.walk(stmt)):
            if isinstance(node, ast.Name) and node.id in self.constexprs:
                uses.setdefault(node.id, set()).add(self._context(node))
        for d in self.dots:
            for dim in (d["m"], d["n"], d["k"]):
                if dim in self.constexprs:
                    uses.setdefault(dim, set()).add("dot")
        for name in self.masked & set(self.constexprs):
            uses.setdefault(name, set()).add("mask")
        return uses

    def _context(self, node):
        child, p = node, self.parents.get(node)
        while p is not None and p is not self.fn:
            if isinstance(p, ast.Call):
                name = self.f.tl_attr(p.func)
                method = p.func.attr if isinstance(p.func, ast.Attribute) else None
                kw = next((k.arg for k in p.keywords if child in (k, k.value)), None)
                index = p.args.index(child) if child in p.args else None
                if name == "arange":
                    return "arange"
                if name == "dot":
                    return "dot"
                if name in ("load", "store") and (kw == "mask" or index == (2 if name == "store"
                                                                            else 1)):
                    return "mask"
                if kw == "block_shape" or (name in ("zeros", "full") and index == 0) or \
                        ((name in ("reshape", "broadcast_to") or method in ("reshape", "view"))
                         and child is not p.func):
                    return "shape"
                if name == "static_range":
                    return "static_range"
                if isinstance(self.parents.get(p), ast.For) and self.parents[p].iter is p:
                    if (isinstance(p.func, ast.Name) and p.func.id == "range") or name == "range":
                        if kw in _LOOP_OPTIONS:
                            return "other"  # a tl.range option: see the stages rule
                        return "loop_step" if index == 2 else "loop_bound"
            if isinstance(p, (ast.If, ast.IfExp, ast.While)) and p.test is child:
                return "condition"
            child, p = p, self.parents.get(p)
        return "other"

    def _autotune(self, d):
        kw = {k.arg: k.value for k in d.keywords if k.arg}
        configs = kw.get("configs", d.args[0] if d.args else None)
        key = kw.get("key", d.args[1] if len(d.args) > 1 else None)
        listed, source = configs, None
        if isinstance(configs, ast.Name):
            stmts = self.f.module_assigns.get(configs.id, [])
            source = "\n".join(self.text(s) for s in stmts) or None
            listed = stmts[0].value if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) \
                else None
        parsed = [self._config(c) for c in listed.elts] \
            if isinstance(listed, (ast.List, ast.Tuple)) else None
        literal = parsed is not None and None not in parsed
        out = {"span": _span(d), "configs_text": self.text(configs), "configs_source": source,
               "configs_literal": literal, "configs": parsed if literal else None,
               "key": _literal(key) if key is not None and _literal(key) is not None
               else self.text(key)}
        for name in _AUTOTUNE_KNOWN[2:]:
            value = kw.get(name)
            lit = _literal(value) if value is not None else None
            out[name] = lit if lit is not None and name in ("reset_to_zero", "restore_value") \
                else self.text(value)
        out["options"] = {k: self.text(v) for k, v in kw.items() if k not in _AUTOTUNE_KNOWN}
        self.autotune_levels = _varied(_Static(self.f).configs(configs)) \
            if configs is not None else {}
        return out

    def _config(self, c):
        """A triton.Config(...) of literals as a flat dict, else None."""
        if not (isinstance(c, ast.Call) and self.f.is_config(c.func)):
            return None
        kwargs = _keyword(c, "kwargs", 0)
        values = _literal(kwargs) if kwargs is not None else None
        if not isinstance(values, dict):
            return None
        for k in c.keywords:
            if k.arg in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                v = _literal(k.value)
                if not isinstance(v, int) and v is not None:
                    return None
                values[k.arg] = v
            elif k.arg == "pre_hook":
                return None
        return values

    def _tunables(self, params, uses, heuristics, sizes, rows):
        set_by_heuristics = set(heuristics["values"]) if heuristics else set()
        stage_params = {lp["options"].get("num_stages") for lp in self.loops}
        steps = {n for n in self.constexprs if "loop_step" in uses.get(n, ())}
        block_shapes = self._block_shapes()
        levels = self.autotune_levels
        tunables, constraints = [], []
        for p in params:
            if p["kind"] != "constexpr":
                continue
            n, u = p["name"], uses.get(p["name"], set())
            default = self.default_nodes.get(n)
            default_text = self.text(default) if default is not None else ""
            t = {"name": n, "kind": "fixed", "why": "", "domain": "", "relates_to": [],
                 "covers_row": None, "dot": "dot" in u}
            if n in set_by_heuristics:
                t["why"] = "set by @triton.heuristics"
            elif "dtype" in n.lower() or (default_text.split(".")[0] in self.f.tl and
                                          _literal(default) is None):
                t["why"] = "a dtype"
            elif n in stage_params:
                t.update(kind="stages", domain="1..5")
            elif "GROUP" in n.upper() and "arange" not in u:
                t.update(kind="group", domain="1, 4, 8, 16")
            elif not (u & {"arange", "loop_step"} or n in self.masked or n in block_shapes):
                # a bound in a mask, a tile shape or a dot dimension alone is no tile extent:
                # a count (experts, groups, a stride) whose change changes the result
                t["why"] = "a flag (used in conditions)" if "condition" in u else \
                    "a static loop count (a problem size)" if "static_range" in u else \
                    "not a size" if not u & {"shape", "mask", "dot"} else \
                    "not a tile extent (a bound or a shape, never a masked tl.arange extent)"
            elif "arange" in u and n not in self.masked and "loop_step" not in u:
                t["why"] = "must equal a size (an unmasked tl.arange extent)"
            elif n in self.unguarded and "loop_step" not in u:
                t["why"] = "must fit the buffer (a store along it has no mask)"
            else:
                t["kind"] = "step" if "loop_step" in u else "block"
                t["relates_to"] = sorted(sizes.get(n, ()))
                row = sorted(rows.get(n, ()))
                if row and n not in steps and "loop_bound" not in u:
                    t["covers_row"] = row[0]
                    t["domain"] = f"powers of two from next_pow2({row[0]}) to 4x, at most 65536"
                    for b in row:
                        constraints.append({"expr": f"{n} >= {b}", "why": f"one block covers the "
                                            f"row: tl.arange(0, {n}) masked by < {b}"})
                elif t["dot"]:
                    t["domain"] = "powers of two 16..256"
                else:
                    t["domain"] = "powers of two from 1/4 to 4x the launched value, 16..65536"
            if n in levels and n not in set_by_heuristics and t["why"] != "a dtype":
                # the file's own autotune configs vary it: they say which values keep the result
                if t["kind"] == "fixed":
                    t.update(kind="block", why="", relates_to=[], covers_row=None,
                             domain="the values of the autotune configs", only_levels=True)
                t["levels"] = levels[n]
            tunables.append(t)
        tunables.append({"name": "num_warps", "kind": "warps", "why": "", "domain": "2, 4, 8, 16",
                         "relates_to": [], "covers_row": None, "dot": False})
        if "num_stages" not in self.names:
            tunables.append({"name": "num_stages", "kind": "stages",
                             "why": "" if self.loops else "no loops: num_stages changes nothing",
                             "domain": "1..5" if self.loops else "the launched value",
                             "relates_to": [], "covers_row": None, "dot": False})
        for t in tunables[-2:]:
            if t["name"] in levels:
                t["levels"] = levels[t["name"]]
        smem = self._smem()
        if smem:
            constraints.append(smem)
        return tunables, constraints

    def _smem(self):
        """The shared-memory estimate over the loaded tl.dot operand tiles, or None."""
        terms, sizes = [], []
        for d in self.dots:
            for operand in d["_operands"]:
                s = self.shape(operand)
                if s and len(s) == 2 and all(x in self.constexprs for x in s) and \
                        self._loaded(operand):
                    terms.append(f"{s[0]}*{s[1]}")
                    sizes.append(self._element_size(operand))
        if not terms:
            return None
        stages = " * num_stages" if self.loops else ""
        return {"expr": f"({' + '.join(terms)}) * {max(sizes)}{stages} <= {_SMEM_BYTES}",
                "why": "shared memory: the loaded tl.dot operand tiles"
                       + (", one copy a pipeline stage" if self.loops else "")}

    def _loaded(self, e, seen=frozenset()):
        """Whether `e` is a loaded tile itself (through names, .to() and tl.trans), not a value
        computed from one."""
        if isinstance(e, ast.Name) and e.id not in self.names and e.id not in seen:
            return any(self._loaded(v, seen | {e.id}) for v in self.assigns.get(e.id, []))
        if not isinstance(e, ast.Call):
            return False
        name = self.f.tl_attr(e.func)
        if name == "load":
            return True
        if isinstance(e.func, ast.Attribute) and name is None:
            if e.func.attr == "load":
                return self._is_descriptor(e.func.value)
            if e.func.attr == "to":
                return self._loaded(e.func.value, seen)
        return name == "trans" and bool(e.args) and self._loaded(e.args[0], seen)

    def _element_size(self, operand):
        for x in self.expand(operand):
            if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and \
                    x.func.attr == "to" and x.args:
                dtype = self.text(x.args[0]).split(".")[-1]
                if dtype in _DTYPE_BYTES:
                    return _DTYPE_BYTES[dtype]
        return 2


    # ---- loop_tails: loops whose masks only their last iteration needs ----
    def _loop_tails(self):
        """Loops `for v in range(0, B, E)` / `range(tl.cdiv(B, E))` whose loads and stores are
        masked by the tile along v against B, with the spans that drop those terms (see the
        module's docstring); sorted by place."""
        out = []
        for loop in ast.walk(self.fn):
            for form in (self._tail_form(loop), self._diagonal_form(loop)):
                tail = self._tail(loop, form) if form else None
                if tail:
                    out.append(tail)
                    break
        return sorted(out, key=lambda o: (o["span"]["line"], o["span"]["col"]))

    def _scale_folds(self, pointers):
        """Scores scaled by a positive S that their later uses commute with (see the module's
        docstring); sorted by place. `pointers`: the pointer parameters."""
        out = []
        for st in ast.walk(self.fn):
            fold = self._scale_fold(st, pointers) if isinstance(st, (ast.Assign, ast.AugAssign)) \
                else None
            if fold:
                out.append(fold)
        return sorted(out, key=lambda o: (o["stmt"]["line"], o["stmt"]["col"]))

    def _scale_fold(self, st, pointers):
        site = self._scaling(st)
        loop = self.parents.get(st)
        if site is None or not isinstance(loop, ast.For) or st not in loop.body:
            return None
        x, scale, cut, product = site
        bound = _binds_names(loop)
        params = self._positive_factors(scale, bound)  # a scalar the loop never changes
        if cut is None or params is None or params & pointers:
            return None
        at = loop.body.index(st)
        made = at if product else next(
            (i for i, b in enumerate(loop.body[:at]) if isinstance(b, ast.Assign) and
             len(b.targets) == 1 and _is_name(b.targets[0], x) and
             not any(_is_name(n, x) for n in ast.walk(b.value))), None)
        if made is None:
            return None
        maxes, subs = [], []
        for n in ast.walk(self.fn):
            if not (isinstance(n, ast.Name) and n.id == x):
                continue
            if n is loop.target:
                return None
            if not self._within(n, loop):
                if self._unseen(n, loop, x):
                    continue
                return None
            i = next(j for j, b in enumerate(loop.body) if self._within(n, b))
            if i < made:  # read before this iteration makes it: the last iteration's value
                return None
            if i <= at:  # the scaling statement and what comes before it run as they did
                continue
            up = self.parents.get(n)
            if isinstance(up, ast.Call) and self.f.tl_attr(up.func) == "max" and \
                    up.args and up.args[0] is n:
                maxes.append(_span(up))
            elif isinstance(up, ast.BinOp) and isinstance(up.op, ast.Sub) and up.left is n:
                subs.append(_span(n))
            elif not self._masked_again(n, up, x):
                return None
        if not maxes:
            return None
        order = lambda sp: (sp["line"], sp["col"])  # noqa: E731
        return {"x": x, "scale": self.text(scale), "params": sorted(params),
                "stmt": _span(st), "cut": cut, "maxes": sorted(maxes, key=order),
                "subs": sorted(subs, key=order), "loop": _span(loop)}

    def _unseen(self, n, loop, x):
        """Whether X's occurrence `n` outside the loop cannot see a value the loop made: a
        write, or a read whose block (or a block holding it) assigns X afresh (from a value
        that does not read it) in a statement after the loop and before the read's, as a tail
        block after the loop does (`if remainder: qk = tl.dot(..); qk *= s`)."""
        if isinstance(n.ctx, ast.Store):
            return True
        node = n
        while node is not self.fn:
            parent = self.parents.get(node)
            for block in (getattr(parent, f, None) for f in ("body", "orelse")):
                if not (isinstance(block, list) and node in block):
                    continue
                for st in reversed(block[:block.index(node)]):
                    if self._within(loop, st):
                        return False
                    if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                            _is_name(st.targets[0], x) and \
                            not any(_is_name(m, x) for m in ast.walk(st.value)):
                        return True
            if isinstance(parent, (ast.For, ast.While)) or parent is None:
                return False  # a loop around the read: its next iteration may see the value
            node = parent
        return False

    def _scaling(self, st):
        """(X, S, the cut, whether the dot's product) for `X = tl.dot(A, B) * S`, `X *= S` or
        `X = X * S` (either order of each product; S may be a product of several factors after
        the dot, `tl.dot(A, B) * s * c`, read as S = s * c), else None; the cut is None for an in-place
        statement that does not stand alone on its line."""
        if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Mult) and \
                isinstance(st.target, ast.Name):
            return st.target.id, st.value, self._whole_line(st), False
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and
                isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.BinOp) and
                isinstance(st.value.op, ast.Mult)):
            return None
        x, e = st.targets[0].id, st.value
        factors = _product(e)
        if len(factors) > 2 and self._plain_dot(factors[0]) and \
                not any(_is_name(n, x) for f in factors[1:] for n in ast.walk(f)):
            # `tl.dot(q, k) * scale * RCP_LN2`: S is the product after the dot
            scale = factors[1]
            for f in factors[2:]:
                scale = ast.copy_location(ast.BinOp(left=scale, op=ast.Mult(), right=f), f)
                scale.end_lineno, scale.end_col_offset = f.end_lineno, f.end_col_offset
            scale.lineno, scale.col_offset = factors[1].lineno, factors[1].col_offset
            cut = self._span_of(self._paren_extent(factors[0])[1], self._at(e, True))
            return x, scale, cut, True
        for side, scale in ((e.left, e.right), (e.right, e.left)):
            if _is_name(side, x) and not any(_is_name(n, x) for n in ast.walk(scale)):
                return x, scale, self._whole_line(st), False
            if self._plain_dot(side):
                if scale is e.right:
                    cut = self._span_of(self._paren_extent(side)[1], self._at(e, True))
                else:
                    cut = self._span_of(self._at(e, False), self._paren_extent(side)[0])
                return x, scale, cut, True
        return None

    def _plain_dot(self, e):
        """Whether `e` is `tl.dot(A, B)` without an accumulator."""
        return isinstance(e, ast.Call) and self.f.tl_attr(e.func) == "dot" and \
            len(e.args) == 2 and not any(k.arg == "acc" for k in e.keywords)

    def _whole_line(self, st):
        """The span of the lines holding statement `st` (from the first's start to the next
        line's), when nothing but blanks and a comment shares them; else None."""
        data, starts = self._file_bytes()
        s, e = self._at(st, False), self._at(st, True)
        first = starts[st.lineno - 1]
        rest = data[e:].split(b"\n", 1)[0]
        if data[first:s].strip() or (rest.strip() and not rest.strip().startswith(b"#")):
            return None
        return self._span_of(first, min(starts[st.end_lineno], len(data)))

    def _masked_again(self, n, up, x):
        """Whether the name `n` (X) sits in `X = tl.where(C, X, -inf)`, C without X: as the
        statement's target or the where's second argument."""
        st = up if isinstance(up, ast.Assign) else self.parents.get(up)
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and
                _is_name(st.targets[0], x)):
            return False
        w = st.value
        if not (isinstance(w, ast.Call) and self.f.tl_attr(w.func) == "where" and
                len(w.args) == 3 and not w.keywords and _is_name(w.args[1], x) and
                not any(_is_name(m, x) for m in ast.walk(w.args[0]))):
            return False
        neg = w.args[2]
        minus_inf = isinstance(neg, ast.UnaryOp) and isinstance(neg.op, ast.USub) and \
            self._is_inf(neg.operand, "inf")
        return (minus_inf or self._is_inf(neg, "-inf")) and (n is st.targets[0] or
                                                             n is w.args[1])

    @staticmethod
    def _is_inf(e, text):
        """`float("inf")` / `float("-inf")` (text says which)."""
        return isinstance(e, ast.Call) and _is_name(e.func, "float") and len(e.args) == 1 and \
            isinstance(e.args[0], ast.Constant) and str(e.args[0].value).lower() == text

    def _positive_factors(self, e, bound, seen=frozenset()):
        """The scalar parameters whose positivity makes `e` positive, when `e` is a product or
        quotient of positive numbers and such parameters, directly or through names assigned
        once and not in `bound`; else None."""
        if isinstance(e, ast.Constant):
            ok = isinstance(e.value, (int, float)) and not isinstance(e.value, bool) and \
                e.value > 0
            return set() if ok else None
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Div)):
            left = self._positive_factors(e.left, bound, seen)
            right = self._positive_factors(e.right, bound, seen)
            return None if left is None or right is None else left | right
        if not isinstance(e, ast.Name) or e.id in bound or e.id in seen:
            return None
        if e.id in self.names:  # a parameter the body never rebinds (pointers: the caller)
            return {e.id} if e.id not in self.assigns else None
        values = self.assigns.get(e.id, [])
        return self._positive_factors(values[0], bound, seen | {e.id}) if len(values) == 1 \
            else None

    def _tail(self, loop, form):
        """The loop's record in the form found, or None when nothing would be cut."""
        kind, var, size, block, stop = form
        drops, trues = [], []
        for c in ast.walk(loop):
            if kind != "diagonal" and isinstance(c, ast.Call) and \
                    self.f.tl_attr(c.func) in ("load", "store"):
                drops += self._tail_drops(loop, c, kind, var, size, block)
        if kind != "diagonal":
            drops += self._held_drops(loop, kind, var, size, block)
        for cond in self._where_conditions(loop):
            if (self._diagonal(loop, cond, var, block) == size if kind == "diagonal" else
                    self._bounds_tile(loop, cond, kind, var, size, block)):
                trues.append(_span(cond))
        first = loop.body[0]
        if not (drops or trues) or first.lineno == loop.lineno:
            return None
        return {"form": kind, "var": var, "size": size, "block": block, "span": _span(loop),
                "stop": _span(stop),
                "body": {"line": first.lineno, "col": 0, "end_line": loop.end_lineno,
                         "end_col": loop.end_col_offset},
                "drops": sorted(drops, key=lambda s: (s["line"], s["col"])),
                "trues": sorted(trues, key=lambda s: (s["line"], s["col"]))}

    def _where_conditions(self, loop):
        """The condition of each `tl.where(c, x, y)` in the loop, as a rewrite would replace it:
        c itself, or the value of a name c the loop's body sets before (its one assignment in
        the loop) and uses only as where conditions."""
        wheres = [c for c in ast.walk(loop) if isinstance(c, ast.Call) and
                  self.f.tl_attr(c.func) == "where" and c.args]
        conds = [w.args[0] for w in wheres]
        out, seen = [], set()
        for c in conds:
            value = c
            if isinstance(c, ast.Name):
                value = self._set_before(loop, c.id, c)
                uses = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == c.id and
                        isinstance(n.ctx, ast.Load)]
                if value is None or any(u not in conds for u in uses):
                    continue
            if id(value) not in seen:
                seen.add(id(value))
                out.append(value)
        return out

    def _diagonal_form(self, loop):
        """("diagonal", v, L, E, stop) for `for v in range(0, S, E)` (range or tl.range; E a
        constexpr, v and S's names bound nowhere in the body, S made of names, numbers,
        arithmetic and min / max / cdiv) whose where conditions compare a row tile starting at
        L against the columns v + tl.arange(0, E) (`_diagonal`), all with the same L; else
        None."""
        it, var = self._range_loop(loop) or (None, None)
        if it is None:
            return None
        bound = set().union(*(_binds_names(st) for st in loop.body))
        if len(it.args) != 3 or self.text(it.args[0]) != "0" or \
                not isinstance(it.args[2], ast.Name) or it.args[2].id not in self.constexprs or \
                it.args[2].id in self.assigns or not self._pure_scalar(it.args[1], bound):
            return None
        block = it.args[2].id
        starts = {self._diagonal(loop, c, var, block) for c in self._where_conditions(loop)}
        starts.discard(None)
        if len(starts) != 1:
            return None
        return "diagonal", var, starts.pop(), block, it.args[1]

    def _range_loop(self, loop):
        """(the iterator's call, v) for `for v in range(..)` or tl.range with positional
        bounds and no else, v bound nowhere in the body (`_rebinds`); else None."""
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and
                isinstance(loop.iter, ast.Call) and not loop.orelse):
            return None
        it, var = loop.iter, loop.target.id
        if not ((isinstance(it.func, ast.Name) and it.func.id == "range") or
                self.f.tl_attr(it.func) == "range") or \
                any(k.arg in ("arg1", "arg2", "step") for k in it.keywords) or \
                self._rebinds(loop, var):
            return None
        return it, var

    def _rebinds(self, loop, var):
        """Whether the loop's body binds `var`, other than by `var = tl.multiple_of(var, ..)` or
        tl.max_contiguous (hints that keep the value)."""
        for st in loop.body:
            for n in ast.walk(st):
                if not (isinstance(n, ast.Name) and n.id == var and
                        isinstance(n.ctx, (ast.Store, ast.Del))):
                    continue
                a = self.parents.get(n)
                hint = isinstance(a, ast.Assign) and a.targets == [n] and \
                    isinstance(a.value, ast.Call) and \
                    self.f.tl_attr(a.value.func) in ("multiple_of", "max_contiguous") and \
                    a.value.args and isinstance(a.value.args[0], ast.Name) and \
                    a.value.args[0].id == var
                if not hint:
                    return True
        return False

    def _pure_scalar(self, e, bound):
        """Whether `e` is made of names not in `bound`, numbers, arithmetic and calls of min,
        max, tl.minimum, tl.maximum or cdiv: the same value wherever the loop evaluates it."""
        for n in ast.walk(e):
            if isinstance(n, ast.Name):
                if n.id in bound:
                    return False
            elif isinstance(n, ast.Call):
                f = n.func
                if not ((isinstance(f, ast.Name) and f.id in ("min", "max")) or
                        self.f.tl_attr(f) in ("minimum", "maximum", "cdiv") or
                        (isinstance(f, ast.Attribute) and f.attr == "cdiv" and
                         isinstance(f.value, ast.Name) and f.value.id in self.f.triton)) or \
                        n.keywords:
                    return False
            elif not isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator,
                                    ast.unaryop, ast.Load, ast.Attribute)):
                return False
        return True

    def _diagonal(self, loop, cond, var, block):
        """L's text when `cond` is `R >= C` (or `C <= R`), R a row tile `X * B + tl.arange(0,
        B)` set once outside the loop (through its name, maybe `[:, None]`), L = X * B its first
        row, and C the columns v + tl.arange(0, E) of the iteration at v (maybe indexed, maybe
        through a name the body sets before): the causal mask of attention. Every element of R
        is >= L and every element of C <= v + E - 1, so the condition holds for every element
        in an iteration with v + E <= L, which L's names, bound nowhere in the body, keep the
        same over the loop; else None."""
        if not (isinstance(cond, ast.Compare) and len(cond.ops) == 1 and
                isinstance(cond.ops[0], (ast.GtE, ast.LtE))):
            return None
        rows, cols = (cond.left, cond.comparators[0])[::1 if isinstance(cond.ops[0], ast.GtE)
                                                       else -1]
        rows = _without_axis(rows)
        if not isinstance(rows, ast.Name) or rows.id in self.names or \
                len(self.assigns.get(rows.id, [])) != 1 or \
                self._within(self.assigns[rows.id][0], loop):
            return None
        run = self._scaled_run(self.assigns[rows.id][0])
        bound = set().union(*(_binds_names(st) for st in loop.body))
        if run is None or not self._pure_scalar(run[0], bound):
            return None
        cols = _without_axis(cols)
        if isinstance(cols, ast.Name):
            cols = self._set_before(loop, cols.id, cond)
        if not (isinstance(cols, ast.BinOp) and isinstance(cols.op, ast.Add)):
            return None
        if not any(isinstance(v, ast.Name) and v.id == var and self.pure_arange(x) == block
                   for v, x in ((cols.left, cols.right), (cols.right, cols.left))):
            return None
        return self.text(run[0])

    def _tail_form(self, loop):
        """("step", v, B, E, stop) for `for v in range(0, B, E)`, ("count", v, B, E, stop) for
        `range(0, tl.cdiv(B, E))` (step 1, start 0 or none), range or tl.range; B a scalar
        parameter, E a constexpr, neither rebound, v bound nowhere in the body; else None."""
        it, var = self._range_loop(loop) or (None, None)
        if it is None:
            return None
        args = it.args
        if len(args) == 3 and self.text(args[0]) == "0" and \
                all(isinstance(a, ast.Name) for a in args[1:]):
            kind, stop, size, block = "step", args[1], args[1].id, args[2].id
        elif len(args) in (1, 2, 3) and (len(args) == 1 or self.text(args[0]) == "0") and \
                (len(args) < 3 or self.text(args[2]) == "1"):
            stop = args[0] if len(args) == 1 else args[1]
            cdiv = isinstance(stop, ast.Call) and isinstance(stop.func, ast.Attribute) and \
                stop.func.attr == "cdiv" and isinstance(stop.func.value, ast.Name) and \
                stop.func.value.id in self.f.tl | self.f.triton
            if not (cdiv and len(stop.args) == 2 and not stop.keywords and
                    all(isinstance(a, ast.Name) for a in stop.args)):
                return None
            kind, size, block = "count", stop.args[0].id, stop.args[1].id
        else:
            return None
        if size not in self.names or size in self.constexprs or size in self.assigns or \
                block not in self.constexprs:
            return None
        return kind, var, size, block, stop

    def _tail_drops(self, loop, call, kind, var, size, block):
        """The spans deleting, from a load or store's `mask=`, the terms that bound the tile
        along the loop's v by B: the term with its `&` when one of several; the mask and its
        `other` when it is nothing else. Each deletion is checked by parsing the call with it
        applied against the call without those terms; [] when none applies."""
        mask = next((k for k in call.keywords if k.arg == "mask"), None)
        if mask is None:
            return []
        terms, e = [], mask.value
        while isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitAnd):
            terms.insert(0, e.right)
            e = e.left
        terms.insert(0, e)

        def value_of(t):  # `mask = offs < n; ...(mask=mask)`: the name's one value, or the
            if isinstance(_without_axis(t), ast.Name):  # one the loop's body gives it before
                t = _without_axis(t)  # the call (`mask=m[:, None]`: the same bound, broadcast)
            if not isinstance(t, ast.Name):
                return t
            values = self.assigns.get(t.id)
            if values and len(values) == 1:
                return values[0]
            return self._set_before(loop, t.id, call) or t
        bound = [t for t in terms if self._bounds_tile(loop, value_of(t), kind, var, size, block)]
        if len(bound) == len(terms):
            gone = [k for k in call.keywords if k.arg in ("mask", "other")]
            nodes = sorted(call.args + call.keywords, key=lambda n: (n.lineno, n.col_offset))
            if nodes.index(gone[0]) == 0:
                return []
            cuts = [(self._at(nodes[nodes.index(k) - 1], True), self._at(k, True)) for k in gone]
            keywords = [k for k in call.keywords if k not in gone]
        elif len(bound) == 1:
            cut, value = self._term_cut(terms, terms.index(bound[0]))
            cuts = [cut]
            keywords = [ast.keyword(arg=k.arg, value=value if k is mask else k.value)
                        for k in call.keywords]
        else:
            return []
        return self._checked(call, cuts, ast.Call(func=call.func, args=call.args,
                                                  keywords=keywords))

    def _term_cut(self, terms, i):
        """(the cut taking term i out of the `&`-joined terms, with its `&` and the parentheses
        around it alone; the expression of the other terms)."""
        if i > 0:
            cut = (self._paren_extent(terms[i - 1])[1], self._paren_extent(terms[i])[1])
        else:
            cut = (self._paren_extent(terms[0])[0], self._paren_extent(terms[1])[0])
        rest = [t for j, t in enumerate(terms) if j != i]
        value = rest[0]
        for t in rest[1:]:
            value = ast.BinOp(left=value, op=ast.BitAnd(), right=t)
        return cut, value

    def _checked(self, node, cuts, want):
        """The spans of the cuts when the node's text with them applied parses as `want`;
        else []."""
        start, end = self._at(node, False), self._at(node, True)
        data, text, at = self._file_bytes()[0], b"", start
        for a, b in sorted(cuts):
            text, at = text + data[at:a], b
        text += data[at:end]
        try:
            got = ast.parse(text.decode("utf-8"), mode="eval").body
        except SyntaxError:
            return []
        if ast.dump(got) != ast.dump(want):
            return []
        return [self._span_of(a, b) for a, b in cuts]

    def _held_drops(self, loop, kind, var, size, block):
        """The cuts of a bound along the loop (`_bounds_tile`) that is one of several
        `&`-joined terms of a mask held in a name or of a where condition: `mask = (rows < M) &
        (cols < N - v)` set by a statement of the body, the name's one assignment in the loop,
        read nowhere but in the loop, after it, as the `mask=` of a tl.load or tl.store or as a
        where condition; or `tl.where((cols < N - v) & c, x, y)` itself. Where the bound holds,
        the mask without it has the same elements, and every use broadcasts it to a shape at
        least as wide as the mask's (a load's pointer, the where's values), so nothing but the
        bound's compare changes."""
        holders = []  # (mask expression, the calls that use it)
        for st in loop.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name) and st.targets[0].id not in self.names:
                uses = self._mask_uses(loop, st.targets[0].id, st.value)
                if uses:
                    holders.append((st.value, uses))
        for c in ast.walk(loop):
            if isinstance(c, ast.Call) and self.f.tl_attr(c.func) == "where" and \
                    len(c.args) == 3 and not isinstance(c.args[0], ast.Name):
                holders.append((c.args[0], [c]))
        out = []
        for expr, uses in holders:
            logical = isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And)
            terms, e = (list(expr.values), None) if logical else ([], expr)
            while isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitAnd):
                terms.insert(0, e.right)
                e = e.left
            if e is not None:
                terms.insert(0, e)
            bound = [t for t in terms if self._bounds_tile(loop, t, kind, var, size, block)]
            if len(terms) < 2 or len(bound) != 1 or \
                    not all(self._covers(u, expr) for u in uses):
                continue
            cut, rest = self._term_cut(terms, terms.index(bound[0]))
            if logical and len(terms) > 2:  # `a and b and c`, Triton's elementwise and
                rest = ast.BoolOp(op=ast.And(), values=[t for t in terms if t is not bound[0]])
            out += self._checked(expr, [cut], rest)
        return out

    def _mask_uses(self, loop, name, value):
        """The tl.load, tl.store and tl.where calls reading `name` (as `mask=` or the
        condition) in the loop, when those are its only reads there, each with `value` (its one
        assignment there, by a statement of the body before theirs), and no read elsewhere can
        see that value: each is before a loop that no loop holds, or in another loop whose body
        sets the name before it; else []."""
        calls = []
        for n in ast.walk(self.fn):
            if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
                continue
            if not self._within(n, loop):
                other = self.parents.get(n)
                while other is not None and not isinstance(other, (ast.For, ast.While)):
                    other = self.parents.get(other)
                before = n.lineno < loop.lineno and not any(
                    isinstance(a, (ast.For, ast.While)) and self._within(loop, a)
                    for a in ast.walk(self.fn) if a is not loop)
                if not (before or (other is not None and
                                   self._set_before(other, name, n) is not None)):
                    return []
                continue
            up = self.parents.get(n)
            call = self.parents.get(up) if isinstance(up, ast.keyword) and up.arg == "mask" \
                else up
            op = self.f.tl_attr(call.func) if isinstance(call, ast.Call) else None
            at = {"load": 1, "store": 2}.get(op)  # the mask's place when given positionally
            masks = at is not None and (isinstance(up, ast.keyword) or
                                        (len(call.args) > at and call.args[at] is n))
            condition = op == "where" and call.args and call.args[0] is n
            if not (masks or condition) or self._set_before(loop, name, n) is not value:
                return []
            calls.append(call)
        return calls

    def _covers(self, call, mask):
        """Whether the call broadcasts `mask` to a shape it already has: a load or store's
        pointer, a where's values, as wide as the mask."""
        if self.f.tl_attr(call.func) == "where":
            wide = _broadcast(self.shape(call.args[1]), self.shape(call.args[2]))
        else:
            pointer = call.args[0] if call.args else \
                next((k.value for k in call.keywords if k.arg == "pointer"), None)
            wide = self.shape(pointer) if pointer is not None else None
        have = self.shape(mask)
        return wide is not None and have is not None and _broadcast(wide, have) == wide

    def _bounds_tile(self, loop, t, kind, var, size, block):
        """Whether the mask term `t` is `X < B - O` with X tl.arange(0, E) (through names and
        [:, None] indexing) or `Y < B` with Y `O + tl.arange(0, E)` (either order; a name
        set by the loop's body before, once in the loop), O the iteration's start along B: v
        ("step") or v * E ("count"). Then it holds for every element in an iteration with
        O + E <= B."""
        def start(o):
            if kind == "step":
                return isinstance(o, ast.Name) and o.id == var
            f = _product(o)
            return len(f) == 2 and all(isinstance(x, ast.Name) for x in f) and \
                sorted(x.id for x in f) == sorted((var, block))

        t = _without_axis(t)  # `(Y < B)[:, None]`: the same bound, broadcast
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt)):
            return False
        x, b = t.left, t.comparators[0]
        if isinstance(b, ast.BinOp) and isinstance(b.op, ast.Sub) and \
                isinstance(b.left, ast.Name) and b.left.id == size:
            return start(b.right) and self.pure_arange(x) == block
        if not (isinstance(b, ast.Name) and b.id == size):
            return False
        y = x.value if isinstance(x, ast.Subscript) and _axis(x) is not None else x
        if isinstance(y, ast.Name):
            y = self._set_before(loop, y.id, t)
        return isinstance(y, ast.BinOp) and isinstance(y.op, ast.Add) and \
            ((start(y.left) and self.pure_arange(y.right) == block) or
             (start(y.right) and self.pure_arange(y.left) == block))

    def _set_before(self, loop, name, use):
        """The value `name` has at `use` in the loop's body when a statement of the body itself,
        before the one holding `use`, is the name's one assignment in the loop; else None."""
        values = [v for v in self.assigns.get(name, []) if self._within(v, loop)]
        stmt = self.parents.get(values[0]) if len(values) == 1 else None
        holder = use
        while holder is not None and self.parents.get(holder) is not loop:
            holder = self.parents.get(holder)
        if name in self.names or not isinstance(stmt, ast.Assign) or stmt not in loop.body or \
                holder not in loop.body or loop.body.index(stmt) >= loop.body.index(holder):
            return None
        return values[0]

    def _within(self, node, outer):
        while node is not None and node is not outer:
            node = self.parents.get(node)
        return node is outer

    def _file_bytes(self):
        """(the file's bytes, the offset where each line starts), made once."""
        if not hasattr(self, "_bytes"):
            starts = [0]
            for line in self.f.lines:
                starts.append(starts[-1] + len(line))
            self._bytes = (b"".join(self.f.lines), starts)
        return self._bytes

    def _at(self, node, end):
        """The byte offset in the file of a node's start (or end)."""
        starts = self._file_bytes()[1]
        return starts[node.end_lineno - 1] + node.end_col_offset if end else \
            starts[node.lineno - 1] + node.col_offset

    def _paren_extent(self, node):
        """(start, end) byte offsets of a node with the parentheses around it alone."""
        data = self._file_bytes()[0]
        s, e = self._at(node, False), self._at(node, True)
        while True:
            i, j = s - 1, e
            while i >= 0 and data[i:i + 1] in (b" ", b"\t", b"\r", b"\n", b"\\"):
                i -= 1
            while j < len(data) and data[j:j + 1] in (b" ", b"\t", b"\r", b"\n", b"\\"):
                j += 1
            if data[i:i + 1] != b"(" or data[j:j + 1] != b")":
                return s, e
            s, e = i, j + 1

    def _span_of(self, start, end):
        """The span of the bytes [start, end) of the file."""
        starts = self._file_bytes()[1]
        line, end_line = (max(i for i, s in enumerate(starts) if s <= x) for x in (start, end))
        return {"line": line + 1, "col": start - starts[line], "end_line": end_line + 1,
                "end_col": end - starts[end_line]}


def _type_query(e):
    """`x.dtype.is_fp16()`, `p.type.element_ty`: a question about a type, which the compiler
    answers once, never a tile."""
    while isinstance(e, (ast.Call, ast.Attribute)):
        e = e.func if isinstance(e, ast.Call) else e.value
        if isinstance(e, ast.Attribute) and e.attr in ("dtype", "type", "element_ty"):
            return True
    return False


def tile_logic_notes(doc, kernel):
    """The tile_logic notes of the jit function `kernel` in the analysis `doc` (of a whole
    file) and of the file's jit functions it calls, transitively, in that order (a helper
    imported from another file is not followed)."""
    by_name = {k["name"]: k for k in doc["kernels"]}
    todo, seen, notes = [kernel], set(), []
    while todo:
        name = todo.pop(0)
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        notes += [t["note"] for t in by_name[name]["tile_logic"]]
        todo += [c["callee"] for c in by_name[name]["calls"]]
    return notes


# what the interpreter makes of a tile's truth (always True) under each operator
_INTERPRETED = {"and": "the last operand", "or": "the first operand", "not": "False"}


def _logic_note(path, line, op, text):
    """The sentence for the user on one of tile_logic's findings."""
    where = f"{path}:{line}: `{' '.join(text.split())}`"
    if op == "chain":
        return (f"{where}: a chained comparison of tiles: Triton's CPU interpreter "
                "(TRITON_INTERPRET=1) runs it as Python's `and`, keeping the last comparison "
                "alone, and the GPU compiler refuses it; a check on the CPU is unreliable "
                "here: write the comparisons joined by `&`")
    means = {"and": "`&`", "or": "`|`", "not": "`~`"}[op]
    of = "a tile" if op == "not" else "tiles"
    return (f"{where}: Python's `{op}` of {of}: on the GPU Triton makes it elementwise "
            f"({means}), but its CPU interpreter (TRITON_INTERPRET=1) takes one truth value "
            f"for a whole tile ({_INTERPRETED[op]}), so a check on the CPU is unreliable "
            f"here: write {means}, which is what the kernel means on the GPU")


def _product(e):
    """The factors of a product `x * y * ...` (e itself when it is none)."""
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return _product(e.left) + _product(e.right)
    return [e]


def _without_axis(e):
    """X for `X[:, None]` or `X[None, :]` (X any expression); else e."""
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Tuple) and \
            len(e.slice.elts) == 2 and \
            sorted("slice" if isinstance(x, ast.Slice) and x.lower is x.upper is x.step is None
                   else "none" if isinstance(x, ast.Constant) and x.value is None else "?"
                   for x in e.slice.elts) == ["none", "slice"]:
        return e.value
    return e


def _axis(e):
    """(0, X) for `X[:, None]`, (1, X) for `X[None, :]`, X a name; else None."""
    if not (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and
            isinstance(e.slice, ast.Tuple) and len(e.slice.elts) == 2):
        return None
    kinds = ["slice" if isinstance(x, ast.Slice) and x.lower is x.upper is x.step is None else
             "none" if isinstance(x, ast.Constant) and x.value is None else "?"
             for x in e.slice.elts]
    return (0, e.value.id) if kinds == ["slice", "none"] else \
        (1, e.value.id) if kinds == ["none", "slice"] else None


def _binds_names(stmt):
    """The names a statement assigns (targets of assignments and for loops, at any depth)."""
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and
            isinstance(n.ctx, (ast.Store, ast.Del))}


def _line_starts(data):
    """The lines (from 1) where a logical line starts, or a comment stands alone outside
    brackets: where re-indenting a block inserts, never inside a statement or a string."""
    out, depth, fresh = [], 0, True
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER)
    for tok in tokenize.tokenize(io.BytesIO(data).readline):
        if tok.type == tokenize.COMMENT:
            if depth == 0 and not tok.line[:tok.start[1]].strip():
                out.append(tok.start[0])
        elif tok.type not in skip:
            if fresh:
                out.append(tok.start[0])
            fresh = False
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
        if tok.type == tokenize.NEWLINE:
            fresh = True
    return sorted(set(out))


def _next_pow2(n):
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def _size_value(text, bound):
    try:
        value = eval(compile(text, "<size>", "eval"), {"__builtins__": {}}, dict(bound))
    except Exception:
        return None
    return value if isinstance(value, int) and value > 0 else None


def _holds(expr, bound):
    """True/False for a constraint at `bound`; None when it names something `bound` lacks."""
    try:
        return bool(eval(compile(expr, "<constraint>", "eval"),
                         {"__builtins__": {}, "min": min, "max": max}, dict(bound)))
    except Exception:
        return None


def _shape_source(sites, name):
    """The statement that makes constexpr `name` a size of an input where a launch passes a
    name unpacked from, or indexed in, a tensor's `.shape` (`_, page, heads, d =
    key_cache.shape`: the page size of a cache is its layout, not a tile), else None."""
    for site in sites:
        for c in site["constexprs"]:
            if c["name"] == name and c["assigned"] and re.fullmatch(r"[A-Za-z_]\w*", c["value"]) \
                    and re.search(r"=[^=]*\.(shape\b|size\()", c["assigned"]):
                return c["assigned"]
    return None


_ALLOCATIONS = {"empty", "zeros", "ones", "full", "randn", "rand", "empty_strided", "new_empty",
                "new_zeros", "new_ones", "new_full", "view", "reshape", "expand", "pad"}


def _host_sized(f, sites, name):
    """The statement of a launching function that sizes a tensor (allocates, views, reshapes,
    pads it) with the local name it passes for constexpr `name` (a head count padded to a power
    of two): the kernel's value must match what the host made; else None."""
    functions = {q: fn for q, fn in f.functions}
    for site in sites:
        fn = functions.get(site["qualname"])
        passed = next((c["value"] for c in site["constexprs"] if c["name"] == name), None)
        if fn is None or not passed or not passed.isidentifier():
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) \
                    and getattr(node.func, "attr", getattr(node.func, "id", None)) in _ALLOCATIONS:
                if any(isinstance(x, ast.Name) and x.id == passed
                       for a in [*node.args, *(k.value for k in node.keywords)]
                       for x in ast.walk(a)):
                    return f.text(node)
    return None


class _Unknown(Exception):
    """A value the static evaluation cannot know."""


class _Static:
    """The configs an autotune list may hold, evaluated without running the file: literals,
    names assigned at module level (every assignment of a list: each is a list the file may
    use), list comprehensions, `+` and `*`, `list(..)` / `tuple(..)` / `sorted(..)`,
    `filter(f, xs)` and slices (both taken as all of xs), `range`, and `triton.Config` as a
    dict of its kwargs, num_warps and num_stages. A condition it cannot decide keeps both
    branches (or the element): the result holds every config the list may hold."""

    _LIMIT = 1 << 14  # elements: a list built larger than this is not evaluated

    def __init__(self, f):
        self.f = f

    def configs(self, node):
        try:
            v = self.value(node, {}, frozenset())
        except (_Unknown, RecursionError, TypeError, ValueError, ZeroDivisionError):
            return []
        return [c for c in v if isinstance(c, dict)] if isinstance(v, list) else []

    def value(self, e, env, seen):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, (ast.List, ast.Tuple)):
            return [self.value(x, env, seen) for x in e.elts]
        if isinstance(e, ast.Name):
            return env[e.id] if e.id in env else self.module_value(e.id, seen)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp)):
            out = []
            self.comprehension(e.elt, e.generators, env, seen, out)
            return out
        if isinstance(e, ast.BinOp):
            a, b = self.value(e.left, env, seen), self.value(e.right, env, seen)
            if isinstance(e.op, ast.Mult) and isinstance(a, list) and isinstance(b, int) and \
                    len(a) * b > self._LIMIT:
                raise _Unknown
            op = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
                  ast.Mult: lambda x, y: x * y, ast.FloorDiv: lambda x, y: x // y,
                  ast.Pow: lambda x, y: x ** y if abs(y) < 64 else None,
                  ast.LShift: lambda x, y: x << y if y < 64 else None}.get(type(e.op))
            out = op(a, b) if op else None
            if out is None:
                raise _Unknown
            return out
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return -self.value(e.operand, env, seen)
        if isinstance(e, ast.IfExp):
            test = self.test(e.test, env, seen)
            if test is not None:
                return self.value(e.body if test else e.orelse, env, seen)
            a, b = self.value(e.body, env, seen), self.value(e.orelse, env, seen)
            if isinstance(a, list) and isinstance(b, list):
                return a + b
            raise _Unknown
        if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
            return list(self.value(e.value, env, seen))
        if isinstance(e, ast.Dict) and None not in e.keys:
            return {self.value(k, env, seen): self.value(v, env, seen)
                    for k, v in zip(e.keys, e.values)}
        if isinstance(e, ast.Call):
            return self.call(e, env, seen)
        raise _Unknown

    def call(self, e, env, seen):
        if self.f.is_config(e.func):
            kwargs = _keyword(e, "kwargs", 0)
            config = self.value(kwargs, env, seen) if kwargs is not None else None
            if not isinstance(config, dict):
                raise _Unknown
            for k in e.keywords:
                if k.arg in ("num_warps", "num_stages"):
                    try:
                        config[k.arg] = self.value(k.value, env, seen)
                    except _Unknown:
                        pass
            return config
        name = e.func.id if isinstance(e.func, ast.Name) else None
        if name in ("list", "tuple", "sorted") and len(e.args) == 1:
            return list(self.value(e.args[0], env, seen))
        if name == "filter" and len(e.args) == 2:
            return list(self.value(e.args[1], env, seen))
        if name == "range" and 1 <= len(e.args) <= 3:
            r = range(*[self.value(a, env, seen) for a in e.args])
            if len(r) > self._LIMIT:
                raise _Unknown
            return list(r)
        raise _Unknown

    def module_value(self, name, seen):
        if name in seen:
            raise _Unknown
        values = []
        for st in self.f.module_assigns.get(name, []):
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                try:
                    values.append(self.value(st.value, {}, seen | {name}))
                except _Unknown:
                    pass
        if len(values) == 1:
            return values[0]
        if values and all(isinstance(v, list) for v in values):
            return [x for v in values for x in v]
        raise _Unknown

    def test(self, e, env, seen):
        """True/False when `e` can be decided, else None."""
        try:
            if isinstance(e, ast.Compare) and len(e.ops) == 1:
                a, b = self.value(e.left, env, seen), self.value(e.comparators[0], env, seen)
                op = {ast.Lt: a.__lt__, ast.LtE: a.__le__, ast.Gt: a.__gt__, ast.GtE: a.__ge__,
                      ast.Eq: a.__eq__, ast.NotEq: a.__ne__}.get(type(e.ops[0]))
                out = op(b) if op else NotImplemented
                return None if out is NotImplemented else bool(out)
            if isinstance(e, ast.BoolOp):
                parts = [self.test(v, env, seen) for v in e.values]
                if isinstance(e.op, ast.And):
                    return False if False in parts else None if None in parts else True
                return True if True in parts else None if None in parts else False
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                inner = self.test(e.operand, env, seen)
                return None if inner is None else not inner
            return bool(self.value(e, env, seen))
        except (_Unknown, TypeError, ValueError, ZeroDivisionError):
            return None

    def comprehension(self, elt, generators, env, seen, out):
        if not generators:
            if len(out) >= self._LIMIT:
                raise _Unknown
            out.append(self.value(elt, env, seen))
            return
        g = generators[0]
        items = self.value(g.iter, env, seen)
        if not isinstance(items, list):
            raise _Unknown
        for item in items:
            inner = dict(env)
            self.bind(g.target, item, inner)
            if all(self.test(c, inner, seen) is not False for c in g.ifs):
                self.comprehension(elt, generators[1:], inner, seen, out)

    def bind(self, target, item, env):
        if isinstance(target, ast.Name):
            env[target.id] = item
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(item, (list, tuple)) and \
                len(item) == len(target.elts):
            for t, x in zip(target.elts, item):
                self.bind(t, x, env)
        else:
            raise _Unknown


def _varied(configs):
    """{name: sorted values} of the integer config entries that differ across `configs`."""
    levels = {}
    for c in configs:
        for k, v in c.items():
            if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool):
                levels.setdefault(k, set()).add(v)
    return {k: sorted(v) for k, v in levels.items() if len(v) > 1}


def infer_space(ir_kernel, bound):
    """{"params": {NAME: [values]}, "constraints": [expr], "fixed": {NAME: why}} around the
    launch `bound` (see the module's docstring for the rules)."""
    bound = dict(bound)
    bound.setdefault("num_warps", 4)
    bound.setdefault("num_stages", 3)
    params, fixed = {}, {}
    for t in ir_kernel["tunables"]:
        name, kind, v = t["name"], t["kind"], bound.get(t["name"])
        if kind == "fixed":
            fixed[name] = t["why"]
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            fixed[name] = "no launched value to tune around"
            continue
        caps = [_size_value(s, bound) for s in t["relates_to"]]
        cap = _next_pow2(max(c for c in caps if c)) if any(caps) else 65536
        if t.get("only_levels"):
            values = t["levels"]
        elif kind == "group":
            values = [1, 4, 8, 16]
        elif kind == "warps":
            values = [2, 4, 8, 16]
        elif kind == "stages":
            values = [1, 2, 3, 4, 5] if ir_kernel["loops"] else []
        elif t["covers_row"]:
            lo = _next_pow2(_size_value(t["covers_row"], bound) or v)
            values = [lo << i for i in range(3) if lo << i <= 65536]
        elif t["dot"]:
            values = [x for x in (16, 32, 64, 128, 256) if x <= max(16, cap)]
        else:
            # blocks launched under 16 (rows a program, Inductor's XBLOCK) keep their range
            floor = 1 if v < 16 else 16
            lo, hi = max(floor, _next_pow2(v) // 4), min(65536, _next_pow2(v) * 4, max(16, cap))
            values = [1 << i for i in range(17) if lo <= 1 << i <= hi]
        # the file's autotune configs use these values: they belong to the space
        params[name] = sorted(set(values) | set(t.get("levels", ())) | {v})
    constraints = [c["expr"] for c in ir_kernel["constraints"] if _holds(c["expr"], bound)
                   is not False]
    return {"params": params, "constraints": constraints, "fixed": fixed}
