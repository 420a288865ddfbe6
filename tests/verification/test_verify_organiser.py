"""The organiser's signature of a game's creation is re-checked offline (check ``organiser_signature``).

The games are created through the real API (``POST /games`` with ``organiser: {key, sig}``), so the
request the verifier rebuilds from the ``created`` entry is proved to be the one the service checked.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from click.testing import CliRunner
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamelogs import AT, reseal, seat_key
from test_verification_doc import run_recipe

from referee.app import create_app
from referee.cli.verification import verify_command
from referee.games_service.core import signed_game_id as service_game_id
from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, b64url_encode, public_key_b64, sign
from referee.verify import CHECK_ORDER, creation_requests, signed_game_id, verify_bundle
from referee.verify.bundle import build_bundle, sign_bundle

ORGANISER = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"tests/verification/organiser").digest())
ORGANISER_KEY = public_key_b64(ORGANISER)
FORGER = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"tests/verification/forger").digest())


@pytest.fixture
def client(tmp_path):
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_KEY_FILE": str(tmp_path / "referee-key"), "TESTING": True,
                      "REFEREE_ORGANISER_KEYS": [ORGANISER_KEY]})
    return app.test_client()


def create_signed(client, body, key=ORGANISER):
    """POST /games signed by ``key`` the way the API documents it; returns the exported bundle."""
    signed = {**body, "organiser": {"key": public_key_b64(key), "sig": sign(key, {"v": 1, "ctx": "referee/create",
                                                                                   **body})}}
    response = client.post("/games", data=json.dumps(signed), content_type="application/json")
    assert response.status_code == 201, response.get_json()
    game = response.get_json()["game"]
    return client.get(f"/games/{game}/export").get_json()


def seats(players, seed=40):
    return [{"name": f"p{i}", "key": public_key_b64(seat_key(seed, i))} for i in range(players)]


def bodies():
    from referee.games import ruleset

    deck = [card["id"] for card in ruleset("fivetowers").components()["cards"] if card["min_players"] <= 2]
    return {
        "no options": {"ruleset": "fivetowers", "seats": seats(3)},
        "empty options": {"ruleset": "fivetowers", "seats": seats(3), "options": {}},
        "options": {"ruleset": "towerup", "seats": seats(2), "options": {"extra_start_floors": 1}},
        "nonce": {"ruleset": "fivetowers", "seats": seats(2), "options": {}, "nonce": "round 1, table 4"},
        "recorded deck": {"ruleset": "fivetowers", "seats": seats(2), "deck": deck},
    }


@pytest.mark.parametrize("case", list(bodies()))
def test_organiser_signed_creation_re_checks_offline(client, case):
    bundle = create_signed(client, bodies()[case])
    report = verify_bundle(bundle)
    check = report.check("organiser_signature")
    assert [c.name for c in report.checks] == list(CHECK_ORDER)
    assert check.status == "passed" and check.position is None, check.to_dict()
    assert check.reason == f"created by organiser {ORGANISER_KEY}: its signature over the creation request checks"
    assert report.summary["organiser"] == ORGANISER_KEY and report.to_dict()["organiser"] == ORGANISER_KEY
    assert report.status in ("verified", "incomplete") and report.first_failure is None


def test_the_game_id_derivation_is_the_services():
    sig = sign(ORGANISER, {"v": 1})
    assert signed_game_id(sig) == service_game_id(sig)


def test_cli_names_the_organiser(client, tmp_path):
    bundle = create_signed(client, bodies()["options"])
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    result = CliRunner().invoke(verify_command, [str(path)])
    lines = result.stdout.splitlines()
    assert lines[0].endswith(f", created by organiser {ORGANISER_KEY}")
    assert (f"  [pass] organiser_signature  created by organiser {ORGANISER_KEY}: its signature over the "
            "creation request checks") in lines


def forged(bundle, edit, key=None):
    """The bundle with its ``created`` entry edited, the chain recomputed and re-signed (a dishonest referee)."""
    entries = [dict(e) for e in bundle["log"]]
    entries[0] = json.loads(json.dumps(entries[0]))
    edit(entries[0])
    return build_bundle(reseal(entries), key or REFEREE)


REFEREE = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"tests/verification/organiser-referee").digest())


def _rename_seat(created):
    created["seats"][1]["name"] = "mallory"


def _change_options(created):
    created["options"] = {"extra_start_floors": 2}


def _drop_sig(created):
    del created["organiser_sig"]


def _other_organiser(created):
    created["organiser"] = public_key_b64(FORGER)


def _re_signed_by_forger(created):
    """A forger signs the (same) request with its own organiser key: the signature checks, the id does not."""
    created["organiser"] = public_key_b64(FORGER)
    created["organiser_sig"] = sign(FORGER, creation_requests(created)[0])


def _no_organiser_key(created):
    created["organiser"] = None


@pytest.mark.parametrize(("edit", "reason"), [
    (_rename_seat, f"organiser_sig is not organiser {ORGANISER_KEY}'s signature over the creation request"),
    (_change_options, f"organiser_sig is not organiser {ORGANISER_KEY}'s signature over the creation request"),
    (_other_organiser, f"organiser_sig is not organiser {public_key_b64(FORGER)}'s signature"),
    (_drop_sig, f"the created entry names organiser {ORGANISER_KEY} but carries no organiser_sig"),
    (_re_signed_by_forger, "is not the one derived from the organiser's signature"),
    (_no_organiser_key, "the created entry's organiser is not a base64url Ed25519 public key"),
])
def test_an_altered_created_entry_fails_the_organiser_check_at_position_0(client, edit, reason):
    bundle = forged(create_signed(client, bodies()["options"]), edit)
    report = verify_bundle(bundle)
    check = report.check("organiser_signature")
    assert check.status == "failed" and check.position == 0 and reason in check.reason, check.to_dict()
    assert report.status == "failed"
    assert report.check("hash_chain").status == "passed"  # the forger recomputed the chain


def test_a_game_without_organiser_skips_the_check_as_not_applicable(tmp_path):
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_KEY_FILE": str(tmp_path / "referee-key"), "TESTING": True})
    client = app.test_client()
    response = client.post("/games", data=json.dumps({"ruleset": "fivetowers", "seats": seats(2)}),
                           content_type="application/json")
    bundle = client.get(f"/games/{response.get_json()['game']}/export").get_json()
    report = verify_bundle(bundle)
    check = report.check("organiser_signature")
    assert (check.status, check.ok, check.applicable) == ("skipped", None, False)
    assert check.to_dict()["applicable"] is False and report.summary["organiser"] is None
    # a not-applicable skip does not make a bundle incomplete; the interim skips do
    assert report.status == "incomplete" and {c.name for c in report.checks if c.status == "skipped"} == {
        "organiser_signature", "seed_commitment", "result"}


def test_an_organiser_sig_smuggled_into_a_game_without_organiser_fails(client, tmp_path):
    bundle = create_signed(client, bodies()["nonce"])

    def strip(created):
        created["organiser"] = None

    report = verify_bundle(sign_bundle(forged(bundle, strip), REFEREE))
    assert report.check("organiser_signature").status == "failed"


def finish_over_http(client, game_id, players, seed=40):
    """Accept from every seat and play random legal moves to the end."""
    keys = [seat_key(seed, i) for i in range(players)]
    chooser = random.Random(seed)
    for seat, key in enumerate(keys):
        state = client.get(f"/games/{game_id}").get_json()
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game_id, "seat": seat, "seq": state["seq"],
                    "prev": state["head"], "entropy": b64url_encode(bytes([seat]) * 32), "at": AT}
        assert client.post(f"/games/{game_id}/accept", json={"envelope": envelope, "sig": sign(key, envelope)}
                           ).status_code == 202
    while (legal := client.get(f"/games/{game_id}/legal-moves").get_json())["status"] == "active":
        seat = legal["to_move"]
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": game_id, "seat": seat, "seq": legal["seq"],
                    "prev": legal["head"], "move": chooser.choice(legal["moves"]), "at": AT}
        assert client.post(f"/games/{game_id}/moves", json={"envelope": envelope, "sig": sign(keys[seat], envelope)}
                           ).status_code == 202
    return client.get(f"/games/{game_id}/export").get_json()


@pytest.mark.parametrize("case", ["no options", "empty options"])
def test_the_by_hand_recipe_checks_the_organiser_too(client, case, tmp_path, monkeypatch):
    started = create_signed(client, bodies()[case])
    bundle = finish_over_http(client, started["game"], 3)
    report = verify_bundle(bundle)
    assert report.ok, report.to_dict()
    assert run_recipe(bundle, tmp_path, monkeypatch) == f"created by organiser {ORGANISER_KEY}\nverified by hand\n"
    with pytest.raises(InvalidSignature):
        run_recipe(forged(bundle, _rename_seat), tmp_path, monkeypatch)
