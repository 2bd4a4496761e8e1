"""Sending Ctrl-C (SIGINT) or SIGTERM to a command under test, whatever way the test session itself was started.

A shell's background job (``make test &``, ``nohup``, some job runners) starts with SIGINT ignored, and every
process it starts inherits that: a command that inherits SIGINT as ignored is right to keep ignoring it, so a test
that means to press Ctrl-C must not depend on it. :func:`default_interrupts` (called by ``conftest.py`` when the
session starts) gives the test process, and so every child it starts, SIGINT's default action back;
:func:`interrupt` refuses at once to send a signal the child ignores, so a lost signal fails the test in a line
instead of leaving the command at work until a time-out."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def default_interrupts() -> None:
    """SIGINT raises KeyboardInterrupt in this process again, and its children start with the default action."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def ignored_signals(pid: int) -> set[int]:
    """The signals process ``pid`` ignores (its ``SigIgn`` mask in /proc); empty where /proc does not say."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return set()
    for line in status.splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    return set()


def interrupt(proc: subprocess.Popen, sig: int = signal.SIGINT) -> None:
    """Send ``sig`` to ``proc``, failing the test at once if the process ignores it."""
    assert sig not in ignored_signals(proc.pid), (
        f"the command under test ignores {signal.Signals(sig).name}: it inherited it as ignored from the test session"
    )
    proc.send_signal(sig)


def cpu_seconds(pid: int) -> float:
    """The processor time process ``pid`` has used so far, all its threads together (/proc's utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_work(proc: subprocess.Popen, seconds: float, timeout: float = 600.0) -> None:
    """Wait until ``proc`` has done ``seconds`` of processor time: past its start-up and into its work however busy
    the machine is, where a fixed sleep is too short on a loaded machine and too long on a quiet one."""
    end = time.monotonic() + timeout
    while cpu_seconds(proc.pid) < seconds:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, f"the command used under {seconds} s of processor time in {timeout} s"
        time.sleep(0.1)
