"""Tournaments (CONTRACT section 10): the pure core — the log fold, seed, pairing, points, standings,
tie-breaks, certificate and ratings. No Redis, Flask, RQ or clock here; see ``docs/tournaments.md``."""
