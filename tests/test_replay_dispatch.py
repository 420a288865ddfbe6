"""The fold's dispatch (``referee/replay/``): every entry type has its one handler, in its concern's module."""

from __future__ import annotations

import pytest

from referee.games import ruleset
from referee.replay import (
    DECISION_ENTRIES,
    KEY_ENTRIES,
    REFEREE_ENTRIES,
    LogReplayer,
    adjudication,
    decisions,
    keys,
    lifecycle,
    moves,
)
from referee.replay.replayer import HANDLERS, _handlers

CONCERNS = {"lifecycle": lifecycle.HANDLERS, "moves": moves.HANDLERS, "decisions": decisions.HANDLERS,
            "adjudication": adjudication.HANDLERS, "keys": keys.HANDLERS}


def test_each_entry_type_is_handled_by_one_concern():
    claimed = [kind for table in CONCERNS.values() for kind in table]
    assert len(claimed) == len(set(claimed)) and set(claimed) == set(HANDLERS)
    assert REFEREE_ENTRIES | DECISION_ENTRIES | KEY_ENTRIES <= set(HANDLERS)
    assert {"created", "accepted", "started", "expired", "forfeited"} <= set(lifecycle.HANDLERS)


def test_an_entry_type_claimed_twice_fails_the_dispatch_table():
    with pytest.raises(ValueError, match="'move'"):
        _handlers(moves.HANDLERS, {"move": moves.on_move})


@pytest.mark.parametrize("kind", ["teleported", ["move"], None])
def test_an_unknown_entry_type_is_rejected_and_changes_nothing(kind):
    rules = ruleset("fivetowers")
    replayer = LogReplayer()
    replayer.feed({"seq": 0, "type": "created", "game": "g", "mode": "recorded", "hash": "h0",
                   "ruleset": {"name": rules.name, "version": rules.version}, "seats": [{"key": "a"}, {"key": "b"}]})
    verdict = replayer.feed({"seq": 1, "type": kind, "hash": "h1"})
    assert verdict.to_dict() == {"seq": 1, "type": str(kind), "status": "rejected",
                                 "error": {"code": "log/unknown_entry", "message": f"unknown entry type {kind!r}"}}
    assert replayer.status == "waiting" and replayer.head == "h1" and replayer.seq == 2
