"""Plumbing every layer may use: exit codes and error types, Ctrl-C held where it would harm, strict reading
of user files, the language chosen and its message catalogue.
"""
