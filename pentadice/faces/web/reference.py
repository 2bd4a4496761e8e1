"""The HTTP API's reference, written from its own OpenAPI description: every route with its parameters, body, example
and answers, then every schema with its fields. The server answers it at ``/docs`` (HTML, no script, nothing fetched
from elsewhere: it works offline), and the documentation site renders the same Markdown as its HTTP reference page
(docs/hooks/generated_pages.py), so neither can drift from the routes."""

from __future__ import annotations

import html
import json

METHODS = ("get", "post", "put", "patch", "delete")
STYLESHEET = "/reference.css"  # in the page's files (static/): the page's CSP allows no inline style


def html_page(spec: dict) -> str:
    """The reference as a whole HTML page (Python-Markdown renders it: tables, heading anchors)."""
    import markdown

    text = render(spec, "The JSON description itself: [/openapi.json](/openapi.json).")
    body = markdown.markdown(text, extensions=["tables", "toc", "fenced_code"], output_format="html")
    title = html.escape(f"{spec['info']['title']} HTTP reference")
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="stylesheet" href="{STYLESHEET}"></head>\n<body><main>\n{body}\n</main></body></html>\n'
    )


def render(spec: dict, intro: str = "") -> str:
    """The reference's Markdown (``intro``: a sentence or two after the first line, say where to read more)."""
    info = spec["info"]
    out = [
        "# HTTP reference",
        "",
        f"{info.get('summary', '')} Version {info['version']}, OpenAPI {spec['openapi']}. This page is written from",
        f"the description the server publishes at `/openapi.json`. {intro}",
        "",
        "The rule sets a body's `rules` may name are those the server serves (`GET /api/rules` lists them); a",
        "query's `rules` may name any rule set pentadice knows.",
        "",
        'Every error answer is `{"error": "..."}` ([ErrorOut](#errorout)).',
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
            out.append(
                f"| `{p['name']}` | {p['in']} | {_type(p.get('schema', {}))} | "
                f"{'yes' if p.get('required') else 'no'} | {desc} |"
            )
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
            out.append(
                f"| `{field}` | {_type(sub)} | {'yes' if field in required else 'no'} | "
                f"{_cell(sub.get('description', ''))} |"
            )
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
