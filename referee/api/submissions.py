"""Signed submissions: acceptances, moves, vacations and aborts (CONTRACT section 3), resignations, offers and
answers (CONTRACT section 12), taking an open seat, leaving it and cancelling the game (CONTRACT section 14)."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from schemas.common import ErrorSchema
from schemas.games import RematchSchema
from schemas.keys import RecoverSubmissionSchema, RecoveryReceiptSchema, RekeySubmissionSchema
from schemas.submissions import (
    AbortSubmissionSchema,
    AcceptSubmissionSchema,
    AdjudicateSchema,
    AnswerSubmissionSchema,
    CancelSubmissionSchema,
    LeaveSubmissionSchema,
    MoveSubmissionSchema,
    OfferSubmissionSchema,
    ReceiptSchema,
    RematchSubmissionSchema,
    ResignSubmissionSchema,
    SeatSubmissionSchema,
    VacationSubmissionSchema,
    WaitQuerySchema,
)

from .games import service
from .limits import rate_limited
from .parsing import ApiBlueprint

blp = ApiBlueprint("submissions", __name__, url_prefix="/games",
                   description="Signed acceptances, moves, vacations, aborts, resignations, offers and answers, "
                               "open seats taken and left, cancels; a 2xx means durably in the log and carries the "
                               "referee's signed receipt")

_ERRORS = (400, 401, 403, 404, 409, 413, 415, 503)


def _document_errors(func: Any, codes: tuple[int, ...] = _ERRORS) -> Any:
    for code in codes:
        func = blp.alt_response(code, schema=ErrorSchema)(func)
    return func


@blp.route("/<game_id>/accept")
class Accept(MethodView):
    @blp.arguments(AcceptSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """A seat's signed acceptance with 32 bytes of entropy; after the last one the game starts."""
        return service().accept(game_id, submission)


@blp.route("/<game_id>/moves")
class Moves(MethodView):
    @blp.arguments(WaitQuerySchema(), location="query")
    @blp.arguments(MoveSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @blp.alt_response(200, schema=ReceiptSchema, description="with ?wait: the worker's verdict arrived in time")
    @blp.alt_response(422, schema=ErrorSchema, description="illegal move: the error names the rule")
    @_document_errors
    def post(self, query: dict[str, Any], submission: dict[str, Any], game_id: str) -> tuple[dict[str, Any], int]:
        """A seat's signed move: 202 with its log position; with ``?wait=<s>``, 200 and the worker's verdict."""
        status, receipt = service().submit_move(game_id, submission, query.get("wait"), legal=query["legal"])
        return receipt, status


@blp.route("/<game_id>/vacation")
class Vacation(MethodView):
    @blp.arguments(VacationSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="more than the seat's vacation left (TC-V1)")
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """A seat's signed vacation (``seconds`` from now): its clock stops for that long, within the game's
        vacation allowance (CONTRACT section 8)."""
        return service().vacation(game_id, submission)


@blp.route("/<game_id>/adjudicate")
class Adjudicate(MethodView):
    @blp.arguments(AdjudicateSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """End a running game by adjudication, signed (ctx ``referee/adjudicate``) by the game's adjudicator
        (a tournament's organiser) or organiser: ``method: provisional`` scores the position as it stands,
        ``method: organiser`` (the default) takes the ``ranks`` of the signed decision."""
        return service().adjudicate_signed(game_id, body)


@blp.route("/<game_id>/abort")
class Abort(MethodView):
    @blp.arguments(AbortSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """End a seeded game early and reveal its seed (signed by the organiser, or by a seat when the game
        has no organiser)."""
        return service().abort(game_id, submission)


# -- the players' own decisions (CONTRACT section 12) ------------------------------------------------
@blp.route("/<game_id>/resign")
class Resign(MethodView):
    @blp.arguments(ResignSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """A seat's signed resignation, whoever is to move: with two seats left the other wins and the game
        ends; with more the seat ranks below every seat still in the game and its turns are played by the
        ruleset's default move (DC-R1, DC-R2, DC-R3)."""
        return service().resign(game_id, submission)


@blp.route("/<game_id>/offers")
class Offers(MethodView):
    @rate_limited("REFEREE_RATE_OFFERS", shared=True)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_OFFERS (per client address); see "
                                                           "Retry-After")
    @blp.arguments(OfferSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """A seat's signed offer (draw, end, abort or takeback); its id is its log position (``position``).
        One offer is pending at a time (409 ``offer/pending``); 409 ``offer/not_allowed`` names the reason."""
        return service().offer(game_id, submission)


@blp.route("/<game_id>/offers/<int:position>/answer")
class Answer(MethodView):
    @rate_limited("REFEREE_RATE_OFFERS", shared=True)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_OFFERS (per client address); see "
                                                           "Retry-After")
    @blp.arguments(AnswerSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str, position: int) -> dict[str, Any]:
        """A seat's signed answer to the pending offer at ``position``: when every other seat still in the game
        has accepted, the referee appends ``agreed`` in the same step (409 ``offer/none_pending`` when no offer
        is pending there)."""
        return service().answer(game_id, position, submission)


# -- open seats and invitations (CONTRACT section 14) ------------------------------------------------
@blp.route("/<game_id>/seat")
class Seat(MethodView):
    @blp.arguments(SeatSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Take an open seat: ``sig`` by the joining key, and ``invite_sig`` by the invitation key for an invite
        seat (403 ``seat/bad_invite`` without it). Taking the seat is also its acceptance; after the last seat the
        game starts. Exactly one take gets a seat: a later one 409 ``seat/taken``; a key that holds a seat of the
        game already 409 ``seat/same_key``."""
        return service().take_seat(game_id, submission)


@blp.route("/<game_id>/leave")
class Leave(MethodView):
    @blp.arguments(LeaveSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The holder of an open seat gives it up before the game starts (signed by the key that took it): the
        seat is open again."""
        return service().leave_seat(game_id, submission)


@blp.route("/<game_id>/cancel")
class Cancel(MethodView):
    @blp.arguments(CancelSubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The creator's signed cancel of a game that has not started: status ``cancelled``, the seed revealed."""
        return service().cancel_game(game_id, submission)


@blp.route("/<game_id>/rematch")
class Rematch(MethodView):
    @blp.arguments(RematchSubmissionSchema())
    @blp.response(201, RematchSchema)
    @blp.alt_response(200, schema=RematchSchema, description="the rematch existed already (asked before, by any seat)")
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> Any:
        """A seat's signed ask for a rematch of a finished game: one new game with the same ruleset, options, clock
        and keys, the seats rotated by one, whose ``created`` says ``rematch_of: {game, head}``. 201 when this ask
        created it; asked again, by any seat, 200 with the same game. 409 ``game/not_finished`` before the end."""
        status, answer = service().rematch(game_id, submission)
        return answer, status


# -- a seat's new key (CONTRACT section 15) ---------------------------------------------------------
@blp.route("/<game_id>/rekey")
class Rekey(MethodView):
    @blp.arguments(RekeySubmissionSchema())
    @blp.response(202, ReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """A holder moves a seat to a new key, while the game waits or runs: ``sig`` by the seat's key, ``new_sig``
        by the envelope's ``key`` → entry ``rekeyed`` (reason ``holder``). From then on the seat's submissions are
        signed by the new key (the old one gets 401 ``submission/bad_signature``); 409 ``seat/same_key`` for a key
        that holds a seat of the game."""
        return service().rekey(game_id, submission)


@blp.route("/<game_id>/recover")
class Recover(MethodView):
    @rate_limited("REFEREE_RATE_OFFERS", shared=True)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_OFFERS (per client address); see "
                                                           "Retry-After")
    @blp.arguments(RecoverSubmissionSchema())
    @blp.response(202, RecoveryReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Ask to take over a seat whose key is lost, signed by the new ``key`` → entry ``recovery`` with
        ``not_before`` (now, or the end of the seat's vacation, + ``REFEREE_RECOVERY_WAIT``). The other seats answer
        it at ``/offers/{position}/answer``; once all accepted and ``not_before`` passed the referee writes
        ``rekeyed`` (reason ``recovered``); any submission of the seat's key meanwhile, or a decline, ends it
        (``recovery_declined``). 409 ``recovery/pending`` while one is pending for the seat."""
        wait = int(current_app.config.get("REFEREE_RECOVERY_WAIT", 72 * 3600))
        return service().recover(game_id, submission, wait)
