"""Every Redis key the referee uses, built here and nowhere else.

All keys of one game share the hash tag ``{<game id>}``, so a Redis Cluster keeps them on one shard
and the Lua scripts (which touch several keys of one game) stay legal there (``REDIS_URL=redis+cluster://``,
``docs/scale.md``). A tournament's keys share ``{<tournament id>}``, the outbox's ``{outbox}``; every other
key (the indexes, the timers, contacts, mail) is used one key per command or per script.

=============================== =========== ======================================================
key                             type        content
=============================== =========== ======================================================
``game:{<id>}:log``             stream      the log: entry at position ``n`` has stream ID ``0-(n+1)``
                                            and one field ``e`` = the entry's stored JSON, or its packed
                                            form that gives that JSON back byte for byte
                                            (``referee.store.codec``); never trimmed
``game:{<id>}:head``            string      hex hash of the last entry (absent: empty log)
``game:{<id>}:secret``          string      hex server seed (seeded games); never in the log until
                                            ``revealed``
``game:{<id>}:sigs``            hash        the first ``SIG_FIELD_CHARS`` characters of a signature → log
                                            position, for duplicate submissions (fields written before issue
                                            28 hold the whole signature; both are looked up)
``game:{<id>}:pending``         string      ms timestamp: a replay job is queued or running (set by the
                                            append that found none; released by the job once caught up)
``game:{<id>}:proj``            hash        the projection (see ``RedisStore.write_projection``); long
                                            values deflated (``codec.pack_value``)
``game:{<id>}:verdicts``        list        one JSON verdict per folded log entry, in log order
``game:{<id>}:events``          stream      what ``?wait`` blocks on (``XREAD BLOCK``): made by a wait
                                            (``WAIT_VERDICT``), one event per stored projection while it
                                            exists (field ``seq``, capped at 1); expires 30 s after the last
                                            wait, so a game nobody waits on has none
``game:{<id>}:messages``        stream      the game's messages (``referee.store.messages``): message ``n`` has
                                            stream ID ``0-(n+1)`` and one field ``e`` = the stored message's
                                            JSON (hash-chained like the log); never trimmed
``game:{<id>}:messages-head``   string      hex hash of the last message (absent: no message yet)
``game:{<id>}:messages-sigs``   hash        signature → message position, for a message posted twice
``game:{<id>}:mutes``           hash        seat → JSON ``{"mute": [seats], "ms"}``: whom that seat muted, and
                                            the signer's time of the request (a later one replaces it)
``referee:games``               sorted set  the ids of the games in Redis scored by creation time (ms); an
                                            archived game leaves it (the archive lists it then, at the
                                            same score: ``referee.store.archive``)
``player:{<key>}:games``        sorted set  the games a player's public key is seated in, scored by their
                                            ``created`` entry's ``at`` (ms); kept by the game service at
                                            creation, rebuilt from the logs by ``referee rebuild --all``;
                                            an archived game leaves it (the archive lists it then)
``player:{<key>}:tournaments``  sorted set  the tournaments a player's key is a player of, scored by their
                                            ``created`` entry's ``at`` (ms); kept and rebuilt the same way
``tournament:{<id>}:log``       stream      a tournament's log (same entry format and stream IDs as a
                                            game's; ``docs/tournaments.md``), appended by APPEND_ENTRY
``tournament:{<id>}:head``      string      hex hash of its last entry
``tournament:{<id>}:secret``    string      hex server seed; never in the log until ``revealed``
``tournament:{<id>}:sigs``      hash        signature → log position (a join or withdrawal posted twice)
``tournament:{<id>}:pending``   string      raised by APPEND_ENTRY like a game's (no job reads it)
``referee:status:<status>``     set         on the work Redis: the games in Redis whose projection has that
                                            status (``GAME_STATUSES``), kept by WRITE_PROJECTION; an archived
                                            game leaves it. What ``referee_games{status}`` counts
``referee:open-games``          sorted set  on the work Redis: the waiting games with a seat open to anyone
                                            (``GET /games?open=true``), scored by creation time (ms); kept
                                            by the projection writes (``OPEN_LISTING``), so rebuilt with them;
                                            an archived game leaves it
``creator:{<key>}:open-games``  sorted set  on the work Redis: the same, of the games that key created (what
                                            ``REFEREE_MAX_OPEN_GAMES`` counts)
``game:{<id>}:rematch``         string      the id of the game's rematch (``POST /games/{id}/rematch``), set
                                            once (``SET NX``): whichever seat asks, one new game
``referee:tournaments``         sorted set  tournament ids scored by creation time (ms)
``ratings:{<ruleset>}``         hash        on the work Redis: the ruleset's ratings as a fold
                                            (field ``state``: JSON of ``RatingsFold``; ``gen``: its
                                            generation, for compare-and-set); a projection of the
                                            tournaments' logs (``referee rebuild --ratings``)
``ratings:{<ruleset>}:changes`` hash        game id → JSON of its rating change per seat
``referee:timers``              sorted set  game ids scored by the next time (ms) the deadline
                                            scheduler must look at them: a deadline or a reminder;
                                            and ``tournament:<id>`` members for round deadlines
``{outbox}:stream``             stream      outgoing events (turn, reminder, timeout, started,
                                            finished), field ``e`` = JSON; capped at about 100,000
``{outbox}:seen:<event id>``    string      an event already in the outbox (expires after 14 days)
``contact:<id>``                string      a contact channel (JSON: key, webhook, secret, email, events,
                                            email status, …; ``referee/notify/contacts.py``)
``contacts:key:<public key>``   set         the contact ids of a key
``contacts:confirmed:<key>``    set         the e-mail addresses that key has confirmed
``contacts:confirmed-addresses`` set        every confirmed address (the gateway answers them freely)
``contacts:address:<address>``  set         the contact ids of an e-mail address (confirming by reply)
``contact:<id>:deliveries``     list        the latest deliveries to a contact (JSON, newest first)
``contacts:sig:<signature>``    string      a signed contact request already taken (20 minutes)
``delivery:<contact>:<event>``  string      a delivery queued once (2 days)
``mail:inbox``                  stream      mail received by the gateway, stored before its 250
``mail:seen:<message id>``      string      a mail already taken (7 days)
``mail:done:<mail id>``         string      a kept mail that was processed (7 days)
``mail:replies:<address>``      string      replies sent to an unconfirmed address this hour
=============================== =========== ======================================================

The timers and the outbox live on the log's (durable) Redis: a deadline must survive a restart.
"""

from __future__ import annotations

import re
import zlib
from typing import Any, NamedTuple

GAME_LOG = "game:{{{game}}}:log"
GAME_HEAD = "game:{{{game}}}:head"
GAME_SECRET = "game:{{{game}}}:secret"
GAME_SIGS = "game:{{{game}}}:sigs"
GAME_PENDING = "game:{{{game}}}:pending"
GAME_PROJECTION = "game:{{{game}}}:proj"
GAME_VERDICTS = "game:{{{game}}}:verdicts"
GAME_EVENTS = "game:{{{game}}}:events"
GAME_MESSAGES = "game:{{{game}}}:messages"
GAME_MESSAGES_HEAD = "game:{{{game}}}:messages-head"
GAME_MESSAGES_SIGS = "game:{{{game}}}:messages-sigs"
GAME_MUTES = "game:{{{game}}}:mutes"
GAMES_INDEX = "referee:games"
#: set on the work Redis: the games (in Redis) whose projection has ``status``; one per status of ``GAME_STATUSES``
STATUS_SET = "referee:status:{status}"
#: every status a game's projection may have (``referee.replay``: WAITING, ACTIVE, FINISHED, ABORTED, EXPIRED,
#: CANCELLED); a status missing here would leave a game in the set of the status it had before
GAME_STATUSES = ("waiting", "active", "finished", "aborted", "expired", "cancelled")
#: the games of one player's key (its own hash tag: one key per player, written one command each)
PLAYER_GAMES = "player:{{{key}}}:games"
PLAYER_TOURNAMENTS = "player:{{{key}}}:tournaments"
#: on the work Redis: the open games (a seat open to anyone is free), and those of one creator's key
OPEN_GAMES = "referee:open-games"
CREATOR_OPEN_GAMES = "creator:{{{key}}}:open-games"
#: a finished game's rematch: the new game's id, set once
GAME_REMATCH = "game:{{{game}}}:rematch"
TOURNAMENT_LOG = "tournament:{{{tournament}}}:log"
TOURNAMENT_HEAD = "tournament:{{{tournament}}}:head"
TOURNAMENT_SECRET = "tournament:{{{tournament}}}:secret"
TOURNAMENT_SIGS = "tournament:{{{tournament}}}:sigs"
TOURNAMENT_PENDING = "tournament:{{{tournament}}}:pending"
TOURNAMENTS_INDEX = "referee:tournaments"
#: a ruleset's ratings (a projection on the work Redis) and each rated game's change; one hash tag per ruleset
RATINGS = "ratings:{{{ruleset}}}"
RATINGS_CHANGES = "ratings:{{{ruleset}}}:changes"
#: a tournament's member of ``referee:timers`` (a game id never holds ``:``, so the two never clash)
TOURNAMENT_TIMER = "tournament:{tournament}"
TOURNAMENT_TIMER_PREFIX = "tournament:"
TIMERS = "referee:timers"
#: sorted set: the games whose pending flag is up, scored by the flag's ms (the reconciler reads only the stale ones)
PENDING_INDEX = "referee:pending"
#: the ready-list key named to ``APPEND_ENTRY`` when no replay workers listen (never written)
READY_UNUSED = "referee:ready:-"
#: a queue's ready list is split into this many lists by game (``<list>:<shard>``): each replay worker drains the
#: shards it owns, so that one worker catches a game up and folds each of its entries once (``workers/replayloop.py``)
READY_SHARDS = 32


def ready_shard(game_id: str) -> int:
    """The shard of ``game_id``'s notifications: the same in every process (CRC-32 of its id)."""
    return zlib.crc32(game_id.encode()) % READY_SHARDS


def ready_shard_list(ready_list: str, shard: int) -> str:
    """Shard ``shard`` of ``ready_list``: ``<list>:<shard>``."""
    return f"{ready_list}:{shard}"


def ready_shard_key(ready_list: str, game_id: str) -> str:
    """The list of ``ready_list``'s shards that ``game_id``'s notifications go onto."""
    return ready_shard_list(ready_list, ready_shard(game_id))

#: on the work Redis: present while it holds the projections it has always held (the reconciler scans every
#: game once when it finds it missing: a work Redis that restarted empty)
WORK_MARKER = "referee:work-marker"
OUTBOX = "{outbox}:stream"
OUTBOX_SEEN = "{{outbox}}:seen:{event}"
CONTACT = "contact:{contact}"
CONTACTS_OF_KEY = "contacts:key:{key}"
CONTACTS_CONFIRMED = "contacts:confirmed:{key}"
CONFIRMED_ADDRESSES = "contacts:confirmed-addresses"
CONTACTS_OF_ADDRESS = "contacts:address:{address}"
CONTACT_DELIVERIES = "contact:{contact}:deliveries"
CONTACT_SIG = "contacts:sig:{sig}"
DELIVERY_ONCE = "delivery:{contact}:{event}"
MAIL_INBOX = "mail:inbox"
MAIL_SEEN = "mail:seen:{message}"
MAIL_REPLIES = "mail:replies:{address}"
#: the event streams a client address holds open (work Redis; script TAKE_STREAM_SLOT; issue 37, item 9)
STREAM_SLOTS = "referee:streams:{address}"
#: approximate cap on the outbox stream's length (``XADD MAXLEN ~``) and the lifetime of an event id
OUTBOX_MAXLEN = 100_000
OUTBOX_SEEN_TTL = 14 * 24 * 3600
#: the characters of a submission's signature (base64url) that name it in ``game:{<id>}:sigs``: 20 are 120 bits,
#: enough that two signatures of one log never share them (nobody can choose an Ed25519 signature's first 120
#: bits, and a chance collision among a log's signatures is ~n²/2¹²¹), few enough that a game's hash stays a
#: small listpack (``hash-max-ziplist-value`` 64) instead of a hash table of 86-character fields
SIG_FIELD_CHARS = 20
#: SCAN pattern matching every game's log key (for ``rebuild --all`` when the index is incomplete).
LOG_SCAN_PATTERN = "game:{*}:log"

#: What a game id may look like: it goes inside a hash tag, so never ``{``, ``}``, ``:`` or spaces.
GAME_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


#: What a player's key may look like in a key name: base64url (an Ed25519 key is 43 characters of it).
PLAYER_KEY_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def player_games_key(public_key: str) -> str:
    """The key of a player's games (``player:{<key>}:games``); refuses anything that is not base64url."""
    if not isinstance(public_key, str) or PLAYER_KEY_RE.match(public_key) is None:
        raise ValueError(f"not a public key: {public_key!r}")
    return PLAYER_GAMES.format(key=public_key)


def player_tournaments_key(public_key: str) -> str:
    """The key of a player's tournaments (``player:{<key>}:tournaments``); rules as :func:`player_games_key`."""
    if not isinstance(public_key, str) or PLAYER_KEY_RE.match(public_key) is None:
        raise ValueError(f"not a public key: {public_key!r}")
    return PLAYER_TOURNAMENTS.format(key=public_key)


def creator_open_games_key(public_key: str) -> str:
    """The key of the open games a key created (``creator:{<key>}:open-games``); rules as :func:`player_games_key`."""
    if not isinstance(public_key, str) or PLAYER_KEY_RE.match(public_key) is None:
        raise ValueError(f"not a public key: {public_key!r}")
    return CREATOR_OPEN_GAMES.format(key=public_key)


def rematch_key(game_id: str) -> str:
    """The key of a game's rematch (``game:{<id>}:rematch``, under the game's hash tag)."""
    if not valid_game_id(game_id):
        raise ValueError(f"not a valid game id: {game_id!r}")
    return GAME_REMATCH.format(game=game_id)


def status_sets(status: Any) -> list[str]:
    """The keys of the status sets, that of ``status`` first (none when it is not one of ``GAME_STATUSES``)."""
    if status not in GAME_STATUSES:
        return []
    return [STATUS_SET.format(status=status), *(STATUS_SET.format(status=s) for s in GAME_STATUSES if s != status)]


def sig_field(signature: str) -> str:
    """The field of ``signature`` in a log's signature hash (``…:sigs``): its first ``SIG_FIELD_CHARS`` characters.
    ``APPEND_ENTRY`` takes the same prefix itself (``string.sub``)."""
    return signature[:SIG_FIELD_CHARS]


def valid_game_id(game_id: str) -> bool:
    return isinstance(game_id, str) and GAME_ID_RE.match(game_id) is not None


def stream_id(position: int) -> str:
    """Stream ID of the log entry at ``position`` (0-based): ``0-(position+1)``."""
    return f"0-{position + 1}"


def position_of(stream_id_: str | bytes) -> int:
    """Log position of a stream ID made by :func:`stream_id`."""
    text = stream_id_.decode() if isinstance(stream_id_, bytes) else stream_id_
    return int(text.split("-", 1)[1]) - 1


def game_id_of_log_key(key: str | bytes) -> str:
    text = key.decode() if isinstance(key, bytes) else key
    return text[len("game:{"): -len("}:log")]


class GameKeys(NamedTuple):
    log: str
    head: str
    secret: str
    sigs: str
    pending: str
    projection: str
    verdicts: str
    events: str


def game_keys(game_id: str) -> GameKeys:
    """Every key of ``game_id``; refuses ids that could escape their hash tag."""
    if not valid_game_id(game_id):
        raise ValueError(f"not a valid game id: {game_id!r}")
    return GameKeys(*(template.format(game=game_id) for template in (
        GAME_LOG, GAME_HEAD, GAME_SECRET, GAME_SIGS, GAME_PENDING, GAME_PROJECTION, GAME_VERDICTS, GAME_EVENTS)))


class TournamentKeys(NamedTuple):
    log: str
    head: str
    secret: str
    sigs: str
    pending: str


def tournament_keys(tournament_id: str) -> TournamentKeys:
    """Every key of a tournament (its own hash tag); the id follows the game id rules."""
    if not valid_game_id(tournament_id):
        raise ValueError(f"not a valid tournament id: {tournament_id!r}")
    return TournamentKeys(*(template.format(tournament=tournament_id) for template in (
        TOURNAMENT_LOG, TOURNAMENT_HEAD, TOURNAMENT_SECRET, TOURNAMENT_SIGS, TOURNAMENT_PENDING)))


class MessageKeys(NamedTuple):
    stream: str
    head: str
    sigs: str
    mutes: str
    log: str


def message_keys(game_id: str) -> MessageKeys:
    """The keys of a game's messages, under the game's hash tag (with its log's, which the append reads)."""
    if not valid_game_id(game_id):
        raise ValueError(f"not a valid game id: {game_id!r}")
    return MessageKeys(*(template.format(game=game_id) for template in (
        GAME_MESSAGES, GAME_MESSAGES_HEAD, GAME_MESSAGES_SIGS, GAME_MUTES, GAME_LOG)))


def archived_game_keys(game_id: str) -> tuple[list[str], list[str]]:
    """Every key of one game, as archiving deletes them: ``(on the log's Redis, on the work Redis)`` (the
    projection, verdicts and events live on the work Redis when it is another server)."""
    k, m = game_keys(game_id), message_keys(game_id)
    return [k.log, k.head, k.secret, k.sigs, k.pending, m.stream, m.head, m.sigs, m.mutes, rematch_key(game_id)], [
        k.projection, k.verdicts, k.events]
