"""The solver: exact expected final scores of every state between turns, by backward induction.

``solver.solve`` and the other names below come from :mod:`pentadice.solver.induction`, imported on first use:
the advisor reads the turn's code (:mod:`pentadice.solver.turn`) without loading the solve's machinery."""

from __future__ import annotations

import importlib

__all__ = ["COMPILING_MESSAGE", "Solution", "compile_kernels", "needs_compiling", "solve", "stages"]


def __getattr__(name: str) -> object:
    if name in __all__:
        return getattr(importlib.import_module("pentadice.solver.induction"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
