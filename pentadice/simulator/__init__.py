"""Many solitaire games played by compiled code under a strategy, and their statistics."""
