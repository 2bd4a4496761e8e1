"""The import picture of docs/architecture.md: the package's folders are its layers, each module imports only
from its own folder or the folders below it (no upward arrow: the game never imports the solver, the solver
never a table file, the engine never a face), and no group of modules imports itself round (no cycle, within a
folder as well as across). Every import counts: at module level, inside a function, or under ``TYPE_CHECKING``.
"""

import ast
from pathlib import Path

import pentadice

ROOT = Path(pentadice.__file__).parent

# The folders from the bottom up (see docs/architecture.md); the top-level modules last.
LAYERS = ("support", "game", "solver", "tables", "advisor", "players", "simulator", "cluster", "storage", "faces")
# "": pentadice/__init__.py, a front door like the command line: the version and the library's one call,
# pentadice.advise (its imports made when it is called); no module imports it (the version is support.version).
TOP = {"": len(LAYERS), "cli": len(LAYERS), "__main__": len(LAYERS)}


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name without ``pentadice.`` (a package by its folder's)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix("__init__").removesuffix(".")] = path
    return found


def layer_of(module: str) -> int:
    """The layer of a module (a name without ``pentadice.``): its folder's place in LAYERS."""
    folder = module.split(".")[0]
    if folder in LAYERS:
        return LAYERS.index(folder)
    assert module in TOP, f"{module} is in no layer folder: move it to one, or argue it in docs/architecture.md"
    return TOP[module]


def imports(path: Path, known: dict[str, Path], text: str | None = None) -> set[str]:
    """The package's modules that ``path`` imports anywhere in it (``from pentadice.game import rules`` is
    ``game.rules``; ``from pentadice.game.rules import Box`` is ``game.rules``; relative imports resolved).
    ``text``: its source, if not read from ``path``."""
    package = path.relative_to(ROOT).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        names = []
        if isinstance(node, ast.ImportFrom):
            if node.level:  # from . import x, from ..game import rules
                parent = package[: len(package) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            elif node.module and node.module.split(".")[0] == "pentadice":
                base = node.module.removeprefix("pentadice").removeprefix(".")
            else:
                continue
            modules = [f"{base}.{a.name}".lstrip(".") for a in node.names]
            names = [n for n in modules if n in known] or [base]
        elif isinstance(node, ast.Import):
            names = [a.name.removeprefix("pentadice").removeprefix(".") for a in node.names
                     if a.name.split(".")[0] == "pentadice"]  # fmt: skip
        for name in names:
            while name not in known and "." in name:
                name = name.rpartition(".")[0]
            found.add(name)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: imports(p, known) - {m} for m, p in known.items()}


def test_every_module_is_in_a_layer_and_imports_nothing_above_it():
    upward = [
        f"{m} imports {t}" for m, targets in graph().items() for t in sorted(targets) if layer_of(t) > layer_of(m)
    ]
    assert upward == []


def test_no_import_cycle():
    """Tarjan's strongly connected components of the import graph: any with two modules or more is a cycle."""
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_checks_see_what_they_must():
    """The graph finds imports inside functions and under TYPE_CHECKING, so neither hides an arrow."""
    edges = graph()
    assert "players.lastturns" in edges["players.win"]  # imported inside a function only
    assert "game.rules" in edges["solver.turn"]
    assert layer_of("faces.cli") > layer_of("players.engine") > layer_of("advisor.advice") > layer_of("game.rules")


def test_relative_and_mixed_imports_are_seen():
    """``from ..game import rules`` (relative) and ``import os, pentadice.solver.turn`` (mixed) both count."""
    known = {"game.rules": None, "solver.turn": None, "players.win": None}
    source = "from ..game import rules\nimport os, pentadice.solver.turn\nfrom . import win\n"
    assert imports(ROOT / "players" / "probe.py", known, source) == {"game.rules", "solver.turn", "players.win"}


def test_the_top_level_holds_only_the_argued_modules():
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "cli.py"]
    folders = [p for p in ROOT.iterdir() if p.is_dir() and any(f.suffix == ".py" for f in p.rglob("*.py"))]
    assert sorted(p.name for p in folders) == sorted(LAYERS)
