"""The languages people read pentadice in: English and Indonesian, as the Penta app speaks them.

One message catalogue serves every front end: the terminal (``play``, ``advise``, ``review``), and the web
page through :func:`catalogue`. Messages are English in the code (the msgids) and translated with the
standard library's :mod:`gettext` from ``pentadice/support/locale/<lang>/LC_MESSAGES/pentadice.mo``, compiled from
the ``.po`` next to it (``make messages`` extracts and compiles them with Babel). JSON answers never go
through here: they stay language-neutral (box ids, English error texts).

The language is chosen once per command (:func:`choose`: ``--lang``, else the environment) and held in a
context variable, so that a server's threads could each speak their own. Plumbing: imports nothing of
pentadice, so that the rules can mark their words with :func:`N_`.
"""

from __future__ import annotations

import contextvars
import functools
import gettext
import os
import struct
from collections.abc import Mapping
from pathlib import Path

DOMAIN = "pentadice"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "id")  # English: the msgids themselves, no catalogue
DEFAULT = "en"
ENV_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")  # the locale, in POSIX order; LANGUAGE is looked at first (GNU)
ALIASES = {"in": "id", "ind": "id", "eng": "en"}  # "in": the old code of Indonesian (Java, older Android)

_current: contextvars.ContextVar[str] = contextvars.ContextVar("pentadice_language", default=DEFAULT)


class UnknownLanguage(ValueError):
    """A language pentadice does not speak."""


def N_(message: str) -> str:
    """Marks a message for the catalogue where it is defined (the rules' box names); it is translated where
    it is shown, with :func:`_`."""
    return message


def normalize(tag: str | None) -> str | None:
    """The language of a locale name or a language tag (``id_ID.UTF-8``, ``id-ID``, ``en_GB``, ``ID``), if
    pentadice speaks it; None otherwise (``C``, ``POSIX``, ``fr_FR``, empty)."""
    if not tag:
        return None
    code = tag.strip().split(".")[0].split("@")[0].replace("-", "_").split("_")[0].casefold()
    code = ALIASES.get(code, code)
    return code if code in LANGUAGES else None


def from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language the environment asks for, as GNU gettext reads it: ``LANGUAGE`` (a list, ``id:en``; the
    first language spoken here wins) unless the locale is ``C``/``POSIX``, then the locale from the first of
    ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set (``id_ID.UTF-8`` -> ``id``). English otherwise."""
    env = os.environ if environ is None else environ
    locale = next((env[v] for v in ENV_VARS if env.get(v)), "")
    if locale.split(".")[0] not in ("C", "POSIX"):
        for tag in env.get("LANGUAGE", "").split(":"):
            if (lang := normalize(tag)) is not None:
                return lang
    return normalize(locale) or DEFAULT


def from_accept_language(header: str | None) -> str:
    """The language a browser asks for (``Accept-Language: id-ID,id;q=0.9,en;q=0.8``): the spoken language of
    highest weight, English when there is none."""
    best, best_q = DEFAULT, -1.0
    for i, part in enumerate((header or "")[:1000].split(",")):
        tag, _, params = part.partition(";")
        q = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                q = float(params[2:])
            except ValueError:
                continue
        lang = normalize(tag)
        if lang is not None and q > 0 and q - i * 1e-6 > best_q:  # equal weights: the first listed
            best, best_q = lang, q - i * 1e-6
    return best


def check(lang: str) -> str:
    """``lang`` if pentadice speaks it (``id``, ``en``, or a locale name of them); :class:`UnknownLanguage`
    otherwise."""
    code = normalize(lang)
    if code is None:
        raise UnknownLanguage(f"unknown language {lang[:20]!r}; languages: {', '.join(LANGUAGES)}")
    return code


def choose(option: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The language of a command: ``--lang`` when given (checked), else the environment's."""
    return check(option) if option is not None else from_environment(environ)


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The catalogue of ``lang``: the compiled ``.mo`` (English, or a missing file: the msgids as they are)."""
    lang = check(lang)
    return gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[lang], fallback=True)


def use(lang: str) -> str:
    """Speak ``lang`` from now on (in this thread or task); returns it, checked."""
    lang = check(lang)
    _current.set(lang)
    return lang


def current() -> str:
    """The language spoken now."""
    return _current.get()


def _(message: str) -> str:
    """``message`` in the language spoken now."""
    return translations(_current.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for ``n`` things, in the language spoken now (Indonesian has one form)."""
    return translations(_current.get()).ngettext(singular, plural, n)


def catalogue(lang: str) -> dict[str, str]:
    """Every message of the catalogue (msgid -> its text in ``lang``), for the web page's ``t("...")``: the
    terminal's messages and the page's, one catalogue. A plural message appears under its singular and its
    plural msgid (Indonesian has one form for both; English: each as it is)."""
    lang = check(lang)
    out: dict[str, str] = {}
    for msgid, msgstr in _mo_messages(LOCALE_DIR / "id" / "LC_MESSAGES" / f"{DOMAIN}.mo").items():
        forms, texts = msgid.split("\0"), msgstr.split("\0")
        for form in forms:
            out[form] = texts[0] if lang == "id" and texts[0] else form
    return out


@functools.cache
def _mo_messages(path: Path) -> dict[str, str]:
    """The messages of a compiled catalogue as stored (plural forms joined by NUL), header left out; empty
    when the file is missing. (The stdlib's reader keeps no plural msgid, which the page needs.)"""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _revision, count, originals, texts = struct.unpack(order + "4I", data[4:20])
    out = {}
    for i in range(count):
        mlen, moff = struct.unpack(order + "2I", data[originals + 8 * i : originals + 8 * i + 8])
        tlen, toff = struct.unpack(order + "2I", data[texts + 8 * i : texts + 8 * i + 8])
        msgid = data[moff : moff + mlen].decode("utf-8")
        if msgid:
            out[msgid] = data[toff : toff + tlen].decode("utf-8")
    return out


def extract_html(fileobj, keywords, comment_tags, options):
    """Babel extractor for the page's HTML (``make messages``): the English texts of ``data-t`` and
    ``data-t-aria`` attributes, which the page's script passes through ``t()``."""
    import html
    import re

    for lineno, line in enumerate(fileobj.read().decode("utf-8").splitlines(), 1):
        for match in re.finditer(r'\bdata-t(?:-aria)?="([^"]*)"', line):
            yield lineno, None, html.unescape(match.group(1)), []
