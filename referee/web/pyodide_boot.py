"""What the browser verifier (``/play/verify``, ``static/pages/verify-worker.js``) runs first inside Pyodide.

It is served as the top-level module ``pyodide_boot`` beside the engine's own files (``referee/…``, ``schemas/…``,
``fixtures/…``) and imports nothing of them until :func:`verify_bytes` is called. The verifier is the referee's
own (:func:`referee.verify.verify_bundle`, exactly the code of ``referee verify``); the one thing Pyodide lacks is
the ``cryptography`` package (a C extension), of which ``referee.protocol.signing`` uses only Ed25519.
:func:`install_ed25519` puts in its place a module of the same names whose ``verify`` calls the page's synchronous
Ed25519 check (the audited ``@noble/ed25519``, RFC 8032 rules), so neither the signing module nor the verifier is
changed.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from typing import Any

Check = Callable[[bytes, bytes, bytes], bool]  # (public key, signature, message) -> whether it is a signature
#: the Ed25519 answers of the bundle being verified, by (key, signature, message) bytes: the board replay's fold
#: (:func:`replay_views`) asks about the very signatures the verifier checked; emptied for each bundle
_CHECKED: dict[tuple[bytes, bytes, bytes], bool] = {}


def install_ed25519(check: Check) -> None:
    """``cryptography``'s Ed25519 names as far as ``referee.protocol.signing`` uses them, verifying through ``check``.

    Signing is not offered: the verifier signs nothing."""

    class InvalidSignature(Exception):
        pass

    class Ed25519PublicKey:
        def __init__(self, raw: bytes):
            self._raw = raw

        @classmethod
        def from_public_bytes(cls, data: bytes) -> Ed25519PublicKey:
            if len(data) != 32:
                raise ValueError("An Ed25519 public key is 32 bytes long")
            return cls(bytes(data))

        def verify(self, signature: bytes, data: bytes) -> None:
            memo = (self._raw, bytes(signature), bytes(data))  # the same bytes: the same answer
            if memo not in _CHECKED:
                _CHECKED[memo] = len(signature) == 64 and check(self._raw, bytes(signature), bytes(data))
            if not _CHECKED[memo]:
                raise InvalidSignature()

        def public_bytes(self, *_: Any) -> bytes:
            return self._raw

    class Ed25519PrivateKey:
        def __init__(self, *_: Any) -> None:
            raise NotImplementedError("the browser verifier signs nothing")

        generate = from_private_bytes = classmethod(lambda cls, *_: cls())

    class _Names:  # serialization.Encoding.Raw and the like: names only, never used to verify
        def __getattr__(self, name: str) -> str:
            return name

    names: dict[str, dict[str, Any]] = {
        "cryptography": {},
        "cryptography.exceptions": {"InvalidSignature": InvalidSignature},
        "cryptography.hazmat": {},
        "cryptography.hazmat.primitives": {},
        "cryptography.hazmat.primitives.serialization": {"Encoding": _Names(), "PublicFormat": _Names(),
                                                         "PrivateFormat": _Names(), "NoEncryption": _Names},
        "cryptography.hazmat.primitives.asymmetric": {},
        "cryptography.hazmat.primitives.asymmetric.ed25519": {"Ed25519PublicKey": Ed25519PublicKey,
                                                              "Ed25519PrivateKey": Ed25519PrivateKey},
    }
    for name, attributes in names.items():
        module = types.ModuleType(name, "Ed25519 of the browser verifier (referee/web/pyodide_boot.py)")
        module.__dict__.update(attributes)
        module.__path__ = []  # a package, so that the submodules import
        sys.modules[name] = module
    for name in names:  # cryptography.hazmat is an attribute of cryptography, and so on
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, sys.modules[name])


def engine_versions() -> dict[str, str]:
    """``{ruleset: version}`` of the engine files loaded: the content hash ``referee.games`` computes of them."""
    from referee.games import names, ruleset  # noqa: PLC0415 - the engine files are written first

    return {name: ruleset(name).version for name in names()}


def verify_bytes(data: bytes, referee_key: str | None,
                 progress: Callable[[str, int, int], None] | None) -> str:
    """The report of ``referee verify --json`` for the bundle ``data``, its exit status and the board replay of
    the verified log (:func:`replay_views`), as JSON text ``{"report", "exit_code", "replay"}`` (text, so that every
    ``null`` stays a ``null``: Pyodide makes ``None`` undefined)."""
    from referee.protocol.canonical import StrictJSONError  # noqa: PLC0415
    from referee.verify import unreadable_report, verify_bundle  # noqa: PLC0415
    from referee.verify.bundle import load_bundle  # noqa: PLC0415

    _CHECKED.clear()
    replay = None
    try:
        bundle = load_bundle(bytes(data))
    except StrictJSONError as exc:  # the CLI's words (referee/cli/verification.py)
        report = unreadable_report(f"the file is not a strict JSON bundle: {exc}", exc.problems)
    else:
        report = verify_bundle(bundle, progress, referee_key=referee_key or None)
        summary = report.to_dict()
        first = summary.get("first_failure") or {}
        seed_ok = all(c.get("status") != "failed" for c in summary["checks"] if c.get("name") == "seed_commitment")
        replay = replay_views(bundle, first.get("position") if report.exit_code == 1 else None, seed_ok)
    _CHECKED.clear()
    return json.dumps({"report": report.to_dict(), "exit_code": report.exit_code, "replay": replay},
                      ensure_ascii=False)


def replay_views(bundle: Any, stop: int | None = None, seed_ok: bool = True) -> dict[str, Any] | None:
    """The board replay of the page: the log folded by :class:`referee.replay.LogReplayer` (with the seed the log
    reveals, as the verifier's replay check) and, after each entry, the public view of the game that the service's
    ``GET /games/{id}/replay`` gives (``game.view()``, :func:`referee.games_service.folds.fold_with_states`), with
    the ruleset's ``components`` the board is drawn with. Only the verified part: the entries before ``stop`` (the
    first failing position), and none after an entry the fold cannot take; no seed unless ``seed_ok`` (the revealed
    seed matched the commitment), so a game whose deck is not proven has no board after its start. None when there
    is no log to fold or its ruleset is not installed."""
    from referee.games import ruleset  # noqa: PLC0415
    from referee.replay import LogReplayer, revealed_seed  # noqa: PLC0415

    log = bundle.get("log") if isinstance(bundle, dict) else None
    if not isinstance(log, list) or not log or not isinstance(log[0], dict):
        return None
    name = (log[0].get("ruleset") or {}).get("name") if isinstance(log[0].get("ruleset"), dict) else None
    if not isinstance(name, str):
        return None
    try:
        components = ruleset(name).components()
    except Exception:  # not installed (the ruleset_version check says so): no board
        return None
    entries = log[: stop if stop is not None else len(log)]
    try:
        replayer = LogReplayer(server_seed=revealed_seed(log) if seed_ok else None)
    except Exception:  # a seed the verifier reported as bad: no board
        return None
    steps: list[dict[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            break
        try:
            verdict = replayer.feed(entry)
        except Exception:  # the replay check names it; the board stops before it
            break
        steps.append({"position": len(steps), "type": entry.get("type"), "seat": entry.get("seat"),
                      "status": verdict.status, "move": _move_of(entry),
                      "view": replayer.game.view() if replayer.game is not None else None})
    seats = [{"name": s.get("name"), "key": s.get("key")} if isinstance(s, dict) else {}
             for s in (log[0].get("seats") or []) if isinstance(log[0].get("seats"), list)]
    return {"ruleset": name, "components": components, "seats": seats, "steps": steps}


def _move_of(entry: dict[str, Any]) -> Any:
    submission = entry.get("submission")
    envelope = submission.get("envelope") if isinstance(submission, dict) else None
    return envelope.get("move") if isinstance(envelope, dict) else None
