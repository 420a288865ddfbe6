"""The service's own game decisions beside the rules engines (``referee.games``): what the players decide
between themselves, not what a ruleset says. Pure: no clock, no I/O.

* :mod:`.decisions` — resignations, draw and abort offers, their answers and agreements (CONTRACT section 12).
* :mod:`.rematch` — a rematch's signed ask and the new game's id (CONTRACT section 14).

The fold (``referee.replay``), the service, the schemas and the verifier share them; the browser verifier
ships them too.
"""
