"""Storing and checking solved tables: the one checked array format (:mod:`~pentadice.tables.chunks`), atomic
files, where tables live, the value and second-moment table and the target table.
"""
