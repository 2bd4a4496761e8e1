"""The import picture of docs/architecture.md: each module imports only from its own layer or those below it,
so there are no cycles and no upward arrows (the engine never imports the advisor, a front end, or words)."""

import ast
from pathlib import Path

import pentadice

# Lower numbers are lower layers (see docs/architecture.md).
LAYERS = {
    "paths": 0,
    "dice": 0,
    "interrupts": 0,
    "inputs": 0,
    "i18n": 0,
    "rules": 1,
    "exits": 1,
    "states": 2,
    "turn": 2,
    "turn_inputs": 2,
    "compiled": 3,
    "solver": 3,
    "solver.moments": 3,
    "atomic": 3,
    "chunks": 3,
    "table": 4,
    "sheet": 5,
    "situation": 5,
    "moves": 5,
    "advisor": 6,
    "targets": 6,
    "chances": 6,
    "distribution": 6,
    "strategy": 6,
    "play.strategies": 7,
    "play.engine": 7,
    "play.review": 7,
    "words": 8,
    "simulator": 9,
    "play.terminal": 9,
    "web": 9,
    "play.review_text": 9,
    "cli": 10,
    "__main__": 11,
}


def layer_of(module: str) -> int | None:
    name = module.removeprefix("pentadice.")
    for key in sorted(LAYERS, key=len, reverse=True):
        if name == key or name.startswith(key + "."):
            return LAYERS[key]
    return None


def test_every_module_has_a_layer_and_imports_nothing_above_it():
    root = Path(pentadice.__file__).parent
    upward = []
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        if module in ("__init__", "play", "simulator"):
            continue
        mine = layer_of(module)
        assert mine is not None, f"{module} has no layer: add it to docs/architecture.md and this test"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pentadice"):
                targets = [node.module] if node.module != "pentadice" else [f"pentadice.{a.name}" for a in node.names]
                for target in targets:
                    theirs = layer_of(target)
                    if theirs is not None and theirs > mine and node.lineno not in _type_checking_lines(path):
                        upward.append(f"{module} imports {target}")
    assert upward == []


def _type_checking_lines(path: Path) -> set[int]:
    """Lines of imports under ``if TYPE_CHECKING:`` (for annotations only: no import at run time)."""
    lines = set()
    for block in ast.walk(ast.parse(path.read_text())):
        if isinstance(block, ast.If) and getattr(block.test, "id", None) == "TYPE_CHECKING":
            lines |= {n.lineno for n in block.body}
    return lines
