"""The compile trick's rules, checked rather than remembered: every turn function is compiled, each after the
functions it calls, and a Numba cache layout we cannot read is reported, not passed over."""

import re
import types
from pathlib import Path

import pytest

from pentadice.game import rules
from pentadice.solver import kernels, turn


def test_every_turn_function_and_the_rules_compilable_ones_are_compiled():
    names = {fn.__name__ for fn in kernels.TURN_FUNCTIONS}
    in_turn = {n for n, f in vars(turn).items() if isinstance(f, types.FunctionType) and f.__module__ == turn.__name__}
    assert in_turn <= names
    rules_functions = {n for n, f in vars(rules).items() if isinstance(f, types.FunctionType)}
    for fn in kernels.TURN_FUNCTIONS:
        called_in_rules = {n for n in fn.__code__.co_names if n in rules_functions}
        assert called_in_rules <= {f.__name__ for f in rules.COMPILED}, fn.__name__
        assert hasattr(kernels.wide, fn.__name__) and hasattr(kernels.narrow, fn.__name__)


def test_each_function_comes_after_those_it_calls():
    seen: set[str] = set()
    names = {fn.__name__ for fn in kernels.TURN_FUNCTIONS}
    for fn in kernels.TURN_FUNCTIONS:
        callees = {n for n in fn.__code__.co_names if n in names and n != fn.__name__}
        assert callees <= seen, f"{fn.__name__} is compiled before {callees - seen}"
        seen.add(fn.__name__)


def test_a_cycle_is_refused():
    scope: dict = {}
    exec("def a():\n    return b()\n\ndef b():\n    return a()\n\ndef c():\n    return 1\n", scope)
    assert [f.__name__ for f in kernels.compile_order([scope["c"]])] == ["c"]
    with pytest.raises(ValueError, match="cycle"):
        kernels.compile_order([scope["a"], scope["b"], scope["c"]])


def test_an_unreadable_numba_cache_layout_is_reported():
    class NoCache:
        __name__ = "f"

    with pytest.warns(RuntimeWarning, match="cannot check Numba's cache"):
        kernels.drop_stale_cache([NoCache()])


def test_a_pass_recompiles_exactly_the_turn_functions_that_reach_its_operations():
    """compile_pass clones what calls an operation, directly or not, and shares the rest with the value pass."""
    again = kernels.reaching(kernels.PASS_OPS)
    assert {"successor_rows", "hand_values", "solve_states", "turn_levels"} <= again
    assert not again & {"keep_values", "best_subkeeps", "aligned_rows", *kernels.PASS_OPS}
    for fn in kernels.TURN_FUNCTIONS:
        calls = set(fn.__code__.co_names)
        assert (fn.__name__ in again) == bool(calls & (again | set(kernels.PASS_OPS))), fn.__name__


def test_a_pass_supplies_every_operation_and_only_those():
    from pentadice.solver import utility

    assert set(utility.OPS) == set(kernels.PASS_OPS)
    with pytest.raises(ValueError, match="exactly"):
        kernels.compile_pass("broken", {"chosen": utility.chosen}, 64)


def test_the_value_pass_operations_are_the_plain_sums():
    """The value pass's arithmetic, as the plain-Python (one-lane) advisor runs it."""
    assert turn.successor_value(10.0, 35, 0.0) == 45.0
    assert turn.chosen(turn.successor_value(10.0, 0, 0.0), turn.option_gain(25.0, 0.0)) == 35.0
    assert turn.distance(1.0, 1.5) == 0.5


def test_the_utility_operations_factorise_exp():
    import math

    from pentadice.solver import utility

    theta = 0.01
    row = utility.successor_value(math.exp(theta * 100), 35, theta)
    assert row == pytest.approx(math.exp(theta * 135))
    assert utility.chosen(row, utility.option_gain(25.0, theta)) == pytest.approx(math.exp(theta * 160))
    assert utility.successor_value(2.5, 0, theta) == 2.5  # no bonus: the row itself, its bits


def test_a_changed_operations_module_empties_the_cache(tmp_path):
    """A pass is compiled from its operations' file too: editing it must not leave the old compiled pass."""
    flushed = []

    class Cache:
        _cache_path = str(tmp_path)

        def flush(self):
            flushed.append(True)

    class Dispatcher:
        __name__ = "pass_kernel"
        _cache = Cache()

    ops = tmp_path / "ops.py"
    ops.write_text("x = 1\n")
    module = types.SimpleNamespace(__name__="ops", __file__=str(ops))
    kernels.drop_stale_cache([Dispatcher()], extra=[module])
    kernels.drop_stale_cache([Dispatcher()], extra=[module])
    assert len(flushed) == 1  # written once, then current
    ops.write_text("x = 2\n")
    kernels.drop_stale_cache([Dispatcher()], extra=[module])
    assert len(flushed) == 2


def test_every_module_that_caches_compiled_code_drops_it_when_the_rules_change():
    # Numba keys a cached function on its own file: one that compiles in the rules' functions and is cached
    # without kernels.drop_stale_cache would go on running the old rules after an upgrade (a changed box layout
    # read with the old one). Read from the sources: each module that compiles a kernel asks for the check.
    package = Path(rules.__file__).parent.parent
    compiling = [
        path
        for path in sorted(package.rglob("*.py"))
        if re.search(r"^@jit\b|kernels\._compile\(|\b_compile\(fn", path.read_text(), re.M)
        and path.name != "compiled.py"
    ]
    assert len(compiling) >= 8
    for path in compiling:
        assert "drop_stale_cache(" in path.read_text(), path.relative_to(package)
