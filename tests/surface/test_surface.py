"""The OpenAPI document and every ``--help`` text equal the record in this folder, byte for byte.

A deliberate change of the surface re-records it (``python tests/surface/snapshot.py --write``) and the
diff of the two files shows the reviewer what a client or a user will see change."""

from __future__ import annotations

import difflib

from snapshot import CLI_HELP, OPENAPI, cli_help_text, openapi_text


def _same(recorded: str, current: str, name: str) -> None:
    diff = "".join(difflib.unified_diff(recorded.splitlines(True), current.splitlines(True), name, "current"))
    assert not diff, f"the surface changed (re-record with snapshot.py --write if deliberate):\n{diff[:4000]}"


def test_openapi_document_is_as_recorded():
    _same(OPENAPI.read_text(), openapi_text(), "openapi.json")


def test_every_help_text_is_as_recorded():
    _same(CLI_HELP.read_text(), cli_help_text(), "cli-help.txt")
