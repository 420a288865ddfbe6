"""The signed-log protocol: what a third-party client or verifier needs, and what the service itself signs and
chains by. Imports nothing of the service.

* :mod:`.canonical` — strict JSON in, RFC 8785 bytes out: what every signature and hash is taken over.
* :mod:`.signing` — Ed25519 keys, the signing contexts (``ctx``) of every envelope, sign and verify (CONTRACT
  section 3).
* :mod:`.logchain` — the hash chain of a game's log (CONTRACT section 5), of its messages and of a tournament's.
* :mod:`.keyfile` — the player's key files, plain and passphrase-encrypted (``docs/keys.md``).

The browser verifier (``/play/verify``) ships ``canonical``, ``signing`` and ``logchain`` to Pyodide
(``referee/web/verify_page.py``).
"""
