"""The solver: exact expected final scores of every state between turns, by backward induction."""

from pentadice.solver.induction import COMPILING_MESSAGE, Solution, compile_kernels, needs_compiling, solve, stages

__all__ = ["COMPILING_MESSAGE", "Solution", "compile_kernels", "needs_compiling", "solve", "stages"]
