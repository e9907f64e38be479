"""The worker package's modules import one another without a cycle (at module level or inside a
function): a module two others need lives below both of them."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "engine/worker/python/tforge_worker"


def imports_of(path):
    """The package's modules that the module at `path` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tforge_worker."):
            found.add(node.module.split(".")[1])
    return found - {"__init__"}


def cycle(graph):
    """One import cycle of `graph` as a list of modules, or None."""
    state = {}

    def visit(m, path):
        state[m] = "open"
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n, path + [n])
                if found:
                    return found
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def test_the_checker_sees_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_worker_package_has_no_import_cycle():
    graph = {p.stem: imports_of(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert "variants" in graph and "worker" in graph
    assert cycle(graph) is None, " -> ".join(cycle(graph))
