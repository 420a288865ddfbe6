"""Messages of a game (CONTRACT section 12): ``POST /games/{id}/messages`` (a seat's signed message, into the
game's own message stream, never its log), ``GET /games/{id}/messages`` (the public ones; with a seat's
signed read, also the private ones to or from it) and ``POST /games/{id}/messages/mute``."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from referee.messages import MessageService
from schemas.common import ErrorSchema
from schemas.messages import (
    MessageListSchema,
    MessageReceiptSchema,
    MessagesQuerySchema,
    MessageSubmissionSchema,
    MuteDoneSchema,
    MuteSubmissionSchema,
)

from .games import service
from .limits import rate_limited, seat_key
from .parsing import ApiBlueprint

blp = ApiBlueprint("messages", __name__, url_prefix="/games",
                   description="Signed messages between the seats of a game, public or private, in the game's own "
                               "hash-chained message stream beside its log")


def messages() -> MessageService:
    return current_app.extensions["referee.messages"]


def _errors(func: Any, codes: tuple[int, ...] = (400, 401, 403, 404, 409, 413, 415, 503)) -> Any:
    for code in codes:
        func = blp.alt_response(code, schema=ErrorSchema)(func)
    return func


@blp.route("/<game_id>/messages")
class Messages(MethodView):
    @blp.arguments(MessagesQuerySchema(), location="query")
    @blp.response(200, MessageListSchema)
    @_errors
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The game's public messages, paged like ``/log`` (``from``, ``limit``; ``next``); with a seat's signed
        read (``key``, ``at``, ``sig`` over ``{"v": 1, "ctx": "referee/messages", game, key, at}``, ``at`` within
        10 minutes) also the private ones to or from that key's seats, without those of the seats it muted."""
        return messages().read(game_id, query)

    @rate_limited("REFEREE_RATE_MESSAGES_PER_ADDRESS", shared=True)
    @rate_limited("REFEREE_RATE_MESSAGES", key=seat_key)
    @blp.arguments(MessageSubmissionSchema())
    @blp.response(201, MessageReceiptSchema)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_MESSAGES (per seat key) or "
                                                           "REFEREE_RATE_MESSAGES_PER_ADDRESS; see Retry-After")
    @_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """A seat's signed message (ctx ``referee/message``; ``to``: seats, or null for everyone), bound to the
        game and seat but to no log position: it never makes a move stale. 201 with the referee's signed
        receipt of its position in the game's message stream."""
        posted = messages().post(game_id, submission)
        # a seat's new key (CONTRACT section 15): a message of the seat's key ends its pending recovery
        service().message_posted(game_id, submission["envelope"]["seat"], posted)
        return posted


@blp.route("/<game_id>/messages/mute")
class Mute(MethodView):
    @rate_limited("REFEREE_RATE_MESSAGES_PER_ADDRESS", shared=True)
    @rate_limited("REFEREE_RATE_MESSAGES", key=seat_key)
    @blp.arguments(MuteSubmissionSchema())
    @blp.response(200, MuteDoneSchema)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_MESSAGES (per seat key) or "
                                                           "REFEREE_RATE_MESSAGES_PER_ADDRESS; see Retry-After")
    @_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The seats a seat mutes for itself (ctx ``referee/mute``; ``mute`` replaces its list, ``[]`` mutes
        nobody): its signed reads leave their messages out."""
        return messages().mute(game_id, submission)
