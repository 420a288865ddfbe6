"""A game's messages (CONTRACT section 12): signed, public or to chosen seats, in the game's own hash-chained
message stream beside its log (``referee.store.messages``), answered with the referee's receipt; private
ones readable only with a seat's signed read; per-seat mutes. The blueprint is ``referee.api.messages``, the
verifier's check of the public messages in a bundle ``referee.verify.messages``."""

from __future__ import annotations

from .service import MessageService, message_view, standing_of, visible_to

__all__ = ["MessageService", "message_view", "standing_of", "visible_to"]
