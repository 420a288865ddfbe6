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
    referee create fivetowers --seat alice=<pubkey> --seat bob=<pubkey>
    referee accept GAME --key alice.key
    referee move GAME '{"type": "bid", "amount": 2}' --key alice.key --wait 5

Open seats (``seats.py``: ``create … --invite NAME --open NAME --key FILE`` prints the join links; ``join LINK
--key FILE``, ``leave``, ``cancel``, ``rematch GAME --key FILE``). The players' own decisions (``decisions.py``:
``resign``, ``offer GAME draw|end|abort|takeback``, ``answer
GAME [OFFER] --accept|--decline``), a computer player (``bots.py``: ``bot --key FILE``), messages
(``messages.py``: ``say``, ``messages``), the clock (``clocks.py``:
``vacation``, ``verify-receipt``), notifications (``notifications.py``: ``contact …``, ``mail-gateway``),
tournaments (``tournaments.py``: ``tournament …``) and the offline verifiers (``verification.py``: ``verify``,
``verify-tournament``, ``shadow-replay``). What the commands
that talk to a server share is in ``client.py``; no command module imports another, nor this one.
``python -m referee.cli …`` runs the same command (``__main__.py``).
"""

from __future__ import annotations

import click

from . import (
    backup,
    bots,
    clocks,
    decisions,
    games,
    messages,
    notifications,
    operations,
    seats,
    tournaments,
    verification,
)


@click.group()
def main() -> None:
    """The referee: signed moves, append-only logs, replay workers, verifiable games."""


# running the service
main.add_command(operations.serve)
main.add_command(operations.worker)
main.add_command(operations.reconcile)
main.add_command(operations.rebuild)
main.add_command(operations.archive)
main.add_command(operations.embedded_redis)  # `_redis`, hidden: serve's children
main.add_command(operations.werkzeug_server)  # `_werkzeug`, hidden: serve's web server without gunicorn
main.add_command(backup.backup)
main.add_command(backup.restore)
# playing from a terminal
main.add_command(games.keygen)
main.add_command(games.create)
main.add_command(games.accept)
main.add_command(games.legal_moves)
main.add_command(games.move)
main.add_command(seats.join)
main.add_command(seats.leave)
main.add_command(seats.cancel)
main.add_command(seats.rematch)
main.add_command(clocks.vacation)
main.add_command(decisions.resign)
main.add_command(decisions.offer)
main.add_command(decisions.answer)
main.add_command(clocks.verify_receipt)
main.add_command(bots.bot)
# talking
main.add_command(messages.say)
main.add_command(messages.messages)
# notifications
main.add_command(notifications.contact)
main.add_command(notifications.mail_gateway)
# tournaments
main.add_command(tournaments.tournament)
# verification, offline
main.add_command(verification.verify_command)
main.add_command(verification.verify_tournament_command)
main.add_command(verification.verify_page_command)
main.add_command(verification.shadow_replay_command)

__all__ = ["main"]
