"""How a ``pentadice`` command ends: one convention for every command.

- 0: done.
- 1: a failure that is not the user's typing: a damaged or unreadable table, a file that cannot be written,
  standard output closed or full. One line ``Error: ...``, no usage banner.
- 2: a usage error: a bad option, dice or sheet (Click's usage banner and one line), or a bad input file
  (one line ``Error: ...`` naming the file: the file is at fault, not the command line).
- 130: interrupted (Ctrl-C, or SIGTERM, which is handled like it). One line saying what was kept.

No traceback in any of them. :class:`Command` group applies it to every subcommand.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading

import click

from pentadice.support.paths import PathError

INTERRUPTED = 130


class Failure(click.ClickException):
    """Exit 1 with ``Error: message`` and no usage banner."""

    exit_code = 1


class Refused(Exception):
    """A file the program needed and refused (a damaged table): wherever it is found, even in the middle of a
    command's answer (a target table's chunk is checked when first read), the command ends with exit 1 and
    ``Error: message``."""


class TableError(ValueError, Refused):
    """A table that is missing, of another rule set, or damaged; or a table that cannot be written. Here, below
    every layer, so that the solver can refuse a table too; :mod:`pentadice.tables` raises it and its kinds."""


class BadInput(click.ClickException):
    """Exit 2 with ``Error: message`` and no usage banner: an input file (sheet, saved game) that is wrong."""

    exit_code = 2


class Interrupted(click.ClickException):
    """Exit 130 with one line: ``Interrupted: message`` (what was kept, or that nothing was written)."""

    exit_code = INTERRUPTED

    def __init__(self, message: str = "stopped") -> None:
        super().__init__(message)

    def show(self, file=None) -> None:
        click.echo(f"Interrupted: {self.message}", err=True)


class ReaderGone(Failure):
    """Exit 1 without a word: the reader of a pipe went away (``pentadice ... | head``), as it may."""

    def show(self, file=None) -> None:
        return None


def output_failure(e: OSError) -> Failure:
    """The failure of writing to standard output: closed (a pipe whose reader is gone: quiet) or full."""
    if e.errno == errno.EPIPE:
        return ReaderGone("the reader closed the pipe")
    reason = "no space left on the device" if e.errno == errno.ENOSPC else e.strerror or str(e)  # EBADF, EIO
    return Failure(f"cannot write to standard output: {reason}")


def stdout_failure(e: OSError) -> Failure:
    """:func:`output_failure` for a command that writes its own output to standard output (``--out -``):
    standard output is pointed at /dev/null first, so that nothing more is tried on the closed pipe."""
    _quiet_stdout()
    return output_failure(e)


def _quiet_stdout() -> None:
    """After standard output failed, point it at /dev/null so that Python's own flush at exit stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


_OUTPUT_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO)


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class Command(click.Group):
    """The ``pentadice`` group: Ctrl-C and SIGTERM end a command with exit 130 and one line; a failing standard
    output (closed, full, a closed pipe) with exit 1 and one line, never a traceback or a silent exit 0."""

    def main(self, *args, **kwargs):
        if sys.stdout is None:  # started with standard output closed (`>&-`): nothing could be shown
            Failure("standard output is closed").show()
            sys.exit(Failure.exit_code)
        # Started with standard input or error closed (`<&-`, `2>&-`): read nothing, say nothing, as if they
        # were /dev/null, rather than fail on the first progress bar or read.
        if sys.stdin is None:
            sys.stdin = open(os.devnull)  # noqa: SIM115  (for the life of the process)
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        try:
            return super().main(*args, **kwargs)
        except OSError as e:  # writing help or a usage message to a full standard output
            if e.filename is not None or e.errno not in _OUTPUT_ERRORS:
                raise
            _quiet_stdout()
            output_failure(e).show()
            sys.exit(Failure.exit_code)

    def invoke(self, ctx: click.Context):
        previous = None
        with contextlib.suppress(ValueError):  # not the main thread (e.g. a test runner's): leave SIGTERM alone
            previous = signal.signal(signal.SIGTERM, _sigterm)
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()
            return result
        except KeyboardInterrupt:
            raise Interrupted() from None
        except PathError as e:  # `~user` of no user, in whichever option or variable gave a path
            raise click.UsageError(str(e)) from None
        except Refused as e:  # a damaged table found where a command did not look for one: the last net
            raise Failure(str(e)) from None
        except ModuleNotFoundError as e:  # an optional part not installed: named in one line, with its pip extra
            from pentadice.support import extras

            raise Failure(str(e) if isinstance(e, extras.MissingPart) else extras.missing_message(e.name)) from None
        except click.exceptions.Exit:
            sys.stdout.flush()
            raise
        except OSError as e:  # a command's own files are reported by the command; this is the last net
            if e.filename is None and e.errno in _OUTPUT_ERRORS:
                _quiet_stdout()
                raise output_failure(e) from None
            where = f"{e.filename}: " if e.filename else ""
            raise Failure(f"{where}{e.strerror or e}") from None
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame) -> None:
    """Ctrl-C as KeyboardInterrupt, but never inside Python's import machinery: one raised in an import lock's
    callback is printed as "Exception ignored" and lost. Met there, the signal is sent again a moment later, once
    the import is done (a module's import takes milliseconds, Numba's a second at most)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            threading.Timer(IMPORT_RETRY_SECONDS, os.kill, (os.getpid(), signal.SIGINT)).start()
            return
        frame = frame.f_back
    raise KeyboardInterrupt


IMPORT_RETRY_SECONDS = 0.02


def run(command: click.Command, **kwargs) -> None:
    """The process's entry point: run ``command`` and end the process with its exit code. Ctrl-C arriving while a
    module is imported is taken once the import is done (:func:`_interrupt`). Once the command has ended, Ctrl-C
    and SIGTERM are ignored: Python restores their default action while it tears down (Numba and LLVM take a
    moment), and a signal then would kill a process whose work is done and reported, with no word and an exit
    status of "killed by SIGINT"."""
    with contextlib.suppress(ValueError):  # not the main thread: Python's own handling stays
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # an ignored Ctrl-C stays ignored
            signal.signal(signal.SIGINT, _interrupt)
    try:
        command.main(**kwargs)
    finally:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        # Blocked too: Python's teardown puts the default action back, and a signal still on its way then
        # (a pending one, or one from a child) would kill the finished process; blocked, it is never delivered.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
