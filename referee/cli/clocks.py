"""The time control from a terminal (CONTRACT section 8): ``referee vacation`` and ``referee
verify-receipt`` (offline), and ``check_receipt`` behind it; ``referee create --time-control`` is in
``games.py``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..protocol.canonical import parse_strict
from ..protocol.signing import RECEIPT_CTX, VACATION_CTX, public_key_b64, verify
from .client import _, load_key, post_at_tip, seat_of, server_option


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--days", type=float, required=True, help="days of vacation from now (fractions allowed)")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--seat", type=int, help="seat number (default: the seat of this key)")
@server_option
def vacation(game_id: str, days: float, key_file: str, seat: int | None, server: str) -> None:
    """Take DAYS of vacation in GAME from now: your clock stops for that long (within the game's
    allowance). Prints the referee's signed receipt."""
    seconds = round(days * 86400)
    if seconds <= 0:
        raise click.BadParameter(_("--days must be more than 0"))
    key = load_key(key_file)

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": VACATION_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "seq": game["seq"], "prev": game["head"], "seconds": seconds}

    # another seat may move meanwhile; a vacation does not depend on the position
    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/vacation", key, envelope_of)


@click.command("verify-receipt")
@click.argument("receipt_file", metavar="RECEIPT", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--referee-key", required=True, help="the referee's public key (base64url; GET /referee-key)")
@click.option("--bundle", type=click.Path(exists=True, dir_okay=False),
              help="also check that the bundle's log holds this entry (seq, hash, at)")
def verify_receipt(receipt_file: str, referee_key: str, bundle: str | None) -> None:
    """Check a receipt offline: RECEIPT is a JSON file holding {"receipt", "receipt_sig"} (a submission's
    2xx answer as it came). Exit 0 when the referee signed it (and the bundle's log holds it), 1 when not."""
    raw = sys.stdin.buffer.read() if receipt_file == "-" else Path(receipt_file).read_bytes()
    problem = check_receipt(parse_strict(raw), referee_key,
                            parse_strict(Path(bundle).read_bytes()) if bundle else None)
    if problem:
        click.echo(_("FAILED: %(problem)s", problem=problem))
        sys.exit(1)
    click.echo(_("OK: the referee signed this receipt and the bundle's log holds it") if bundle
               else _("OK: the referee signed this receipt"))


def check_receipt(answer: Any, referee_key: str, bundle: dict[str, Any] | None = None) -> str | None:
    """What is wrong with a receipt (``{"receipt", "receipt_sig"}``), or None. Pure and offline.

    With ``bundle``, the entry at the receipt's ``seq`` must have the receipt's ``hash`` and ``at`` (the
    bundle itself is checked by ``referee verify``)."""
    if not isinstance(answer, dict) or not isinstance(answer.get("receipt"), dict):
        return "no receipt: expected a JSON object with 'receipt' and 'receipt_sig'"
    receipt, sig = answer["receipt"], answer.get("receipt_sig")
    if receipt.get("ctx") != RECEIPT_CTX:
        return f"the receipt's ctx is {receipt.get('ctx')!r}, not {RECEIPT_CTX!r}"
    if not isinstance(sig, str) or not verify(referee_key, receipt, sig):
        return "the signature is not the referee's over this receipt"
    if bundle is not None:
        log = bundle.get("log") if isinstance(bundle, dict) else None
        seq = receipt.get("seq")
        if not isinstance(log, list) or not isinstance(seq, int) or not 0 <= seq < len(log):
            return f"the bundle's log has no entry {seq!r}"
        entry = log[seq]
        if not isinstance(entry, dict) or entry.get("game", receipt["game"]) != receipt["game"]:
            return "the bundle is of another game"
        if bundle.get("game") not in (None, receipt["game"]):
            return f"the bundle is of game {bundle.get('game')}, the receipt of {receipt['game']}"
        for name in ("hash", "at"):
            if entry.get(name) != receipt.get(name):
                return f"the bundle's entry {seq} has {name} {entry.get(name)!r}, the receipt {receipt.get(name)!r}"
    return None
