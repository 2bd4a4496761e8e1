"""Who plays: the engine's games (players, turns, moves, views, history), their review, and the computer's
strategies (`optimal`, `win` with its last turns)."""
