"""The guard before the application: the security headers on every answer, a ``Host`` not served refused
(DNS rebinding), the methods of an API path (OPTIONS answered with them, another method refused with 405 and
them), a request another site's page sent refused, and HEAD on an API path answered as its GET."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from fastapi.responses import Response
from fastapi.routing import APIRoute
from starlette.routing import Match

from pentadice.faces.web.cors import shared_path
from pentadice.faces.web.responses import NO_STORE, SECURITY_HEADERS, answer

HEAD_SCOPE_KEY = "pentadice.head"  # set in the scope of a HEAD answered as its GET (a stream then sends none)


class SecurityHeaders:
    """Every answer says: scripts, styles and images from this server only, no framing, no sniffing of
    content types, no referrer; API answers are not cached. Before the application: a request another site's
    page makes the browser send (an ``Origin`` not this server's, or ``Sec-Fetch-Site: cross-site``) is
    refused, but GET and HEAD (a page elsewhere could otherwise fill the games held and push a player's game
    out) and a shared route called from an origin ``origins`` holds (``serve --allow-origin``); HEAD on an API
    path a GET route serves is that GET, without the body. First of all, where ``hosts`` is given, a request
    whose ``Host`` is not served is refused (421: a page elsewhere that a DNS rebinding pointed at this server),
    as is one with no ``Host`` or two (400). ``routes``: the API's routes (APIRoute objects, as their routers
    hold them)."""

    def __init__(
        self, app, routes: list, hosts: frozenset[str] | None = None, origins: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.routes = routes
        self.hosts = hosts
        self.origins = origins  # other sites whose pages may call the shared routes (pentadice.faces.web.cors)
        self._allowed_held: dict[str, list[str] | None] = {}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")
        extra = [*SECURITY_HEADERS, NO_STORE] if api else SECURITY_HEADERS

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        refused = _host_refusal(scope, self.hosts) if self.hosts is not None else None
        if refused is not None:
            await answer({"error": refused[1]}, refused[0], {"connection": "close"})(scope, receive, send_with_headers)
            return
        allowed = self._allowed(scope["path"]) if api else None
        if allowed is not None and scope["method"] == "OPTIONS":  # what a preflight will build on
            await Response(status_code=204, headers={"allow": ", ".join(allowed)})(scope, receive, send_with_headers)
            return
        if allowed is not None and scope["method"] not in allowed:
            shown, path = scope["method"][:20], scope["path"][:200]
            refusal = answer({"error": f"{shown} is not allowed on {path}; allowed: {', '.join(allowed)}"}, 405,
                             {"allow": ", ".join(allowed)})  # fmt: skip
            await refusal(scope, receive, send_with_headers)
            return
        if scope["method"] not in ("GET", "HEAD") and _cross_site(scope) and not self._shared(scope):
            refusal = answer({"error": "a request from another site's page is refused: the API serves this page"}, 403)
            await refusal(scope, receive, send_with_headers)
            return
        if api and scope["method"] == "HEAD" and self._serves_get(scope):
            scope = {**scope, "method": "GET", HEAD_SCOPE_KEY: True}
            respond = send_with_headers

            async def send_with_headers(message) -> None:  # the headers of the GET, no body
                if message["type"] == "http.response.body":
                    message = {**message, "body": b""}
                await respond(message)

        await self.app(scope, receive, send_with_headers)

    def _allowed(self, path: str) -> list[str] | None:
        """:func:`allowed_methods` of ``path``; those of up to :data:`ALLOWED_HELD` short paths held (a few
        microseconds each otherwise, on every API request; at most about 330 KB held)."""
        held = self._allowed_held
        found = held.get(path, False)
        if found is False:
            found = allowed_methods(self.routes, path)
            if len(path) <= 80:  # a game's paths are about 40 characters; longer ones are not held
                if len(held) >= ALLOWED_HELD:
                    held.clear()
                held[path] = found
        return found

    def _shared(self, scope) -> bool:
        """Whether the request is another site's page calling a shared route from an origin ``--allow-origin``
        allowed (:mod:`pentadice.faces.web.cors`)."""
        if not self.origins or not shared_path(scope["path"]):
            return False
        sent = [v for k, v in scope.get("headers", ()) if k.lower() == b"origin"]
        return len(sent) == 1 and sent[0].decode("latin-1") in self.origins

    def _serves_get(self, scope) -> bool:
        as_get = {**scope, "method": "GET"}
        return any(isinstance(r, APIRoute) and r.matches(as_get)[0] is Match.FULL for r in self.routes)


METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ALLOWED_HELD = 4096  # paths whose methods are held (a game's paths among them: cleared when full)


def allowed_methods(routes: list, path: str) -> list[str] | None:
    """The methods the API serves on ``path`` (HEAD with GET, OPTIONS on every path), in a fixed order; None if
    no route has that path. A path that is a route's own, without parameters (``/api/games/resume``), is that
    resource alone: a route whose path has a parameter (``/api/games/{game_id}``) does not count there."""
    api = [r for r in routes if isinstance(r, APIRoute)]
    own = [r for r in api if r.path == path and not r.param_convertors]
    matching = own or [r for r in api if r.path_regex.match(path)]
    if not matching:
        return None
    methods = {"OPTIONS"}.union(*(r.methods for r in matching))
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods, key=lambda m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER), m))


def _host_refusal(scope, hosts: frozenset[str]) -> tuple[int, str] | None:
    """Why a request's ``Host`` is refused (status, message), or None: one ``Host`` (none only in HTTP/1.0),
    naming one of ``hosts``, a loopback address or the address the request arrived at, with any port."""
    given = [v for k, v in scope.get("headers", ()) if k.lower() == b"host"]
    if len(given) > 1:
        return 400, "the request has two Host headers"
    if not given:
        return None if scope.get("http_version") == "1.0" else (400, "the request has no Host header")
    host = given[0].decode("latin-1").strip().lower()
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not name or (port and not port.isdigit()):
        name = host
    name = name.rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name in hosts or name.endswith(".localhost"):
        return None
    try:
        address = ipaddress.ip_address(name)
        if address.is_loopback or name == str((scope.get("server") or ("",))[0]).lower():
            return None
    except ValueError:
        pass
    shown = host if len(host) <= 60 else host[:57] + "..."
    return 421, f"this server does not serve the host {shown!r} (`pentadice serve --allow-host NAME` adds one)"


def _cross_site(scope) -> bool:
    """Whether a browser says the request comes from another site's page: ``Sec-Fetch-Site: cross-site``, or
    an ``Origin`` whose host and port are not the ``Host`` asked (``null`` included). Clients that are not
    browsers send neither."""
    headers = {k.lower(): v for k, v in scope.get("headers", ())}
    if headers.get(b"sec-fetch-site") == b"cross-site":
        return True
    origin = headers.get(b"origin")
    if origin is None:
        return False
    try:
        parts = urlsplit(origin.decode("latin-1"))
        port = parts.port
    except ValueError:
        return True
    default = {"http": 80, "https": 443}.get(parts.scheme)
    where = (parts.hostname or "", port or default)
    host = headers.get(b"host", b"").decode("latin-1")
    try:
        asked = urlsplit(f"{parts.scheme}://{host}")
        return not parts.hostname or where != (asked.hostname or "", asked.port or default)
    except ValueError:
        return True
