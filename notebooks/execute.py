"""Run the notebooks top to bottom (nbclient): `make figures` regenerates the PNG files the README shows.

    python notebooks/execute.py [--inplace] [NOTEBOOK ...]

Each notebook runs with its own folder as the working directory, so figures land in notebooks/figures/
(or in $PENTADICE_FIGURES). With --inplace the outputs are written back into the notebooks. A notebook that
raises makes the run fail.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def execute(path: Path, inplace: bool = False, timeout: int = 600) -> None:
    """Run one notebook; raise on the first failing cell."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    if inplace:
        nbformat.write(nb, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--inplace", action="store_true", help="write the outputs back into the notebooks")
    args = parser.parse_args()
    for path in args.notebooks or sorted(HERE.glob("*.ipynb")):
        print(f"running {path.name} ...", flush=True)
        execute(path, args.inplace)
    sys.exit(0)


if __name__ == "__main__":
    main()
