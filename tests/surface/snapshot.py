"""The referee's public surface as text: the OpenAPI document and every command's ``--help``.

``python tests/surface/snapshot.py --write`` records it into this folder; ``test_surface.py`` holds the
code against the record, so a change of the surface is always a deliberate, reviewed change of these
files (issue 27: moving code must not change a byte of either).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click
from click.testing import CliRunner

HERE = Path(__file__).parent
OPENAPI = HERE / "openapi.json"
CLI_HELP = HERE / "cli-help.txt"


def openapi_text() -> str:
    from referee.app import create_app

    with tempfile.TemporaryDirectory() as var:
        app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": var, "TESTING": True})
        spec = app.test_client().get("/openapi.json").get_json()
    return document_text(spec)


def document_text(document: dict) -> str:
    """An OpenAPI document as this folder records it."""
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _commands(group: click.Group, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    found = [path]
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
        elif command is not None:
            found.append((*path, name))
    return found


def cli_help_text() -> str:
    from referee.cli import main

    runner = CliRunner()
    parts = []
    for path in _commands(main, ()):
        result = runner.invoke(main, [*path, "--help"], prog_name="referee", terminal_width=100)
        parts.append(f"$ referee {' '.join((*path, '--help'))}\n{result.output}")
    return "\n".join(parts)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/surface/snapshot.py --write")
    OPENAPI.write_text(openapi_text())
    CLI_HELP.write_text(cli_help_text())
    print(f"wrote {OPENAPI} and {CLI_HELP}")
