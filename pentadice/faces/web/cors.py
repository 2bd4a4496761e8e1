"""Another site's page calling this server (``serve --allow-origin ORIGIN``): Cross-Origin Resource Sharing for the
routes an app elsewhere needs (the advice, the rule sets, the offline app's tables), for exactly the origins given,
through Starlette's CORS middleware. Every other route, and every other origin, stays as strict as without it: the
guard (:mod:`pentadice.faces.web.guard`) refuses what another site's page sends there."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.middleware.cors import CORSMiddleware

# The paths another site's page may call once its origin is allowed (prefixes): the advice (single and batch),
# the rule sets, and the table files the JavaScript advisor loads. Games, history and health stay this page's.
SHARED_PATHS = ("/api/advise", "/api/rules", "/app-tables/")
MAX_AGE = 600  # seconds a browser may keep a preflight's answer


def origin(text: str) -> str:
    """An origin as ``--allow-origin`` takes it: ``scheme://host[:port]``, http or https, nothing after it (the
    form a browser sends in ``Origin``, lower case); ValueError naming what is wrong otherwise."""
    given = text.strip()
    try:
        parts = urlsplit(given)
        port = parts.port
    except ValueError as e:
        raise ValueError(f"{given[:80]!r} is not an origin ({e}): give scheme://host[:port]") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{given[:80]!r} is not an origin: give http:// or https:// and a host, e.g. https://my.app")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{given[:80]!r} is not an origin: give scheme://host[:port] alone, no path, query or user")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def shared_path(path: str) -> bool:
    """Whether another site's page may call ``path`` once its origin is allowed."""
    return path.startswith(SHARED_PATHS)


class SharedRoutesCORS(CORSMiddleware):
    """Starlette's CORS for :data:`SHARED_PATHS` and ``origins`` alone: preflights answered, answers marked for
    the browser; any other path passes through untouched."""

    def __init__(self, app, origins: frozenset[str]) -> None:
        super().__init__(
            app,
            allow_origins=sorted(origins),
            allow_methods=["GET", "HEAD", "POST"],
            allow_headers=["content-type"],
            max_age=MAX_AGE,
        )

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not shared_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
