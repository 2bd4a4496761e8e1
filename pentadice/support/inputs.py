"""Reading what users and files give us, strictly: bounded sizes, UTF-8, and JSON without surprises.

Every reader of user files (sheet files, batch lines, saved games, table metadata) goes through here, so that
each refuses the same things the same way, with :class:`InputError` naming the problem: text that is not
UTF-8, a file larger than its bound, JSON nested deeper than any of our formats (no RecursionError), a key
given twice in one object (JSON keeps the last silently), ``NaN``/``Infinity`` and numbers too long to read.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from typing import Any

MAX_DEPTH = 64  # our formats nest three or four levels; anything deeper is refused before it is parsed
MAX_NUMBER_DIGITS = 40  # a 128-bit number (a saved game's generator state) has 39


class InputError(ValueError):
    """Input that cannot be read: its reason in words."""


def decode(data: bytes, what: str) -> str:
    """``data`` as UTF-8 text; InputError saying where it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} is not UTF-8 text (byte {data[e.start]:#04x} at position {e.start})") from None


def read_text(path: str | os.PathLike[str], what: str, limit: int) -> str:
    """A small text file, read whole: refused if missing, a directory, larger than ``limit`` bytes or not UTF-8.
    A pipe is read (up to the limit), so that ``<(...)`` works."""
    try:
        with open(path, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise InputError(f"{what} {os.fspath(path)} is a directory")
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise InputError(f"{what} {os.fspath(path)} is a directory") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {os.fspath(path)}: {e.strerror or e}") from None
    if len(data) > limit:
        raise InputError(f"{what} {os.fspath(path)} is larger than {limit:,} bytes")
    return decode(data, f"{what} {os.fspath(path)}")


def _depth(text: str) -> int:
    """The deepest nesting of brackets outside strings (a cheap scan, so that json never recurses deeply)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InputError(f"key {key!r} is given twice in one object")
        out[key] = value
    return out


def _constant(name: str) -> float:
    raise InputError(f"{name} is not a number JSON allows")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise InputError(f"the number {text[:12]}... is too long")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS + 10:
        raise InputError(f"the number {text[:12]}... is too long")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise InputError(f"the number {text} is out of range")
    return value


def loads(text: str | bytes, what: str = "the input") -> Any:
    """Parse JSON strictly (see the module's docstring); InputError naming ``what`` and the problem."""
    if isinstance(text, bytes | bytearray):
        text = decode(bytes(text), what)
    if _depth(text) > MAX_DEPTH:
        raise InputError(f"{what} is nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except InputError as e:
        raise InputError(f"{what}: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{what} is not valid JSON: {e}") from None
    except (RecursionError, ValueError) as e:  # belt and braces: the depth scan should have caught the first
        raise InputError(f"{what} cannot be read as JSON: {e}") from None


_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def json_kind(value: object) -> str:
    """What a JSON value is, in words, for a message: ``a string``, ``a number``, ``a list``, ``an object``,
    ``true or false``, ``null``."""
    kinds = {list: "a list", dict: "an object", str: "a string", int: "a number", float: "a number"}
    return kinds.get(type(value), "true or false" if isinstance(value, bool) else "null")


def unsafe_char(c: str) -> bool:
    """Whether ``c`` is a control character (C0, DEL, C1, ESC), a lone surrogate, a line or paragraph separator
    or a bidirectional control: characters that must never reach a terminal raw."""
    return c in _BIDI or unicodedata.category(c) in _UNSAFE_CATEGORIES


def clean(text: str) -> str:
    """``text`` fit to print: every unsafe character (see :func:`unsafe_char`) replaced by ``?``."""
    return "".join("?" if unsafe_char(c) else c for c in text)
