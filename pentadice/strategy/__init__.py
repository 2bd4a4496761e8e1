"""Strategies for computer players beyond the expected-score one: :mod:`pentadice.strategy.win` plays to win."""
