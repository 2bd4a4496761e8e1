"""The solver: exact expected final scores of every state between turns, by backward induction."""

from pentadice.solver.induction import Solution, compile_kernels, solve, stages

__all__ = ["Solution", "compile_kernels", "solve", "stages"]
