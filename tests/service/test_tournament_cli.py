"""``referee tournament create|join|withdraw|rekey|show|export`` against a live server."""

from __future__ import annotations

import json

from svc_helpers import run_cli as run


def test_create_join_show_withdraw_from_a_terminal(server, tmp_path):
    public = {}
    for name in ("ada", "bo", "cy"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        assert code == 0
        public[name] = out.strip()
    roster = [arg for name in public for arg in ("--player", f"{name}={public[name]}")]
    code, out = run("tournament", "create", "fivetowers", *roster,
                    "--format", "series", "--rounds", "2", "--time-control", "per_move:3d", "--server", server)
    assert code == 0, out
    created = json.loads(out)
    tid = created["tournament"]
    assert created["status"] == "waiting"
    for name in ("ada", "bo", "cy"):
        code, out = run("tournament", "join", tid, "--key", str(tmp_path / f"{name}.key"), "--server", server)
        assert code == 0, out
    assert json.loads(out)["status"] == "active"
    code, out = run("tournament", "join", tid, "--key", str(tmp_path / "ada.key"), "--server", server)
    assert code != 0 and "join/duplicate" in out
    code, out = run("tournament", "show", tid, "--server", server)
    assert code == 0 and "Round 1:" in out and "Standings:" in out and "ada" in out, out
    code, out = run("tournament", "show", tid, "--json", "--server", server)
    state = json.loads(out)
    assert state["rounds"][0]["tables"][0]["game"] == f"{tid}-r1-t1"
    code, out = run("tournament", "withdraw", tid, "--key", str(tmp_path / "cy.key"), "--server", server)
    assert code == 0, out
    code, out = run("tournament", "show", tid, "--json", "--server", server)
    assert [p["withdrawn"] for p in json.loads(out)["players"]] == [False, False, True]
    code, out = run("tournament", "export", tid, "--server", server)
    assert code != 0 and "tournament/not_revealed" in out


def test_an_organisers_tournament_decided_and_verified_from_a_terminal(server, tmp_path):
    public = {}
    for name in ("org", "ada", "bo"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        public[name] = out.strip()
    code, out = run("tournament", "create", "fivetowers", "--player", f"ada={public['ada']}", "--player",
                    f"bo={public['bo']}", "--format", "series", "--rounds", "1", "--adjudication", "organiser",
                    "--organiser-key", str(tmp_path / "org.key"), "--server", server)
    assert code == 0, out
    tid = json.loads(out)["tournament"]
    for name in ("ada", "bo"):
        assert run("tournament", "join", tid, "--key", str(tmp_path / f"{name}.key"), "--server", server)[0] == 0
    game = f"{tid}-r1-t1"
    for name in ("ada", "bo"):
        code, out = run("accept", game, "--key", str(tmp_path / f"{name}.key"), "--server", server)
        assert code == 0, out
    code, out = run("tournament", "adjudicate", tid, game, "--ranks", "2,1", "--reason", "bo was ahead",
                    "--key", str(tmp_path / "ada.key"), "--server", server)
    assert code != 0 and "adjudication/bad_signature" in out
    assert run("keygen", "--out", str(tmp_path / "ada2.key"))[0] == 0  # ada moves to a new key for the rounds to come
    rekey = ("tournament", "rekey", tid, "--player", public["ada"], "--new-key", str(tmp_path / "ada2.key"))
    code, out = run(*rekey, "--key", str(tmp_path / "bo.key"), "--server", server)
    assert code != 0 and "submission/bad_signature" in out
    code, out = run(*rekey, "--key", str(tmp_path / "org.key"), "--server", server)
    assert code == 0 and json.loads(out)["position"] > 0, out
    code, out = run("tournament", "adjudicate", tid, game, "--ranks", "2,1", "--reason", "bo was ahead",
                    "--key", str(tmp_path / "org.key"), "--server", server)
    assert code == 0, out
    code, out = run("tournament", "status", tid, "--server", server)
    assert code == 0 and "finished" in out and "[organiser]" in out, out
    code, out = run("tournament", "export", tid, "--out", str(tmp_path / "cert.json"), "--server", server)
    assert code == 0, out
    code, out = run("verify-tournament", str(tmp_path / "cert.json"))
    assert code == 0 and "VERIFIED" in out, out


def test_open_and_invited_registrations_from_a_terminal(server, tmp_path):
    """``create --open/--invite`` (signed by --organiser-key), ``join`` by id with --name or by the printed link
    (the seed signs invite_sig), ``start`` by the organiser."""
    for name in ("org", "ada", "bo", "cy"):
        assert run("keygen", "--out", str(tmp_path / f"{name}.key"))[0] == 0
    code, out = run("tournament", "create", "fivetowers", "--open", "--max-players", "4", "--server", server)
    assert code != 0 and "--organiser-key" in out
    code, out = run("tournament", "create", "fivetowers", "--open", "--max-players", "4", "--table-size", "2",
                    "--organiser-key", str(tmp_path / "org.key"), "--server", server)
    assert code == 0, out
    tid = json.loads(out)["tournament"]
    for name in ("ada", "bo"):
        code, out = run("tournament", "join", tid, "--key", str(tmp_path / f"{name}.key"), "--name", name.title(),
                        "--server", server)
        assert code == 0, out
    code, out = run("tournament", "start", tid, "--key", str(tmp_path / "ada.key"), "--server", server)
    assert code != 0 and "submission/bad_signature" in out
    code, out = run("tournament", "start", tid, "--key", str(tmp_path / "org.key"), "--server", server)
    assert code == 0 and json.loads(out)["status"] == "active", out
    state = json.loads(run("tournament", "show", tid, "--json", "--server", server)[1])
    assert [p["name"] for p in state["players"]] == ["Ada", "Bo"] and len(state["rounds"]) == 1

    code, out = run("tournament", "create", "fivetowers", "--invite", "--max-players", "2", "--table-size", "2",
                    "--organiser-key", str(tmp_path / "org.key"), "--server", server)
    assert code == 0, out
    created = json.loads(out)
    link = created["link"]
    assert link.startswith(f"{server}/play/tournaments/{created['tournament']}/join#")
    bare = link.partition("#")[0]
    code, out = run("tournament", "join", bare, "--key", str(tmp_path / "cy.key"), "--name", "Cy")
    assert code != 0 and "registration/bad_invite" in out
    for name in ("cy", "ada"):
        code, out = run("tournament", "join", link, "--key", str(tmp_path / f"{name}.key"), "--name", name.title())
        assert code == 0, out
    assert json.loads(out)["status"] == "active"
