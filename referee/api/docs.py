"""``GET /docs``: a human-readable API reference rendered on the server from the same OpenAPI document
as ``/openapi.json``. Plain HTML and CSS (``static/docs.css``: no inline style, for the CSP), no JavaScript
and no CDN, so it works offline (flask-smorest's Swagger UI / ReDoc pages load their scripts from CDNs, so
they are not used)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, render_template_string, request

bp = Blueprint("docs", __name__, static_folder="static", static_url_path="/docs/static")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ info.title }} API {{ info.version }}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{{ url_for('docs.static', filename='docs.css') }}">
<link rel="icon" href="{{ url_for('docs.static', filename='favicon.svg') }}" type="image/svg+xml">
</head><body>
<h1>{{ info.title }} API <small>{{ info.version }}</small></h1>
<p>Machine-readable: <a href="{{ json_url }}">{{ json_url }}</a> (OpenAPI {{ spec.openapi }}).
Errors are <code>{"error": {"code", "message", "rule"?, "details"?}}</code>.</p>
<nav>{% for tag in tags %}<a href="#tag-{{ tag.name }}">{{ tag.name }}</a>{% endfor %}
<a href="#schemas">schemas</a></nav>
{% for tag in tags %}
<h2 id="tag-{{ tag.name }}">{{ tag.name }}</h2><p>{{ tag.description or "" }}</p>
{% for op in tag.operations %}
<h3 id="{{ op.id }}"><span class="m {{ op.method }}">{{ op.method|upper }}</span> <code>{{ op.path }}</code></h3>
<p><b>{{ op.summary or "" }}</b></p>{% if op.description %}<p>{{ op.description }}</p>{% endif %}
{% if op.parameters %}<table><tr><th>parameter</th><th>in</th><th>type</th><th>description</th></tr>
{% for p in op.parameters %}<tr><td><code>{{ p.name }}</code>{% if p.required %} <span class="req">*</span>{% endif %}
</td><td>{{ p["in"] }}</td><td>{{ p.type }}</td><td>{{ p.description or "" }}</td></tr>{% endfor %}</table>{% endif %}
{% if op.body %}<p>Request body: <a href="#schema-{{ op.body }}">{{ op.body }}</a></p>{% endif %}
<table><tr><th>status</th><th>meaning</th><th>body</th></tr>
{% for r in op.responses %}<tr><td>{{ r.status }}</td><td>{{ r.description }}</td>
<td>{% if r.schema %}<a href="#schema-{{ r.schema }}">{{ r.schema }}</a>{% endif %}</td></tr>{% endfor %}</table>
{% endfor %}{% endfor %}
<h2 id="schemas">schemas</h2>
{% for name, fields in schemas %}<h3 id="schema-{{ name }}">{{ name }}</h3>
<table><tr><th>field</th><th>type</th><th>description</th></tr>
{% for f in fields %}<tr><td><code>{{ f.name }}</code>{% if f.required %} <span class="req">*</span>{% endif %}</td>
<td>{% if f.ref %}<a href="#schema-{{ f.ref }}">{{ f.type }}</a>{% else %}{{ f.type }}{% endif %}</td>
<td>{{ f.description }}</td></tr>{% endfor %}</table>{% endfor %}
</body></html>
"""


def _ref_name(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref") or (node.get("items") or {}).get("$ref")
    if not ref and node.get("allOf"):
        ref = node["allOf"][0].get("$ref")
    return ref.rsplit("/", 1)[-1] if ref else None


def _type_of(node: dict[str, Any]) -> str:
    name = _ref_name(node)
    if node.get("type") == "array":
        return f"array of {name or (node.get('items') or {}).get('type', 'any')}"
    if name:
        return name
    kind = node.get("type", "any")
    if node.get("nullable"):
        kind += " or null"
    return kind


def _describe(node: dict[str, Any]) -> str:
    parts = [node.get("description", "")]
    for key in ("enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems"):
        if key in node:
            parts.append(f"{key}: {node[key]}")
    return "; ".join(p for p in parts if p)


def page_context(spec: dict[str, Any], json_url: str) -> dict[str, Any]:
    tags: dict[str, dict[str, Any]] = {t["name"]: {**t, "operations": []} for t in spec.get("tags", [])}
    for path, item in spec.get("paths", {}).items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            params = []
            for p in [*item.get("parameters", []), *op.get("parameters", [])]:
                schema = p.get("schema", {})
                params.append({"name": p.get("name"), "in": p.get("in"), "required": p.get("required"),
                               "type": _type_of(schema), "description": p.get("description") or _describe(schema)})
            body = None
            content = (op.get("requestBody") or {}).get("content", {})
            if content:
                body = _ref_name(next(iter(content.values())).get("schema", {}))
            responses = []
            for status, resp in sorted(op.get("responses", {}).items()):
                schema = None
                if resp.get("content"):
                    schema = _ref_name(next(iter(resp["content"].values())).get("schema", {}))
                responses.append({"status": status, "description": resp.get("description", ""), "schema": schema})
            summary, _, description = (op.get("summary") or "", None, op.get("description") or "")
            entry = {"method": method, "path": path, "id": f"{method}-{path}", "summary": summary,
                     "description": description, "parameters": params, "body": body, "responses": responses}
            for tag in op.get("tags", ["other"]):
                tags.setdefault(tag, {"name": tag, "operations": []})["operations"].append(entry)
    schemas = []
    for name, schema in sorted(spec.get("components", {}).get("schemas", {}).items()):
        required = set(schema.get("required", []))
        fields = [{"name": field, "required": field in required, "type": _type_of(node), "ref": _ref_name(node),
                   "description": _describe(node)} for field, node in schema.get("properties", {}).items()]
        schemas.append((name, fields))
    return {"spec": spec, "info": spec.get("info", {}), "tags": list(tags.values()), "schemas": schemas,
            "json_url": json_url}


@bp.get("/docs")
def docs_page() -> str:
    api = current_app.extensions["referee.api"]
    return render_template_string(_PAGE, **page_context(api.spec.to_dict(), request.script_root + "/openapi.json"))
