"""``referee verify-tournament`` (a click command; the lead wires it into ``referee/cli.py``).

Offline, like ``referee verify``: no server, no Redis. Exit status: 0 verified (every check that ran
passed; ``game_bundles`` is skipped without ``--games``), 1 a check failed or the file is not a JSON
certificate, 2 usage error (click's own).

``--games DIR`` reads every ``*.json`` file of DIR as a game's verification bundle (``GET
/games/{id}/export``), keyed by the bundle's ``game``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Any

import click

from ..canonical import StrictJSONError, parse_strict
from ..verify import FAILED, PASSED, SKIPPED, Check
from .certificate import CHECK_ORDER, TournamentReport, verify_certificate

_MARKS = {PASSED: "[pass]", FAILED: "[FAIL]", SKIPPED: "[skip]"}


def load_game_bundles(directory: Path) -> dict[str, Any]:
    """The bundles of ``directory/*.json`` by game id (``ClickException`` on a file that is not one)."""
    bundles: dict[str, Any] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            bundle = parse_strict(path.read_bytes())
        except StrictJSONError as exc:
            raise click.ClickException(f"{path} is not a strict JSON bundle: {exc}") from exc
        if not isinstance(bundle, dict) or not isinstance(bundle.get("game"), str):
            raise click.ClickException(f"{path} is not a game bundle (no 'game')")
        bundles[bundle["game"]] = bundle
    return bundles


def render(report: TournamentReport, source: str) -> str:
    summary = report.summary
    lines = [f"Tournament certificate {source}: tournament {summary.get('tournament')}, "
             f"{summary.get('entries')} log entries, {summary.get('games')} games"]
    width = max(len(c.name) for c in report.checks)
    for check in report.checks:
        where = f"at log position {check.position}: " if check.status == FAILED and check.position is not None else ""
        lines.append(f"  {_MARKS[check.status]} {check.name:<{width}}  {where}{check.reason or ''}")
    first = report.first_failure
    if first is None:
        lines.append("VERIFIED: every check that ran passed.")
    else:
        where = f" at log position {first.position}" if first.position is not None else " (the certificate)"
        lines.append(f"FAILED: first failure: {first.name}{where}: {first.reason}")
    return "\n".join(lines)


@click.command("verify-tournament")
@click.argument("certificate_file", type=click.File("rb"), metavar="CERTIFICATE.json")
@click.option("--games", "games_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A folder of the games' verification bundles (*.json): each is verified and matched to the "
                   "head the tournament log records.")
@click.option("--referee-key", metavar="KEY", default=None,
              help="The referee's public key (base64url) the certificate must be signed with.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify_tournament_command(certificate_file: IO[bytes], games_dir: Path | None, referee_key: str | None,
                              as_json: bool) -> None:
    """Verify a tournament certificate offline: the referee's signature, the hash chain, the seed, every
    pairing and result recomputed from the log, the games' Merkle root, the standings with every
    tie-break, and (with --games) each game's own bundle. Exit status: 0 verified, 1 not."""
    source = getattr(certificate_file, "name", "<stdin>")
    bundles = load_game_bundles(games_dir) if games_dir is not None else None
    try:
        cert = parse_strict(certificate_file.read())
    except StrictJSONError as exc:
        checks = [Check("format", FAILED, f"the file is not strict JSON: {exc}")]
        checks += [Check(name, SKIPPED, "the certificate could not be read") for name in CHECK_ORDER[1:]]
        report = TournamentReport(checks, {"tournament": None, "entries": 0, "games": 0})
    else:
        report = verify_certificate(cert, bundles, referee_key=referee_key)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(render(report, str(source)))
    sys.exit(report.exit_code)


if __name__ == "__main__":
    verify_tournament_command()
