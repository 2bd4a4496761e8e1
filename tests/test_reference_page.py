"""The server's HTTP reference at /docs: HTML written from its own /openapi.json (every route and schema), with no
script and nothing fetched from another site, so that it works offline; its stylesheet is one of the page's files.

Cost: one application in process (shared by the module); no server."""

from __future__ import annotations

import re


def test_docs_lists_every_route_and_schema_of_openapi(client):
    answer = client.get("/docs")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    spec = client.get("/openapi.json").json()
    page = answer.text
    for path, operations in spec["paths"].items():
        for method in operations:
            assert f"{method.upper()} <code>{path}</code>" in page, (method, path)
    for name in spec["components"]["schemas"]:
        assert f">{name}</h3>" in page, name


def test_docs_works_offline(client):
    page = client.get("/docs").text
    assert "<script" not in page
    external = re.findall(r'(?:src|href)="(https?:)?//', page)
    assert not external, external
    style = client.get("/reference.css")
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert '<link rel="stylesheet" href="/reference.css">' in page


def test_docs_is_not_part_of_the_api_description(client):
    assert "/docs" not in client.get("/openapi.json").json()["paths"]
