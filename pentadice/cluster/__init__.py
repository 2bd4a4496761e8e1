"""Tables built out of core, layer by layer, as tasks of a distributed engine (Dask).

A table too large for one process's memory (Maxi Yatzy's win tables: 19 tables of 2**20 box masks x 80
subtotals, 12.7 GB) is built one layer of open boxes at a time, in chunks of box masks: each chunk is a task that
reads the layers below from the table's file on disk (memory-mapped), writes its rows to a chunk file of its own
(atomically, with a CRC for every 64 KiB), and the driver merges a finished layer into the table's file before
the next layer starts. An interrupted build resumes from the chunks already written; a chunk whose worker died
is run again by Dask. The same tasks run on a ``LocalCluster`` of this machine's cores or on a running cluster
whose workers share the table directory.

- :mod:`pentadice.tables.win_plan` and :mod:`pentadice.tables.win_store` (below, in the tables' layer): what a
  build computes (its tables, layers and chunks) and its files on disk: the table, the chunks, the layers
  merged, the record of the finished table; resuming, verifying, reading (the win player reads them there).
- :mod:`pentadice.tables.targets_store`: the same for the target table, whose rows vary in length: chunks cut by
  lanes, each layer's rows a file of their own, the finished table written as ``solve --targets`` writes it;
  :mod:`pentadice.tables.chances_store` the same for the chances table (chunks of states, the value table's
  policy), written as ``solve`` writes it.
- :mod:`pentadice.cluster.tasks`: one chunk, computed by a worker.
- :mod:`pentadice.cluster.engine`: the driver: the tasks of each layer on Dask (or in this process), merged.

``docs/scale.md`` has the sizes and times, measured and extrapolated, of every Maxi Yatzy table.
"""
