"""A Dask preload for the worker processes of a build's local cluster: Ctrl-C is for the driver alone.

Ctrl-C at a terminal sends SIGINT to every process of the foreground group, the local cluster's workers
included; each would end with its own tracebacks (about 60 lines) before the driver's one "Interrupted:" line.
Ignoring SIGINT here, the driver alone stops the build: it cancels the tasks and closes the cluster, whose workers
it ends itself.
"""

from __future__ import annotations

import signal


def dask_setup(worker: object) -> None:
    """Called by Dask in each worker process as it starts (in its main thread)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
