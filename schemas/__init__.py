"""Marshmallow schemas for every body that enters or leaves the HTTP API (and its OpenAPI document).

``common`` (fields, errors, verdicts), ``submissions`` (signed moves, acceptances, aborts; receipts),
``games`` (creation, game, log, replay, result), ``rulesets``.
"""
