"""The optional parts of pentadice and the pip extra that installs each: a part that is missing is named in one
line (:func:`missing_message`), never a traceback. The web server's packages are in the default install; the
others (Dask for ``build``, psycopg for a PostgreSQL database, matplotlib and Jupyter for the notebooks) are
extras."""

from __future__ import annotations

import importlib

# A module's top-level name -> (the pip extra that installs it, what needs it).
EXTRAS: dict[str, tuple[str, str]] = {
    "fastapi": ("web", "the web server and the page"),
    "starlette": ("web", "the web server and the page"),
    "uvicorn": ("web", "the web server and the page"),
    "httptools": ("web", "the web server and the page"),
    "uvloop": ("web", "the web server and the page"),
    "pydantic": ("web", "the web server and the page"),
    "dask": ("cluster", "out-of-core builds, `pentadice build`,"),
    "distributed": ("cluster", "out-of-core builds, `pentadice build`,"),
    "psycopg": ("postgres", "PostgreSQL games databases"),
    "matplotlib": ("notebooks", "the notebooks"),
    "nbclient": ("notebooks", "the notebooks"),
    "nbformat": ("notebooks", "the notebooks"),
}
# What serve cannot run without (uvloop is faster where installed: the server runs on asyncio's loop without it).
WEB_SERVER = ("fastapi", "starlette", "pydantic", "uvicorn", "httptools")


def missing_message(module: str | None) -> str:
    """One line naming a missing module, what needs it and the pip command that installs it."""
    name = (module or "?").split(".")[0][:60]
    known = EXTRAS.get(name)
    if known is None:
        return f"the Python module {name} is missing: reinstall pentadice (pip install --force-reinstall pentadice)"
    extra, needs = known
    return f"the Python module {name} is not installed ({needs} need it): pip install 'pentadice[{extra}]'"


class MissingPart(ModuleNotFoundError):
    """An optional part that is not installed; its message is :func:`missing_message`'s one line."""


def require(modules: tuple[str, ...] = WEB_SERVER) -> None:
    """Import ``modules`` now (a command checks what it needs before any table loads); :class:`MissingPart`
    naming the first that is missing."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise MissingPart(missing_message(getattr(e, "name", None) or name)) from None
