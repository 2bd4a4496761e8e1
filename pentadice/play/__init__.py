"""Playing a game: the engine (rules, turns, moves, views) and its front ends."""
