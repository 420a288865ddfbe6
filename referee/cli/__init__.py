"""The ``referee`` command: the ``main`` group, and every command of the modules of this package.

Running the service (``operations.py``)::

    referee serve                 web (gunicorn, 2 workers) + 1 replay worker, restarted when they die;
                                  unless REDIS_URL is set, two embedded Redis servers: the logs' (AOF,
                                  appendfsync always, var/redis) and the queue's and projections' (not
                                  persisted)
    referee worker                an RQ replay worker with the scheduler and the reconciler
    referee reconcile             queue replays for games whose projection lags (once, or --every N)
    referee rebuild GAME… | --all rebuild projections from the logs, from scratch
    referee archive [GAME…]       move finished games out of Redis into the archive
    referee backup --out FILE     (``backup.py``) the log Redis, the archive and the key into one file, live
    referee restore FILE          that file into an empty data directory

Playing from a terminal (``games.py``; any server, default ``$REFEREE_SERVER`` or http://127.0.0.1:8000)::

    referee keygen --out alice.key
    referee key link --key alice.key       (``keys.py``) a one-time link (and QR) that moves the key to a browser;
    referee key fetch LINK --out bob.key   ``fetch`` takes one made by a browser's My keys page (section 15)
    referee create fivetowers --seat alice=<pubkey> --seat bob=<pubkey>
    referee accept GAME --key alice.key
    referee move GAME '{"type": "bid", "amount": 2}' --key alice.key --wait 5

Open seats (``seats.py``: ``create … --invite NAME --open NAME --key FILE`` prints the join links; ``join LINK
--key FILE``, ``leave``, ``cancel``, ``rematch GAME --key FILE``). The players' own decisions (``decisions.py``:
``resign``, ``offer GAME draw|end|abort|takeback``, ``answer
GAME [OFFER] --accept|--decline``), a seat's new key (``rekeys.py``: ``rekey GAME|--all --key OLD --new-key NEW``,
``recover GAME --seat N --key NEW``), a computer player (``bots.py``: ``bot --key FILE``), messages
(``messages.py``: ``say``, ``messages``), the clock (``clocks.py``:
``vacation``, ``verify-receipt``), notifications (``notifications.py``: ``contact …``, ``mail-gateway``),
tournaments (``tournaments.py``: ``tournament …``) and the offline verifiers (``verification.py``: ``verify``,
``verify-tournament``, ``shadow-replay``). What the commands
that talk to a server share is in ``client.py``; no command module imports another, nor this one.
``python -m referee.cli …`` runs the same command (``__main__.py``).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

#: every command, by name: the module of this package that defines it and its name there. A command's module is
#: imported when the command runs (or when ``--help`` lists it), not at every start: ``referee worker``, ``bot``
#: or ``verify`` no longer import the bots, the backup and the tournaments' CLI (each of ``serve``'s children is a
#: ``referee`` process).
COMMANDS = {
    # running the service
    "serve": ".operations:serve",
    "worker": ".operations:worker",
    "reconcile": ".operations:reconcile",
    "rebuild": ".operations:rebuild",
    "archive": ".operations:archive",
    "_werkzeug": ".operations:werkzeug_server",  # hidden: serve's web server without gunicorn
    "backup": ".backup:backup",
    "restore": ".backup:restore",
    # playing from a terminal
    "keygen": ".games:keygen",
    "key": ".keys:key",
    "create": ".games:create",
    "accept": ".games:accept",
    "legal-moves": ".games:legal_moves",
    "move": ".games:move",
    "join": ".seats:join",
    "leave": ".seats:leave",
    "cancel": ".seats:cancel",
    "rematch": ".seats:rematch",
    "vacation": ".clocks:vacation",
    "resign": ".decisions:resign",
    "offer": ".decisions:offer",
    "answer": ".decisions:answer",
    "rekey": ".rekeys:rekey",
    "recover": ".rekeys:recover",
    "verify-receipt": ".clocks:verify_receipt",
    "bot": ".bots:bot",
    # talking
    "say": ".messages:say",
    "messages": ".messages:messages",
    # notifications
    "contact": ".notifications:contact",
    "mail-gateway": ".notifications:mail_gateway",
    # tournaments
    "tournament": ".tournaments:tournament",
    # verification, offline
    "verify": ".verification:verify_command",
    "verify-tournament": ".verification:verify_tournament_command",
    "shadow-replay": ".verification:shadow_replay_command",
    "verify-page": ".verification:verify_page_command",
}


class _Commands(click.Group):
    """The ``referee`` group: its commands imported on first use (``COMMANDS``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, name = where.split(":")
        command: Any = getattr(importlib.import_module(module, __name__), name)
        return command


@click.group(cls=_Commands)
def main() -> None:
    """The referee: signed moves, append-only logs, replay workers, verifiable games."""


__all__ = ["COMMANDS", "main"]
