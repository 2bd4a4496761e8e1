"""MkDocs hook: the site's pages written from files of the repository, so that they cannot drift from them.

- reference/http.md, from the API's own description, docs/reference/openapi.json (what `pentadice serve` publishes
  at /openapi.json; tools/write_openapi.py writes it and a test keeps it equal to the server's): every route with its
  parameters, body, example and answers, then every schema with its fields.
- changelog.md, from CHANGELOG.md at the top of the repository (its links to docs/ pages made relative to the site).
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.structure.files import File, Files

DOCS = Path(__file__).resolve().parent.parent
SOURCE = DOCS / "reference" / "openapi.json"
PAGE = "reference/http.md"
CHANGELOG = DOCS.parent / "CHANGELOG.md"
METHODS = ("get", "post", "put", "patch", "delete")


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, PAGE, content=render(json.loads(SOURCE.read_text(encoding="utf-8")))))
    changes = CHANGELOG.read_text(encoding="utf-8").replace("](docs/", "](")
    files.append(File.generated(config, "changelog.md", content=changes))
    return files


def render(spec: dict) -> str:
    """The reference page's Markdown."""
    info = spec["info"]
    out = [
        "# HTTP reference",
        "",
        f"{info.get('summary', '')} Version {info['version']}, OpenAPI {spec['openapi']}. This page is written from",
        "the description the server publishes at `/openapi.json` (a copy, [openapi.json](openapi.json), sits beside",
        "this page). How to start the server and call it: [HTTP API](../api.md).",
        "",
        "Every error answer is `{\"error\": \"...\"}` ([ErrorOut](#errorout)).",
        "",
    ]
    for path, operations in spec["paths"].items():
        for method in METHODS:
            if method in operations:
                out += _operation(method, path, operations[method])
    out += ["## Schemas", ""]
    for name, schema in spec["components"]["schemas"].items():
        out += _schema(name, schema)
    return "\n".join(out) + "\n"


def _operation(method: str, path: str, op: dict) -> list[str]:
    out = [f"## {method.upper()} `{path}`", ""]
    if op.get("description"):
        out += [_text(op["description"]), ""]
    params = op.get("parameters", [])
    if params:
        out += ["| parameter | in | type | required | description |", "| --- | --- | --- | --- | --- |"]
        for p in params:
            desc = _cell(p.get("description") or p.get("schema", {}).get("description", ""))
            out.append(f"| `{p['name']}` | {p['in']} | {_type(p.get('schema', {}))} | "
                       f"{'yes' if p.get('required') else 'no'} | {desc} |")
        out.append("")
    body = op.get("requestBody", {}).get("content", {}).get("application/json")
    if body:
        out += [f"Body: {_type(body.get('schema', {}))}.", ""]
        if "example" in body:
            out += ["```json", json.dumps(body["example"]), "```", ""]
    out += ["| answer | meaning | body |", "| --- | --- | --- |"]
    for code, answer in op.get("responses", {}).items():
        content = answer.get("content", {})
        kinds = [f"{_type(c['schema'])}" if "schema" in c else f"`{k}`" for k, c in content.items()]
        out.append(f"| {code} | {_cell(answer.get('description', ''))} | {', '.join(kinds)} |")
    return [*out, ""]


def _schema(name: str, schema: dict) -> list[str]:
    out = [f"### {name}", ""]
    if schema.get("description"):
        out += [_text(schema["description"]), ""]
    props = schema.get("properties", {})
    if props:
        required = set(schema.get("required", ()))
        out += ["| field | type | required | description |", "| --- | --- | --- | --- |"]
        for field, sub in props.items():
            out.append(f"| `{field}` | {_type(sub)} | {'yes' if field in required else 'no'} | "
                       f"{_cell(sub.get('description', ''))} |")
        out.append("")
    elif schema.get("enum"):
        out += ["One of " + ", ".join(f"`{v}`" for v in schema["enum"]) + ".", ""]
    return out


def _type(schema: dict) -> str:
    """A schema's type in a few words, with links to named schemas."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return " or ".join(_type(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type(schema['additionalProperties'])}"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    bounds = [f"{k} {schema[k]}" for k in ("minimum", "maximum") if k in schema]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _text(text: str) -> str:
    """Docstring text as Markdown: reST's double backticks become single ones."""
    return text.replace("``", "`")


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|").replace("\n", " ")
