"""Many games played by compiled code under a strategy, solitaire and multiplayer, and their statistics."""
