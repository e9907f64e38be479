"""What Triton's CPU interpreter cannot run although a GPU compiles it, named.

Under TRITON_INTERPRET such a kernel fails with an error that reads like a bug in it (`'float'
object has no attribute 'to'`), or runs and computes something else (bfloat16 arithmetic;
Python's `and`, `or` and `not` of tiles, which Triton compiles elementwise: the analysis's
`tile_logic` finds them). Each gap was reproduced with Triton 3.6's interpreter; the signatures
below are what it raises.
"""

import inspect
import os
import re
import types

import triton

_TRITON = os.path.dirname(triton.__file__) + os.sep
_NOT_AFFECTED = "a GPU run (--backend cuda or --backend compile) is not affected"
_LIBDEVICE = "libdevice functions (triton.language.extra.libdevice, tl.extra.cuda.libdevice)"
# What the interpreter's builder raises NotImplementedError for, by its message's first word.
_NOT_IMPLEMENTED = {"inline_asm": "inline assembly (tl.inline_asm_elementwise)",
                    "extern_elementwise": "external functions (tl.extern_elementwise)"}


def _interpreting():
    return triton.knobs.runtime.interpret


def _chain(exc):
    """The exception and those it came from (the interpreter re-raises the kernel's own)."""
    out = []
    while exc is not None and all(exc is not e for e in out):
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def _frames(exc):
    for e in _chain(exc):
        tb = e.__traceback__
        while tb is not None:
            yield tb.tb_frame
            tb = tb.tb_next


def _is_libdevice(obj):
    module = obj.__name__ if isinstance(obj, types.ModuleType) else \
        getattr(obj, "__module__", None)
    return isinstance(module, str) and module.startswith("triton.language.extra") and \
        module.endswith("libdevice")


def _calls_libdevice(exc):
    """Whether code outside Triton in the traceback names libdevice: a libdevice function
    returns None in the interpreter, so the failure comes later, where the None is used."""
    for f in _frames(exc):
        if f.f_code.co_filename.startswith(_TRITON):
            continue
        names = f.f_code.co_names
        if "libdevice" in names or any(_is_libdevice(f.f_globals.get(n)) for n in names):
            return True
    return False


def _unpatched_builtin(exc):
    """The triton.language builtin that ran without the interpreter's patching."""
    for f in _frames(exc):
        fn = f.f_locals.get("fn") if f.f_code.co_name == "wrapper" else None
        if f.f_code.co_filename.startswith(_TRITON) and callable(fn):
            return fn
    return None


def _alias_of(exc, fn):
    """The global name a kernel outside Triton calls `fn` by (`exp = tl.exp`, `from
    triton.language import exp`), rather than as an attribute of triton.language."""
    for f in _frames(exc):
        if f.f_code.co_filename.startswith(_TRITON):
            continue
        for n in f.f_code.co_names:
            g = f.f_globals.get(n)  # the builtin's wrapper, or the function itself
            if callable(g) and inspect.unwrap(g) is inspect.unwrap(fn):
                return n
    return None


def user_frame(exc, is_user):
    """(file, line) of the innermost frame of the user's code (`is_user(filename)`) in the
    exception and those it came from, or None."""
    found = None
    for e in _chain(exc):
        tb = e.__traceback__
        while tb is not None:
            if is_user(tb.tb_frame.f_code.co_filename):
                found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
            tb = tb.tb_next
    return found


def bfloat16_suspect(launches):
    """For a script that failed under the interpreter after launching kernels with bfloat16
    tensors: a sentence naming them (the interpreter's bfloat16 arithmetic computes wrong
    values, which the script's own check then rejects), else None."""
    if not _interpreting():
        return None
    seen = {}
    for entry in launches:
        names = [n for n, d in entry["args"].items() if d.get("dtype") == "bfloat16"]
        if names:
            seen.setdefault(entry["kernel"], names)
    if not seen:
        return None
    which = "; ".join(f"{k} ({', '.join(v)})" for k, v in seen.items())
    return (f"bfloat16 arithmetic (kernels launched with bfloat16 tensors: {which}): Triton's "
            "CPU interpreter adds and multiplies bfloat16 values as their raw 16-bit patterns, "
            "so a result the script checks may be wrong here")


def _feature(exc):
    """(missing feature, why) for an interpreter gap, else None."""
    texts = [str(e) for e in _chain(exc)]
    for e in _chain(exc):
        if isinstance(e, NotImplementedError) and "interpreter mode" in str(e):
            word = str(e).split()[0]
            return _NOT_IMPLEMENTED.get(word, word), "the interpreter has no implementation"
    if any("`_semantic` argument must be provided" in t for t in texts):
        fn = _unpatched_builtin(exc)
        if fn is not None and _is_libdevice(fn):
            return _LIBDEVICE, f"{fn.__module__}.{fn.__name__} is not provided by the interpreter"
        alias = _alias_of(exc, fn) if fn is not None else None
        if alias is not None:
            return f"a module-level alias of a triton.language function ({alias} = " \
                f"{fn.__module__}.{fn.__name__})", "the interpreter patches the functions " \
                "of triton.language where they are defined, not other names bound to them " \
                f"(write tl.{fn.__name__} in the kernel to run it here)"
        name = f"{fn.__module__}.{fn.__name__}" if fn is not None else "a builtin"
        return name, "the interpreter does not provide it"
    for t in texts:
        if "'InterpreterBuilder' object has no attribute 'get_bf16'" in t:
            return "bfloat16 constants (a bfloat16 tensor combined with a Python number)", \
                "the interpreter cannot make a bfloat16 scalar"
        m = re.search(r"'InterpreterBuilder' object has no attribute '(\w+)'", t)
        if m:
            return f"the operation {m.group(1)}", "the interpreter's builder lacks it"
        m = re.search(r"'float' object has no attribute '(\w+)'", t)
        if m:
            return f"tensor methods of a float scalar argument (.{m.group(1)})", \
                "the interpreter passes it as a Python float, not as an fp32 scalar"
    if any("NoneType" in t for t in texts) and _calls_libdevice(exc):
        return _LIBDEVICE, "they return None in the interpreter"
    return None


def describe(exc):
    """`interpreter gap: ...` for an exception from a kernel run in the interpreter that stems
    from what the interpreter lacks, else None."""
    if not _interpreting():
        return None
    found = _feature(exc)
    if found is None:
        return None
    feature, why = found
    return f"interpreter gap: {feature}: {why}; {_NOT_AFFECTED}"


def interpreter_warnings(spec, path, kernel):
    """What a task's results under the interpreter may get wrong, as sentences (a list): its
    bfloat16 inputs, and the `and`/`or`/`not` of tiles in `kernel` (a jit function's name) and
    the jit functions of its file (`path`) it calls."""
    if not _interpreting():
        return []
    out = []
    bf16 = [i["name"] for i in spec.get("inputs") or [] if i["dtype"] == "bfloat16"]
    if bf16:
        out.append(f"interpreter gap: bfloat16 tensors ({', '.join(bf16)}): Triton's CPU "
                   "interpreter adds and multiplies bfloat16 values as their raw 16-bit "
                   f"patterns, so a correct kernel may be reported wrong here; {_NOT_AFFECTED}")
    return out + [f"interpreter gap: {note}; {_NOT_AFFECTED}" for note in
                  _tile_logic_notes(path, kernel)]


def _tile_logic_notes(path, kernel):
    """The analysis's tile_logic notes of `kernel` and the jit functions of its file it calls;
    none when the file cannot be analysed (the task's load says so elsewhere)."""
    from . import analyze
    try:
        return analyze.tile_logic_notes(analyze.analyze(path), kernel)
    except (ValueError, OSError):
        return []
