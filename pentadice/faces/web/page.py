"""The page's files, held in memory (:class:`HeldFiles`), and what answers the paths no API route took
(:class:`Pages`, mounted at ``/`` after the routes)."""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import re
from email.utils import formatdate
from pathlib import Path

from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.routing import Match

STATIC = Path(__file__).parent / "static"
# The page's own addresses, answered with its index.html (the page reads the path): a game's (``/games/ID``, the
# game's public address: its id, URL-safe base64, in the path; a seat's secret, when shared games have them, will
# travel in a header or a cookie, never in a path or a query) and the history's (``/history``).
PAGE_PATHS = re.compile(r"games/[A-Za-z0-9_-]{1,64}|history")
WORKER = "sw.js"  # the service worker, whose cache version names the page's files it stores
WORKER_VERSION_LINE = 'const VERSION = "dev";'


def versioned_worker(text: str, version: str) -> str:
    """The service worker's source with its cache version set: a new version (new page files) makes browsers
    install the worker again and store the new files, not keep answering the old ones."""
    if WORKER_VERSION_LINE not in text:
        raise ValueError(f"{WORKER} has no line {WORKER_VERSION_LINE!r} to write the version into")
    return text.replace(WORKER_VERSION_LINE, f'const VERSION = "{version}";')


class HeldFiles:
    """The page's files, read into memory at start-up (a few small files): answered without a thread or a
    file read, so that clients fetching them many times over (and not reading the answers) cost the server
    little, and nothing done to the folder afterwards changes what is served. ``/`` and a folder answer its
    ``index.html``, as do the page's own addresses (:data:`PAGE_PATHS`); no directory listing, nothing outside
    the folder; GET and HEAD only (405); an ``ETag`` that ``If-None-Match`` can match (304). The service
    worker is answered with its cache version set to a hash of the other files (:func:`versioned_worker`).

    Text files are also held gzip-compressed and sent so to a browser that accepts it (``Vary: Accept-Encoding``;
    the compressed answer has its own ETag). Only these files are compressed, never an API answer: those may carry
    a seat's secret beside text the request chose (BREACH). Their names carry no version, so a browser keeps them
    but asks again each time (``Cache-Control: no-cache``: a 304 while unchanged); the service worker too, so
    that a new version of the page is found at once."""

    LIMIT = 16 * 1024 * 1024  # bytes of page files held at most (the page is about 70 KB)
    COMPRESSED = ("text/", "application/javascript", "application/json", "application/manifest+json", "image/svg")

    def __init__(self, directory: Path) -> None:
        self.files: dict[str, tuple[bytes, list[tuple[bytes, bytes]]]] = {}
        self.gzipped: dict[str, tuple[bytes, list[tuple[bytes, bytes]]]] = {}
        held = 0
        paths = [p for p in sorted(directory.rglob("*")) if p.is_file() and not p.is_symlink()]
        shell = hashlib.sha256()
        bodies = {}
        for path in paths:
            bodies[path] = path.read_bytes()
            if path.name != WORKER:
                shell.update(path.relative_to(directory).as_posix().encode() + b"\0" + bodies[path])
        for path in paths:
            body = bodies[path]
            if path.relative_to(directory).as_posix() == WORKER:
                body = versioned_worker(body.decode(), "serve-" + shell.hexdigest()[:16]).encode()
            held += len(body)
            if held > self.LIMIT:
                raise ValueError(f"the page's files in {directory} are larger than {self.LIMIT:,} bytes")
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind == "application/javascript":
                kind += "; charset=utf-8"
            mtime = path.stat().st_mtime
            digest = hashlib.md5(body, usedforsecurity=False).hexdigest()
            common = [
                (b"content-type", kind.encode()),
                (b"last-modified", formatdate(mtime, usegmt=True).encode()),
                (b"cache-control", b"no-cache"),
            ]
            name = path.relative_to(directory).as_posix()
            packed = gzip.compress(body, compresslevel=9, mtime=0)
            if kind.startswith(self.COMPRESSED) and len(packed) < len(body):
                vary = [(b"vary", b"Accept-Encoding")]
                self.gzipped[name] = (packed, [(b"etag", f'"{digest}-gz"'.encode()), *common, *vary,
                                               (b"content-encoding", b"gzip")])  # fmt: skip
                common += vary
            self.files[name] = (body, [(b"etag", f'"{digest}"'.encode()), *common])

    async def __call__(self, scope, receive, send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            raise HTTPException(405)
        name = scope["path"].lstrip("/")
        if name == "" or name.endswith("/"):
            name += "index.html"
        elif PAGE_PATHS.fullmatch(name):
            name = "index.html"
        held = self.files.get(name)
        if held is None:
            raise HTTPException(404)
        request = {k.lower(): v for k, v in scope.get("headers", ())}
        if name in self.gzipped and _accepts_gzip(request.get(b"accept-encoding", b"")):
            held = self.gzipped[name]
        body, headers = held
        status = 200
        tags = [v for k, v in scope.get("headers", ()) if k.lower() == b"if-none-match"]
        if tags and any(t.strip() in (headers[0][1], b"*") for v in tags for t in v.split(b",")):
            status, body = 304, b""
        length = [] if status == 304 else [(b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": [*headers, *length]})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def _accepts_gzip(header: bytes) -> bool:
    """Whether an ``Accept-Encoding`` header accepts gzip (named, or ``*``, with no ``q=0``)."""
    for part in header.lower().split(b","):
        coding, _, params = part.strip().partition(b";")
        if coding.strip() in (b"gzip", b"*"):
            q = params.strip()
            return not (q.startswith(b"q=") and q[2:].strip() in (b"0", b"0.0", b"0.00", b"0.000"))
    return False


class Pages:
    """The page's files (:class:`HeldFiles`). An ``/api/`` path no route took is a JSON error: 405 where a
    route has that path under another method, else 404. ``routes``: the API's routes (APIRoute objects, as
    their routers hold them)."""

    def __init__(self, files: HeldFiles | None, routes: list) -> None:
        self.files = files
        self.routes = routes

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if path == "/api" or path.startswith("/api/"):
            allowed = set()
            for route in self.routes:
                if isinstance(route, APIRoute) and route.matches(scope)[0] is Match.PARTIAL:
                    allowed |= route.methods | ({"HEAD"} if "GET" in route.methods else set())
            if allowed:
                raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
            raise HTTPException(404)
        if self.files is None:  # no page installed: the API alone
            raise HTTPException(404)
        await self.files(scope, receive, send)  # whole files only: the page's files are small
