"""``python -m pentadice``: the ``pentadice`` command."""

from pentadice.cli import main

if __name__ == "__main__":
    main(prog_name="pentadice")
