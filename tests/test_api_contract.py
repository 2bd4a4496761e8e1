"""The API does what its OpenAPI document (``/openapi.json``) says, and the document says what the API does:
Schemathesis runs in process against the application (its examples, coverage and fuzzing phases, a bounded
number of examples, every check), and fails the test on any failure. Where the server refuses a request the
document allows, the document is wrong, and the other way round; the only refusals of schema-valid requests
allowed (422) are the operations whose bodies have rules no schema can say: a sheet's points, a game's moves,
a save file's game, a link's host, a player's name's invisible characters. The issue's own cases are kept as
plain tests below, each one request."""

from __future__ import annotations

import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema

# What a schema cannot say: 422 may answer a schema-valid request of these operations (and only of these).
SEMANTIC = {
    "/api/advise": "a sheet's points must be ones the box can score; a sheet that a game reaches",
    "/api/games": "a save's game, a players text, names that look alike",
    "/api/games/resume": "a save's game",
    "/api/review": "a save's game",
    "/api/games/{game_id}/roll": "the dice a coach game's move takes",
    "/api/games/{game_id}/score": "a box of the rule set's",
    "/api/qr": "a link with a host",
    "/api/history": "a player's name without invisible characters",
    "/api/players/{name}": "a player's name without invisible characters",
}
EXAMPLES = 8  # per operation and phase: about 800 requests, 15 s


def _config() -> SchemathesisConfig:
    semantic = [200, 201, 204, 400, 403, 404, 409, 422, 503]
    return SchemathesisConfig.from_dict(
        {
            "seed": 37,
            "generation": {"max-examples": EXAMPLES},
            "phases": {"stateful": {"enabled": False}},
            "max-stream-events": 2,
            "checks": {"negative_data_rejection": {"expected-statuses": [400, 404, 405, 408, 409, 413, 422]}},
            "operations": [
                {"include-path": path, "checks": {"positive_data_acceptance": {"expected-statuses": semantic}}}
                for path in SEMANTIC
            ],
        }
    )


def test_schemathesis_finds_no_disagreement_between_the_api_and_its_document(app):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=_config())
    found: dict[tuple[str, str], str] = {}
    errors = []
    cases = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            cases += len(recorder.cases)
            for case_id, checks in recorder.checks.items():
                for check in checks:
                    if check.failure_info is None:
                        continue
                    failure, case = check.failure_info.failure, recorder.cases[case_id].value
                    body = repr(case.body)[:160] if case.body is not schemathesis.core.NOT_SET else "none"
                    found.setdefault(
                        (recorder.label, failure.title),
                        f"{failure.message[:240]} | {case.method} {case.formatted_path} query={case.query} body={body}",
                    )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            errors.append(str(getattr(event, "info", event))[:500])
    assert not errors, errors
    assert cases > 300  # every operation was tried
    assert not found, "\n".join(f"{label}: {title}: {what}" for (label, title), what in found.items())


def test_an_empty_rule_set_or_language_is_refused_and_the_document_says_so(client):
    spec = client.get("/openapi.json").json()
    for path, name, status in [("/api/history", "rules", 422), ("/api/players", "rules", 422),
                               ("/api/messages", "lang", 422)]:  # fmt: skip
        params = {p["name"]: p for p in spec["paths"][path]["get"]["parameters"]}
        assert "" not in params[name]["schema"]["enum"] and params[name]["schema"]["type"] == "string"
        assert client.get(path, params={name: ""}).status_code == status
    advise = spec["components"]["schemas"]["AdviseIn"]
    assert advise["properties"]["rules"]["anyOf"][0]["enum"] == ["penta"]
    r = client.post("/api/advise", json={"dice": [1, 1, 3, 4, 6], "rules": ""})
    assert r.status_code == 422 and "unknown rule set" in r.json()["error"]


def test_unknown_fields_are_refused_and_every_body_says_so(client):
    spec = client.get("/openapi.json").json()
    for name in ("AdviseIn", "BatchIn", "NewGameIn", "PlayerIn", "RollIn", "ScoreIn", "VersionIn", "QrIn"):
        assert spec["components"]["schemas"][name]["additionalProperties"] is False, name
    for path in ("/api/review", "/api/games/resume"):
        body = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body["additionalProperties"] is False and {"format", "rules", "players"} <= set(body["required"])
        r = client.post(path, json={})
        assert r.status_code == 422, r.text
    assert client.post("/api/advise", json={"dice": [1, 1, 3, 4, 6], "colour": 1}).status_code == 422
    assert client.post("/api/games", json={"players": "Ana", "colour": 1}).status_code == 422


def test_a_null_save_is_no_save(client):
    r = client.post("/api/games", json={"players": "Ana,cpu", "save": None, "seed": 4})
    assert r.status_code == 201, r.text
    assert [p["name"] for p in r.json()["players"]] == ["Ana", "cpu"]


def test_a_batch_item_that_is_not_a_situation_is_answered_in_its_place(client):
    spec = client.get("/openapi.json").json()
    items = spec["components"]["schemas"]["BatchIn"]["properties"]["items"]
    assert items["items"] == {} and "error" in items["description"]
    r = client.post("/api/advise/batch", json={"items": [[None, None], {"dice": [1, 1, 3, 4, 6]}]})
    assert r.status_code == 200
    first, second = r.json()["results"]
    assert first["line"] == 1 and "error" in first and second["best"]


def test_options_answers_the_methods_of_a_path_and_405_lists_them(client):
    for path, allowed in [
        ("/api/games", "POST, OPTIONS"),
        ("/api/games/resume", "POST, OPTIONS"),
        ("/api/games/abc", "GET, HEAD, OPTIONS"),
        ("/api/games/abc/roll", "POST, OPTIONS"),
        ("/api/health", "GET, HEAD, OPTIONS"),
    ]:
        r = client.options(path)
        assert r.status_code == 204 and r.headers["allow"] == allowed and r.content == b"", path
        assert r.headers["x-content-type-options"] == "nosniff"
    r = client.delete("/api/games/abc/roll")
    assert r.status_code == 405 and r.headers["allow"] == "POST, OPTIONS" and "allowed: POST" in r.json()["error"]
    r = client.get("/api/games/resume")  # the path of its own resource, not a game called "resume"
    assert r.status_code == 405 and r.headers["allow"] == "POST, OPTIONS"
    assert client.options("/api/nothing").status_code == 404


def test_the_events_are_documented_as_an_event_stream_and_refusals_as_json(client):
    spec = client.get("/openapi.json").json()
    responses = spec["paths"]["/api/games/{game_id}/events"]["get"]["responses"]
    assert list(responses["200"]["content"]) == ["text/event-stream"]
    for status in ("404", "422", "500", "503"):
        assert list(responses[status]["content"]) == ["application/json"], status
    assert "404" in spec["paths"]["/api/players/{name}"]["get"]["responses"]
    assert client.get("/api/players/Nobody").status_code == 404
