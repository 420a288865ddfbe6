"""The OpenAPI document and every ``--help`` text equal the record in this folder, byte for byte.

A deliberate change of the surface re-records it (``python tests/surface/snapshot.py --write``) and the
diff of the two files shows the reviewer what a client or a user will see change."""

from __future__ import annotations

import difflib

from snapshot import CLI_HELP, OPENAPI, cli_help_text, document_text, openapi_text


def _same(recorded: str, current: str, name: str) -> None:
    diff = "".join(difflib.unified_diff(recorded.splitlines(True), current.splitlines(True), name, "current"))
    assert not diff, f"the surface changed (re-record with snapshot.py --write if deliberate):\n{diff[:4000]}"


def test_openapi_document_is_as_recorded():
    _same(OPENAPI.read_text(), openapi_text(), "openapi.json")


def test_the_document_written_at_its_first_read_is_the_same_from_any_number_of_threads():
    """``create_app`` writes none of the OpenAPI document (``RefereeApi``: the routes at once, their documentation,
    flask-smorest's default responses and headers at the first read of ``api.spec``). Eight threads that read it
    at once on a fresh app all get the recorded document: one writes it while the others wait."""
    import tempfile
    import threading

    from referee.app import create_app

    with tempfile.TemporaryDirectory() as var:
        app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": var, "TESTING": True})
        api = app.extensions["referee.api"]
        assert len(api._undocumented) > 10  # queued, not written: the default responses, headers, each blueprint
        start, texts = threading.Barrier(8), []

        def read() -> None:
            start.wait()
            texts.append(document_text(api.spec.to_dict()))

        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert len(texts) == 8 and set(texts) == {OPENAPI.read_text()}


def test_every_help_text_is_as_recorded():
    _same(CLI_HELP.read_text(), cli_help_text(), "cli-help.txt")
