"""The compile trick's rules, checked rather than remembered: every turn function is compiled, each after the
functions it calls, and a Numba cache layout we cannot read is reported, not passed over."""

import types

import pytest

from pentadice import rules, turn
from pentadice.solver import kernels


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
