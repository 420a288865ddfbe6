"""Tournaments (CONTRACT section 10): the pure core — the creation spec, the log fold and its state, seed,
pairing, points, standings, tie-breaks, certificate and ratings; no Redis, Flask, RQ or clock there (see
``docs/tournaments.md``). The service over the store is the ``service`` package."""
