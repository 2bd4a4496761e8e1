"""pentadice: exact optimal strategy for Penta and the Yahtzee family of dice games."""

__version__ = "0.1.0"
