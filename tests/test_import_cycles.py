"""No import cycle among the ``solver`` modules, imports inside functions included.

Every ``solver/**/*.py`` is parsed (not imported); each ``import solver.x`` and ``from solver.x
import y`` anywhere in it (relative imports resolved) is an edge to the module it names: to
``solver.x.y`` when ``y`` is a submodule, else to ``solver.x``. A package is the module of its
``__init__.py``; importing a submodule is not counted as an import of its packages. The
registry's look-up of a module's entry by name (:func:`solver.modules.spec_for`,
``importlib``) is not an import statement and is no edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "solver"


def module_files() -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the ``solver`` package."""
    files = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _owner(name: str, modules: dict[str, Path]) -> str:
    """The module that ``name`` (a module, or an attribute of one) lives in."""
    while name not in modules:
        name = name.rpartition(".")[0]
    return name


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The ``solver`` modules that the module ``name`` (file ``path``) imports anywhere."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(_owner(a.name, modules) for a in node.names
                         if a.name.split(".")[0] == "solver")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = package[:len(package) - node.level + 1]
                base = ".".join([*here, base] if base else here)
            if base.split(".")[0] != "solver":
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in modules else _owner(base, modules))
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the ``solver`` modules it imports."""
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _report(graph: dict[str, set[str]], components: list[list[str]]) -> str:
    lines = []
    for component in components:
        inside = set(component)
        lines.append(f"cycle among {len(component)} modules:")
        lines += [f"  {v} -> {', '.join(sorted(graph[v] & inside))}" for v in component]
    return "\n".join(lines)


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    modules = {"solver": Path("solver/__init__.py"), "solver.a": Path("solver/a.py"),
               "solver.b": Path("solver/b.py"), "solver.p": Path("solver/p/__init__.py"),
               "solver.p.c": Path("solver/p/c.py")}
    source = tmp_path / "a.py"
    source.write_text("import numpy\n\ndef f():\n    from solver.b import thing\n"
                      "    import solver.p.c\n\nfrom . import p\nfrom .p import c\n")
    assert imports_of("solver.a", source, modules) == {"solver.b", "solver.p", "solver.p.c"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_solver_modules():
    graph = import_graph()
    assert len(graph) > 50
    found = cycles(graph)
    assert not found, "\n" + _report(graph, found)
