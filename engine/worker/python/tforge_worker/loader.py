"""Import a user's Triton file without running its demos.

Many kernel files benchmark or print at top level. We parse the file, keep what the definitions
need, drop the rest, and execute the kept statements under the file's real name (so that
`inspect.getsource`, which `@triton.jit` relies on, reads the right lines).

What is kept at top level:
- imports, function and class definitions (with their decorators);
- `if`/`try` blocks made only of such definitions (and literal constants);
- assignments of literal constants (`BLOCK = 128`);
- any other statement (assignment, call, loop, `with`, `if`, `try`) that binds or mutates a name
  which kept code needs: a kernel reading a global, a decorator reading `configs`, a wrapper
  reading `DEVICE`, transitively.
`if __name__ == "__main__":` blocks are always dropped. Everything dropped is reported by file
and line.

A file in a package (its folder has `__init__.py`) runs as a module of that package, so that its
relative imports (`from .utils import f`, `from ..common import g`) load its siblings; those are
imported as Python would, unfiltered. Without a GPU the file runs with the stand-in device of
`standin`.
"""

import ast
import contextlib
import hashlib
import importlib.machinery
import itertools
import linecache
import os
import symtable
import sys
import types

from . import standin

_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_counter = itertools.count()
_recordings = []  # the lists of open recording() blocks


class LoadError(Exception):
    """The file cannot be imported; the message names the file and the line."""


def _is_main_guard(node):
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    has_name = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    has_main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return has_name and has_main


def _is_literal(node):
    """A value built from literals alone: no names, no calls."""
    return all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp,
                              ast.BinOp, ast.unaryop, ast.operator, ast.Load))
               for n in ast.walk(node))


def _is_literal_assign(node):
    if isinstance(node, ast.Assign):
        targets_ok = all(isinstance(t, ast.Name) for t in node.targets)
        return targets_ok and _is_literal(node.value)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.value is not None and \
            _is_literal(node.value)
    return False


def _is_definition_block(node):
    """An if/try block made only of definitions and literal constants (safe to run)."""
    if isinstance(node, ast.If):
        parts = node.body + node.orelse
    elif isinstance(node, ast.Try):
        parts = node.body + node.orelse + node.finalbody
        parts += [s for h in node.handlers for s in h.body]
    else:
        return False
    return all(isinstance(s, _DEFINITIONS) or isinstance(s, ast.Pass) or _is_literal_assign(s)
               or _is_definition_block(s) for s in parts)


def _loads(nodes):
    names = set()
    for node in nodes:
        if node is None:
            continue
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
    return names


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _binds(stmt):
    """Names a statement binds, and names whose objects it mutates (x.append(), x[k] = v)."""
    binds, mutates = set(), set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            binds.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            binds.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
            mutates.add(_root_name(n))
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and \
                isinstance(n.value.func, ast.Attribute):
            mutates.add(_root_name(n.value.func.value))
    mutates.discard(None)
    return binds, mutates


def _table_globals(table):
    names = {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
    for child in table.get_children():
        names |= _table_globals(child)
    return names


def _definition_needs(node, tables):
    """Module names a definition reads: at definition time and, through its body, later."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        now = node.decorator_list + a.defaults + a.kw_defaults + [node.returns]
        now += [arg.annotation for arg in a.posonlyargs + a.args + a.kwonlyargs]
        now += [x.annotation for x in (a.vararg, a.kwarg) if x is not None]
    elif isinstance(node, ast.ClassDef):
        now = node.decorator_list + node.bases + [k.value for k in node.keywords]
    else:
        return set()
    table = tables.get((node.name, node.lineno))
    later = _table_globals(table) if table is not None else _loads(node.body)
    return _loads(now) | later


def plan(tree, text, filename):
    """Split a module's top-level statements into kept and dropped ones (keeps order)."""
    tables = {(t.get_name(), t.get_lineno()): t
              for t in symtable.symtable(text, filename, "exec").get_children()}
    keep = [False] * len(tree.body)
    needed = set()
    candidates = []  # (index, binds, mutates, loads)
    assigned = set()  # names bound by statements other than imports and definitions
    for i, stmt in enumerate(tree.body):
        if _is_main_guard(stmt):
            continue
        if isinstance(stmt, _DEFINITIONS):
            keep[i] = True
            needed |= _definition_needs(stmt, tables)
            continue
        binds, mutates = _binds(stmt)
        assigned |= binds
        docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if _is_definition_block(stmt) or _is_literal_assign(stmt) or docstring:
            keep[i] = True
            needed |= _loads([stmt])
            continue
        candidates.append((i, binds, mutates, _loads([stmt])))
    changed = True
    while changed:
        changed = False
        for i, binds, mutates, loads in candidates:
            if keep[i]:
                continue
            if binds & needed or mutates & needed & assigned:
                keep[i] = True
                needed |= loads
                changed = True
    kept = [s for s, k in zip(tree.body, keep) if k]
    dropped = [s for s, k in zip(tree.body, keep) if not k]
    return kept, dropped


def _describe(stmt):
    kind = type(stmt).__name__.lower()
    if _is_main_guard(stmt):
        kind = "main-guard"
    elif isinstance(stmt, ast.Expr):
        kind = "call" if isinstance(stmt.value, ast.Call) else "expression"
    binds, _ = _binds(stmt)
    return {"line": stmt.lineno, "end_line": stmt.end_lineno, "kind": kind,
            "binds": sorted(binds)}


def _failing_line(exc, filename):
    """Line of the top-level statement that raised (the module frame in our file)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename and code.co_name == "<module>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _package_of(folder):
    """(dotted package name, folder to put on sys.path) for a file in `folder`: the package
    goes up as far as `__init__.py` files do. The name is None outside a package."""
    parts, top = [], folder
    while os.path.basename(top).isidentifier() and \
            os.path.isfile(os.path.join(top, "__init__.py")):
        parts.insert(0, os.path.basename(top))
        top = os.path.dirname(top)
    return ".".join(parts) or None, top


@contextlib.contextmanager
def recording():
    """Collects the dropped statements of every load() made within it (the kernel file, a
    task's ref.py, ...), in load order; each entry names its file."""
    entries = []
    _recordings.append(entries)
    try:
        yield entries
    finally:
        _recordings.remove(entries)


def load(path, text=None, inject=None):
    """Import the file at `path` (or `text`, the source of a variant of it) with demos filtered.

    `inject` maps module names to modules visible to imports while the file runs (so that a
    task's `ref.py` doing `import kernel` gets the already loaded kernel module).
    Returns (module, dropped), dropped being a list of {file, line, end_line, kind, binds}
    (file: `path`, absolute, also for a variant).
    Raises LoadError naming the file and line.
    """
    path = os.path.abspath(path)
    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise LoadError(f"{path}: cannot read: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise LoadError(f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                            f"{e.start})") from None
        filename = path
    else:
        # A variant lives in linecache under its own name, so inspect reads the variant's lines.
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        filename = f"{path}<variant-{digest}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        tree = ast.parse(text, filename)
    except SyntaxError as e:
        raise LoadError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except ValueError as e:  # a null byte
        raise LoadError(f"{path}: not Python source: {e}") from None
    except RecursionError:
        raise LoadError(f"{path}: nested too deeply to parse") from None
    kept, dropped = plan(tree, text, filename)
    code = compile(ast.Module(body=kept, type_ignores=[]), filename, "exec")

    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.dirname(path)
    package, top = _package_of(folder)
    # A fresh name for every load (variants differ), inside the package when there is one: the
    # import system resolves relative imports against __package__ and __spec__.parent.
    name = f"_tforge_{stem}_{next(_counter)}"
    if package:
        name = f"{package}.{name}"
    module = types.ModuleType(name)
    module.__file__ = filename
    if package:
        module.__package__ = package
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=filename)
    sys.modules[name] = module
    saved = {k: sys.modules.get(k) for k in (inject or {})}
    sys.modules.update(inject or {})
    paths = [folder] + ([top] if package else [])
    sys.path[:0] = paths
    try:
        with standin.active():
            exec(code, module.__dict__)
    except BaseException as e:  # SystemExit and KeyboardInterrupt at import are the file's too
        del sys.modules[name]
        line = _failing_line(e, filename)
        where = f"{path}:{line}" if line else path
        hint = ""
        if isinstance(e, NameError):
            lines = [d.lineno for d in dropped if e.name in _binds(d)[0]]
            if lines:
                hint = (f" (the import filter dropped line(s) {', '.join(map(str, lines))}, "
                        f"which bind '{e.name}')")
        raise LoadError(f"{where}: {type(e).__name__}: {e}{hint}") from e
    finally:
        for p in paths:
            sys.path.remove(p)
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    entries = [{"file": path, **_describe(s)} for s in dropped]
    for r in _recordings:
        r.extend(entries)
    return module, entries
