"""What a tune leaves for the user to take home (best_variant.py, best_config.py), run the way
the user runs it.

launch_hook(task, config, text): the block best_variant.py holds (and where) when the tune
launched the kernel in a way the file's own code does not: through the file's own function (launch.call), whose
launches got the config in place of what the function passes (launch options included, and the
grid recomputed from launch.grid), or through an autotuner pinned to the one config. The block
does the same for the user's calls, with Triton's public API alone, so that they run what was
timed.

verify(out, task, config, shape): in a fresh worker process, `import best_variant` and
`best_config` from the results folder `out`, launch the kernel through the file's own entry
point (launch.call's function, the wrapper, or `kernel[grid](...)` with best_config's values) on
Triton's ordinary launch path, and compare with the reference at `shape`.
"""

import ast
import contextlib
import importlib
import importlib.util
import os
import sys

import torch

from . import loader, standin
from .task import LAUNCH_OPTIONS, TaskError, python_names
from .kernels import JIT_CLASSES, unwrap
from .worker import (_GRID_NAMES, _arguments, _evaluate, _launch_code, _launch_env,
                     call_arguments, calling, classify, expected_outputs, get, judged,
                     kernel_params, make_inputs, outputs_of)

_HOOK = '''

# tforge: {why}
TFORGE_TUNED = {config!r}


def _tforge_tuned_launches(kernel, config, grid_of):
    """Every launch of `kernel` runs `config`: an autotuner runs it alone (it benchmarks
    nothing), and each launch below any autotuner gets its values in place of the caller's
    (launch options included), its grid from `grid_of` when there is one."""
    import inspect

    import triton

    launch_options = ("num_warps", "num_stages", "num_ctas", "maxnreg")
    levels = [kernel]
    while isinstance(levels[-1], (triton.runtime.Autotuner, triton.runtime.Heuristics)):
        levels.append(levels[-1].fn)
    jit = levels[-1]
    signature = inspect.signature(jit.fn).parameters
    names = list(signature)
    defaults = {{n: p.default for n, p in signature.items()
                if p.default is not inspect.Parameter.empty}}
    placements = {{}}  # positional arguments given -> (slots the config sets, the rest by name)

    def placement(given):
        slots = [(i, config[n]) for i, n in enumerate(names[:given]) if n in config]
        return slots, {{k: v for k, v in config.items() if k not in names[:given]}}
    for i, level in enumerate(levels):
        if isinstance(level, triton.runtime.Autotuner):
            level.configs = [triton.Config(
                {{k: v for k, v in config.items() if k not in launch_options}},
                **{{k: config[k] for k in launch_options if k in config}})]
            continue
        if any(isinstance(below, triton.runtime.Autotuner) for below in levels[i + 1:]):
            continue  # the autotuner's one config carries the values down

        def tuned(untuned, regrid):
            # runs at every launch: what depends on the call's form alone is worked out once
            def run(*args, **kwargs):
                got = placements.get(len(args))
                if got is None:
                    got = placements[len(args)] = placement(len(args))
                slots, by_name = got
                if slots:  # a value the caller passes positionally takes the config's there
                    args = list(args)
                    for at, value in slots:
                        args[at] = value
                kwargs.update(by_name)
                if regrid:
                    bound = dict(defaults)
                    bound.update(zip(names, args))
                    bound.update(kwargs)
                    kwargs["grid"] = grid_of(bound)
                return untuned(*args, **kwargs)
            return run
        level.run = tuned(level.run, level is jit and grid_of is not None)
    return kernel
'''

_GRID = '''

def _tforge_grid_of():
    """The tuned launch's grid, {text}, over the kernel's arguments by name (the names it
    may read imported once, not at every launch)."""
    import math

    import torch
    import triton
    import triton.language as tl

    cdiv = triton.cdiv

    def grid_of(bound):
{unpack}        grid = {text}
        return tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    return grid_of


_tforge_grid = _tforge_grid_of()
'''


def _grid_function(spec, params, kernel):
    """(text of `_tforge_grid`, None) for launch.grid over the kernel's parameters, or
    (None, why not)."""
    text = spec["launch"].get("grid")
    if not text:
        return None, None
    names = sorted(python_names(text) - _GRID_NAMES)
    outside = [n for n in names if n not in params]
    if outside:
        return None, (f"its grid reads {', '.join(outside)}, which {kernel} does not take: the "
                      "file's own grid is kept")
    unpack = "".join(f"        {n} = bound[{n!r}]\n" for n in names)
    return _GRID.format(text=text, unpack=unpack), None


def launch_hook(task, config, text=None):
    """{text, at}: the Python that best_variant.py holds at byte `at` of `text` (the variant;
    None: the kernel file) so that the user's launches of the kernel run `config` as the tune
    did: before a top-level `if __name__ == "__main__":` (a demo run as a script then runs it
    too), else at the end. Its text is "" when the config is empty or the file's own launch
    already gives it (a grid launch, or a wrapper given the config, of a kernel without an
    autotuner)."""
    loaded = get(task)
    spec = loaded.spec
    name = spec["kernel"]
    call = spec["launch"].get("call")
    if not config or not call and not _has_autotuner(loaded.kernel):
        return {"text": "", "at": 0}  # nothing to give, or the file's launch gives it
    grid, why_not = (None, None)
    if call:
        grid, why_not = _grid_function(spec, {n for n, *_ in kernel_params(loaded.kernel)}, name)
        why = (f"the config tuned, on every launch of {name}, in place of what "
               f"{call.split(':')[1]} passes (launch options included"
               + (", the grid recomputed from it)" if grid else ")"))
    else:
        why = f"the tuned config alone in {name}'s autotuner"
    why += (", as the tune launched it. Delete this block to launch the kernel as its caller "
            "asks.")
    if why_not:
        why += f" Note: {why_not}."
    hook = _HOOK.format(why=_comment(why), config=dict(config)) + (grid or "") + \
        (f"\n\n{name} = _tforge_tuned_launches({name}, TFORGE_TUNED, "
         f"{'_tforge_grid' if grid else 'None'})\n")
    if text is None:
        with open(spec["source"], encoding="utf-8") as f:
            text = f.read()
    at = _main_block(text)
    if at is None:
        return {"text": hook, "at": len(text.encode())}
    return {"text": hook.lstrip("\n") + "\n\n", "at": at}


def _main_block(text):
    """The byte offset of the line of the first top-level `if __name__ == "__main__":`, or
    None."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and \
                isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__":
            lines = text.splitlines(keepends=True)[:node.lineno - 1]
            return sum(len(line.encode()) for line in lines)
    return None


def _has_autotuner(kernel):
    from triton.runtime.autotuner import Autotuner, Heuristics
    while isinstance(kernel, (Autotuner, Heuristics)):
        if isinstance(kernel, Autotuner):
            return True
        kernel = kernel.fn
    return False


def _comment(text, width=96):
    """`text` as comment lines of at most `width` characters (the first begins after "# tforge:
    ")."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width - 2 - (10 if not lines else 0):
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n# ".join(lines)


@contextlib.contextmanager
def _observed(launches):
    """Records (jit function, {argument: value}) of every launch, passed through unchanged, the
    tensors left out: a file's demo that launches in a loop at import must not keep every tensor
    it made alive (on a GPU that filled the memory). Put on the classes before the file is
    imported, so that a decorator keeping the bound `run` of its kernel keeps this one."""
    saved = [(cls, cls.__dict__["run"]) for cls in JIT_CLASSES]

    def observing(original):
        def run(fn, *args, **kwargs):
            given = dict(zip(getattr(fn, "arg_names", ()), args), **kwargs)
            launches.append((fn, {k: v for k, v in given.items()
                                  if not isinstance(v, torch.Tensor)}))
            return original(fn, *args, **kwargs)
        return run
    for cls, original in saved:
        cls.run = observing(original)
    try:
        yield
    finally:
        for cls, original in saved:
            cls.run = original


def _import(out, source):
    """best_variant and best_config imported from `out` as a user imports them: the kernel
    file's folder importable too (best_variant stands in for the file beside its neighbours),
    and for a file in a package, best_variant a module of that package (dropped into it), so
    that the file's relative imports resolve as they do for the file."""
    package, top = loader._package_of(os.path.dirname(source))
    for d in (top, os.path.dirname(source), out):
        if d not in sys.path:
            sys.path.insert(0, d)
    for name in ("best_variant", "best_config"):
        sys.modules.pop(name, None)
    best_config = importlib.import_module("best_config")
    if not package:
        return importlib.import_module("best_variant"), best_config
    importlib.import_module(package)
    name = f"{package}.best_variant"
    spec = importlib.util.spec_from_file_location(name, os.path.join(out, "best_variant.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, best_config


def _user_function(spec, module, ref):
    """The function of `ref` ("module:function") as the user reaches it with best_variant in
    place of the kernel file: from best_variant itself, or from a module beside the task or the
    file that imports the kernel file (given best_variant under the file's name)."""
    mod_name, func = ref.split(":")
    stem = os.path.splitext(os.path.basename(spec["source"]))[0]
    if mod_name == stem:
        return getattr(module, func)
    for d in (spec["dir"], os.path.dirname(spec["source"])):
        path = os.path.join(d, mod_name + ".py")
        if os.path.isfile(path):
            return getattr(loader.load(path, inject={stem: module})[0], func)
    return getattr(importlib.import_module(mod_name), func)


def _tuned_config(best, config):
    """The winner's config as best_config.py has it: `config`'s keys, BEST's values. A value
    that differs is a broken best_config.py."""
    if best is None:
        raise ValueError("best_config.py: BEST is None, expected the winner's triton.Config")
    values = best.all_kwargs()
    wrong = [k for k in config if values.get(k) != config[k]]
    if wrong:
        raise ValueError("best_config.py: BEST has " + ", ".join(
            f"{k}={values.get(k)!r}" for k in wrong) + ", the winner " + ", ".join(
            f"{k}={config[k]!r}" for k in wrong))
    return {k: values[k] for k in config}


def _launch(spec, loaded, module, kernel, inputs, shape, config, best):
    """The launch as the user makes it; returns what the file's function returned, or None."""
    launch = spec["launch"]
    with calling(inputs):
        if "call" in launch:
            function = _user_function(spec, module, launch["call"])
            args, kwargs = call_arguments(loaded, inputs, shape, function)
            return function(*args, **kwargs)
        if "wrapper" in launch:
            return _user_function(spec, module, launch["wrapper"])(inputs, dict(config))
        env = _launch_env(**shape, **inputs, **config)
        grid = _evaluate(spec, "launch.grid", launch["grid"], _launch_code(loaded)[0], env)
        args, kwargs = _arguments(loaded, env)
        if not _has_autotuner(kernel):  # an autotuner runs best_variant's one config
            names = {n for n, *_ in kernel_params(kernel)} | set(LAUNCH_OPTIONS)
            kwargs.update((k, v) for k, v in best.all_kwargs().items() if k in names)
        kernel[grid](*args, **kwargs)
    return None


def _dropped(kernel, launches, config):
    """The config's keys that no launch of `kernel` got with the config's value (what the file's
    own launch drops: a wrapper that never passes maxnreg)."""
    jit = unwrap(kernel)
    mine = [given for fn, given in launches if fn is jit]
    # a key of the file's own (a wrapper's setting it turns into others) is not the kernel's
    names = set(jit.arg_names) | set(LAUNCH_OPTIONS)
    return sorted(k for k in config if k in names and
                  any(k not in b or b[k] != config[k] for b in mine))


def verify(out, task, config, shape, seed=2, dtype=None):
    """Import best_variant.py and best_config.py from `out` in this (fresh) process, launch the
    kernel through the file's own entry point with the winner's `config` on Triton's ordinary
    launch path at `shape`, and compare with the task's reference.
    Returns {status: ok|wrong|import|runtime|compile, message, dropped: [config keys the
    launch did not pass to the kernel]}. `dtype`: the task's floating inputs' (the tuned one)."""
    launches = []
    with _observed(launches):
        loaded = get(task, dtype)
        spec = loaded.spec
        try:
            with standin.active():  # a file that asks for the device at import, on a CPU
                module, best_config = _import(out, spec["source"])
        except Exception as e:
            return {"status": "import", "message": f"best_variant.py or best_config.py does not "
                    f"import: {type(e).__name__}: {e}", "dropped": []}
        kernel = getattr(module, spec["kernel"], None)
        if kernel is None:
            return {"status": "import", "dropped": [],
                    "message": f"best_variant.py defines no '{spec['kernel']}'"}
        try:
            tuned = _tuned_config(getattr(best_config, "BEST", None), config)
        except (ValueError, AttributeError) as e:
            return {"status": "import", "message": str(e), "dropped": []}
        inputs = make_inputs(loaded, shape, seed)
        expected = expected_outputs(loaded, inputs, shape)
        del launches[:]  # the reference's launches are not the user's
        try:
            actual = outputs_of(loaded, inputs, lambda: _launch(
                spec, loaded, module, kernel, inputs, shape, tuned, best_config.BEST))
        except TaskError:
            raise
        except Exception as e:
            failed = classify(e)
            return {"status": failed["status"], "dropped": [],
                    "message": f"best_variant.py launched as the user launches it: "
                               f"{failed['message']}"}
    verdict = judged(loaded, actual, expected)
    return {"status": verdict["status"], "message": verdict["message"],
            "dropped": _dropped(kernel, launches, config)}
