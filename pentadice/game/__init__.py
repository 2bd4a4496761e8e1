"""What the game is, in plain Python: dice, rules and rule sets, the states between turns, the score sheet,
a moment of a turn and the moves. Everything else builds on this; it imports only :mod:`pentadice.support`.
"""
