"""Verification: ``referee verify`` (a game's bundle), ``referee verify-tournament`` (a tournament's
certificate) and ``referee shadow-replay`` (every stored game against the installed engines).

``verify`` and ``verify-tournament`` run offline: no server, no Redis, only the installed engines
(``python -m referee.cli verify bundle.json`` works without the ``referee`` script on the path).

``referee verify`` exit status (see ``docs/verification.md``):

* 0 — verified: every check passed;
* 1 — a check failed (or the file is not a JSON bundle);
* 2 — usage error (click's own: missing file, bad option);
* 3 — incomplete: an interim bundle of a running game; nothing failed, the seed and result checks
  were skipped;
* 4 — version mismatch only: the installed engine differs from the pinned version; every other check
  passed when replayed with the installed engine.

``referee verify-tournament`` exit status: 0 verified (every check that ran passed; ``game_bundles`` is
skipped without ``--games``), 1 a check failed or the file is not a JSON certificate, 2 usage error
(click's own). ``--games DIR`` reads every ``*.json`` file of DIR as a game's verification bundle (``GET
/games/{id}/export``), keyed by the bundle's ``game``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import IO, Any, TextIO

import click

from ..protocol.canonical import StrictJSONError, parse_strict
from ..tournaments.certificate import CHECK_ORDER, TournamentReport, verify_certificate
from ..verify import FAILED, PASSED, SKIPPED, Check, Report, unreadable_report, verify_bundle
from ..verify.bundle import load_bundle
from .client import _

_MARKS = {PASSED: "[pass]", FAILED: "[FAIL]", SKIPPED: "[skip]"}
_VERDICTS = {
    "verified": "VERIFIED: every check passed.",
    "failed": "FAILED",
    "incomplete": "INCOMPLETE: interim bundle of a running game; every check that can run passed, "
                  "the seed and result are checked once the game ends.",
    "version_mismatch": "VERSION MISMATCH: the installed engine is not the pinned version",
}


# -- games' bundles ------------------------------------------------------------------------------
class ProgressReporter:
    """Progress on stderr for the long checks, shown only once verification has run ``after`` seconds.

    ``enabled``: ``True`` always (after the delay), ``False`` never, ``None`` only when the stream is a
    terminal. On a terminal it draws a ``click.progressbar`` per stage; otherwise (``--progress`` into a
    pipe or a file) it writes a plain line every 10 %.
    """

    def __init__(self, enabled: bool | None, after: float = 1.0, stream: TextIO | None = None):
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = self.tty if enabled is None else enabled
        self.after = after
        self.start = time.monotonic()
        self.stage: str | None = None
        self.bar: Any = None
        self.done = 0
        self.last_tenth = -1
        self.shown = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or (not self.shown and time.monotonic() - self.start < self.after):
            return
        self.shown = True
        if stage != self.stage:
            self.close()
            self.stage, self.done, self.last_tenth = stage, 0, -1
            if self.tty:
                self.bar = click.progressbar(length=total, label=f"verify: {stage:<10}", file=self.stream,
                                             show_pos=True)
                self.bar.render_progress()
        if self.bar is not None:
            self.bar.update(done - self.done)
        else:
            tenth = done * 10 // max(total, 1)
            if tenth != self.last_tenth:
                self.last_tenth = tenth
                click.echo(f"verify: {stage} {done}/{total} entries ({tenth * 10}%)", file=self.stream)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.render_finish()
            self.bar = None


def _stream(check: Check) -> str:
    """Which positions a check's ``position`` counts: the log's, or the message stream's (``messages``)."""
    return "message" if check.details.get("stream") == "messages" else "log"


def render_report(report: Report, source: str) -> str:
    """The human report: a heading, one line per check, and the verdict with the first failure."""
    summary = report.to_dict()
    rules = summary.get("ruleset") or {}
    heading = f"Bundle {source}"
    if summary.get("game"):
        heading += (f": {rules.get('name')} game {summary['game']}, pinned version {rules.get('pinned_version')}, "
                    f"{summary['entries']} log entries, " + ("interim (running)" if summary["interim"] else "final"))
        heading += (f", created by organiser {summary['organiser']}" if summary.get("organiser")
                    else ", no organiser")
    lines = [heading]
    width = max(len(c.name) for c in report.checks)
    for check in report.checks:
        where = (f"at {_stream(check)} position {check.position}: "
                 if check.status == FAILED and check.position is not None else "")
        lines.append(f"  {_MARKS[check.status]} {check.name:<{width}}  {where}{check.reason or ''}")
    first = report.first_failure
    verdict = _VERDICTS[report.status]
    if report.status == "failed" and first is not None:
        where = (f" at {_stream(first)} position {first.position}" if first.position is not None
                 else " (the bundle as a whole)")
        verdict += f": first failure: {first.name}{where}: {first.reason}"
    elif report.status == "version_mismatch" and first is not None:
        verdict += f"; {first.reason}."
    lines.append(verdict)
    return "\n".join(lines)


@click.command("verify")
@click.argument("bundle_file", type=click.File("rb"), metavar="BUNDLE.json")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (for machines).")
@click.option("--referee-key", metavar="KEY", default=None,
              help="The referee's public key (base64url) the bundle must be signed with, e.g. from GET /referee-key.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr when verification takes over a second [default: on a terminal].")
@click.option("--progress-after", type=float, default=1.0, show_default=True, hidden=True,
              help="Seconds before the progress bar appears.")
def verify_command(bundle_file: IO[bytes], as_json: bool, referee_key: str | None, progress: bool | None,
                   progress_after: float) -> None:
    """Verify a game's bundle offline (no server, no Redis): the referee's signature, the hash chain,
    the organiser's signature of the creation (when there is an organiser), every seat's signature, the
    seed commitment, a full replay with the pinned engine, and the result.

    Exit status: 0 verified, 1 a check failed, 3 incomplete (interim bundle), 4 only the installed engine
    version differs from the pinned one. Use - to read the bundle from standard input.
    """
    source = getattr(bundle_file, "name", "<stdin>")
    source = "<stdin>" if source in ("<stdin>", "-") else str(source)
    data = bundle_file.read()
    try:
        bundle = load_bundle(data)
    except StrictJSONError as exc:
        report = unreadable_report(f"the file is not a strict JSON bundle: {exc}", exc.problems)
    else:
        reporter = ProgressReporter(progress, progress_after)
        try:
            report = verify_bundle(bundle, reporter, referee_key=referee_key)
        finally:
            reporter.close()
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(render_report(report, source))
    sys.exit(report.exit_code)


@click.command("verify-page")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write the page into (created if missing).")
def verify_page_command(out_dir: Path) -> None:
    """Write the browser verifier (/play/verify) as a static folder: the page in English, German and French, its
    JavaScript, Pyodide, Ed25519 and the engine's own files. Any static web server serves it (python -m
    http.server); it needs no referee and sends nothing anywhere. Needs the vendored files (python -m
    referee.web.vendor)."""
    from ..web import bp  # noqa: PLC0415 - keeps `referee verify` free of Flask
    from ..web.verify_page import write_static  # noqa: PLC0415

    try:
        written = write_static(out_dir, bp)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {len(written)} files into {out_dir}: open {out_dir / 'index.html'} through a web server")


# -- shadow replay -------------------------------------------------------------------------------
def _store_from_app() -> Any:
    """The service's store, configured from the environment exactly as ``referee serve`` does."""
    try:
        from ..app import create_app  # noqa: PLC0415 - the offline verifier must not need the service
    except ImportError as exc:  # pragma: no cover - only before the service is installed
        raise click.ClickException(_("the referee service is not available: %(error)s", error=exc)) from exc
    app = create_app()
    store = app.extensions.get("referee.store")
    if store is None:
        raise click.ClickException("the service app has no store (extensions['referee.store'])")
    return store


class StoreUnreachable(click.ClickException):
    """The store (Redis at ``REDIS_URL``) cannot be read: exit status 3, apart from 1 (games would change)."""

    exit_code = 3


class _GameProgress:
    """``shadow-replay: 40/200 games`` on stderr, at most every 5 % (and only for more than a few games)."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if self.quiet or total < 10:
            return
        step = done * 20 // total
        if step != self.last:
            self.last = step
            click.echo(f"shadow-replay: {done}/{total} games", err=True)


@click.command("shadow-replay")
@click.option("--game", "game_ids", multiple=True, metavar="ID", help="Only this game (repeatable). Default: all.")
@click.option("--save", "save_file", type=click.File("w"), default=None,
              help="Write every game's outcome with the installed engine to FILE (a baseline) and stop.")
@click.option("--baseline", "baseline_file", type=click.File("rb"), default=None,
              help="Compare with a baseline saved by --save instead of the stored projections.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@click.pass_context
def shadow_replay_command(ctx: click.Context, *, game_ids: tuple[str, ...], save_file: IO[str] | None,
                          baseline_file: IO[bytes] | None, as_json: bool, quiet: bool) -> None:
    """Re-run every stored game with the installed engine and list the games whose state or result would
    change (compared with the stored projections, or a saved --baseline). Run it before deploying a rules
    change. Exit status: 0 nothing would change, 1 some game would change or could not be compared,
    2 usage error (e.g. an unknown --game), 3 the store cannot be read.
    """
    from redis.exceptions import RedisError  # noqa: PLC0415

    from ..replay.shadow import shadow_replay, snapshot  # noqa: PLC0415 - keeps `referee verify` import-light
    from ..store import GameNotFound, StoreError  # noqa: PLC0415

    baseline = None
    if baseline_file is not None:
        try:
            baseline = load_bundle(baseline_file.read())
        except StrictJSONError as exc:
            raise click.ClickException(_("the baseline file is not JSON: %(error)s", error=exc)) from exc
        if not isinstance(baseline, dict):
            raise click.ClickException(_("the baseline file must map game ids to outcomes (made by --save)"))
    ids = list(game_ids) or None
    progress = _GameProgress(quiet)
    try:
        store = (ctx.obj or {}).get("store") if isinstance(ctx.obj, dict) else None
        store = store if store is not None else _store_from_app()
        if save_file is not None:
            outcomes = snapshot(store, game_ids=ids, progress=progress)
            json.dump(outcomes, save_file, ensure_ascii=False)
            click.echo(_("saved the outcomes of %(count)s games with the installed engines", count=len(outcomes)))
            return
        report = shadow_replay(store, game_ids=ids, baseline=baseline, progress=progress)
    except GameNotFound as exc:
        raise click.BadParameter(str(exc), param_hint="--game") from exc
    except (RedisError, StoreError) as exc:
        raise StoreUnreachable(f"cannot read the game store: {exc}") from exc
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(render_shadow(report))
    sys.exit(0 if report.ok else 1)


def render_shadow(report: Any) -> str:
    lines = []
    for game in report.games:
        version = (f"{game.ruleset} pinned {game.pinned_version}, installed {game.installed_version}"
                   if game.version_differs else f"{game.ruleset} {game.installed_version}")
        if not game.comparable:
            lines.append(f"  ?  {game.game}  not comparable: {game.details.get('note')} ({version})")
        elif game.changed:
            where = (f", verdicts first differ at log position {game.first_verdict_change}"
                     if game.first_verdict_change is not None else "")
            error = f", the installed engine fails: {game.error}" if game.error else ""
            lines.append(f"  !  {game.game}  would change: {', '.join(game.changed)}{where}{error} ({version})")
    changed, unknown = len(report.changed), len(report.not_comparable)
    lines.append(f"{len(report.games)} games replayed: {changed} would change, {unknown} not comparable, "
                 f"{len(report.games) - changed - unknown} unchanged.")
    return "\n".join(lines)


# -- tournament certificates ---------------------------------------------------------------------
def load_game_bundles(directory: Path) -> dict[str, Any]:
    """The bundles of ``directory/*.json`` by game id (``ClickException`` on a file that is not one)."""
    bundles: dict[str, Any] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            bundle = parse_strict(path.read_bytes())
        except StrictJSONError as exc:
            raise click.ClickException(_("%(file)s is not a strict JSON bundle: %(error)s", file=path,
                                         error=exc)) from exc
        if not isinstance(bundle, dict) or not isinstance(bundle.get("game"), str):
            raise click.ClickException(_("%(file)s is not a game bundle (no 'game')", file=path))
        bundles[bundle["game"]] = bundle
    return bundles


def render_certificate_report(report: TournamentReport, source: str) -> str:
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
        click.echo(render_certificate_report(report, str(source)))
    sys.exit(report.exit_code)
