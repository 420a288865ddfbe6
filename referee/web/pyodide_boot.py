"""What the browser verifier (``/play/verify``, ``static/verify-worker.js``) runs first inside Pyodide.

It is served as the top-level module ``pyodide_boot`` beside the engine's own files (``referee/…``, ``schemas/…``,
``fixtures/…``) and imports nothing of them until :func:`verify_bytes` is called. The verifier is the referee's
own (:func:`referee.verify.verify_bundle`, exactly the code of ``referee verify``); the one thing Pyodide lacks is
the ``cryptography`` package (a C extension), of which ``referee.signing`` uses only Ed25519. :func:`install_ed25519`
puts in its place a module of the same names whose ``verify`` calls the page's synchronous Ed25519 check (the
audited ``@noble/ed25519``, RFC 8032 rules), so neither the signing module nor the verifier is changed.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from typing import Any

Check = Callable[[bytes, bytes, bytes], bool]  # (public key, signature, message) -> whether it is a signature


def install_ed25519(check: Check) -> None:
    """``cryptography``'s Ed25519 names as far as ``referee.signing`` uses them, verifying through ``check``.

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
            if len(signature) != 64 or not check(self._raw, bytes(signature), bytes(data)):
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
    """The report of ``referee verify --json`` for the bundle ``data`` and its exit status, as JSON text
    ``{"report", "exit_code"}`` (text, so that every ``null`` stays a ``null``: Pyodide makes ``None`` undefined)."""
    from referee.bundle import load_bundle  # noqa: PLC0415
    from referee.canonical import StrictJSONError  # noqa: PLC0415
    from referee.verify import unreadable_report, verify_bundle  # noqa: PLC0415

    try:
        bundle = load_bundle(bytes(data))
    except StrictJSONError as exc:  # the CLI's words (referee/cli/verification.py)
        report = unreadable_report(f"the file is not a strict JSON bundle: {exc}", exc.problems)
    else:
        report = verify_bundle(bundle, progress, referee_key=referee_key or None)
    return json.dumps({"report": report.to_dict(), "exit_code": report.exit_code}, ensure_ascii=False)
