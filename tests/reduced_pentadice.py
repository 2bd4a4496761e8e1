"""``pentadice`` in a process of its own, with small games standing for rule sets: ``python reduced_pentadice.py
ARGS`` runs ``pentadice ARGS`` with each rule set of :data:`reduced_games.AS_RULE_SETS` (Penta, Yatzy, Maxi Yatzy,
Kiriki) replaced, under its own name, by its small game. A test of what a real process does (signals, exit codes,
files left behind, a server's answers) then solves and loads tables of a few MB in a second, not the full game's.
This file and reduced_games.py are all it needs beside the package: a test may copy them where another user reads
them."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reduced_games

from pentadice.faces.cli import entry
from pentadice.game import rules

for _name in reduced_games.AS_RULE_SETS:
    rules.REGISTRY[_name] = reduced_games.as_rule_set(_name)

if __name__ == "__main__":
    sys.argv[0] = "pentadice"
    entry()
