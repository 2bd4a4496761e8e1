"""The page's own files as a browser fetches them: gzip-compressed where the browser accepts it (and only those
files, never an API answer, which may carry a seat's secret beside reflected text), each variant with its own ETag
that a revalidation matches (304), and kept by the browser but asked again each time (`no-cache`), the service
worker included.

Cost: one application in process (the page's files read once); no server."""

from __future__ import annotations

import gzip

import pytest

NAMES = ("/", "/app.js", "/style.css", "/sw.js", "/advisor.js")


@pytest.mark.parametrize("path", NAMES)
def test_text_files_are_compressed_for_a_browser_that_accepts_gzip(client, path):
    plain = client.get(path, headers={"Accept-Encoding": "identity"})
    packed = client.get(path, headers={"Accept-Encoding": "gzip, deflate, br"})
    assert plain.status_code == packed.status_code == 200
    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
    assert int(packed.headers["content-length"]) < int(plain.headers["content-length"]) / 2
    assert packed.content == plain.content  # the client undid the gzip: the same bytes
    assert packed.headers["etag"] != plain.headers["etag"]


@pytest.mark.parametrize("path", NAMES)
def test_each_variant_revalidates_with_its_own_etag(client, path):
    for encoding in ("identity", "gzip"):
        first = client.get(path, headers={"Accept-Encoding": encoding})
        again = client.get(path, headers={"Accept-Encoding": encoding, "If-None-Match": first.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        assert first.headers["cache-control"] == "no-cache"


def test_a_refused_gzip_is_not_sent(client):
    answer = client.get("/app.js", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "content-encoding" not in answer.headers


def test_api_answers_are_never_compressed(client):
    """BREACH: an answer holding a secret beside text the request chose must not be compressed."""
    answer = client.post("/api/games", json={"players": "Ana,cpu", "seed": 1}, headers={"Accept-Encoding": "gzip"})
    assert answer.status_code in (200, 201)
    assert "content-encoding" not in answer.headers
    health = client.get("/api/health", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in health.headers


def test_the_compressed_bytes_are_gzip_of_the_file():
    from pentadice.faces.web.page import STATIC, HeldFiles

    held = HeldFiles(STATIC)
    for name, (packed, headers) in held.gzipped.items():
        assert gzip.decompress(packed) == held.files[name][0], name
        assert (b"content-encoding", b"gzip") in headers
