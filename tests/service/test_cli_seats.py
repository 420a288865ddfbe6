"""Open seats from a terminal (CONTRACT section 14, issue 36 item 6): ``referee create --invite/--open --key``
prints join links whose seed the server never sees, ``referee join LINK`` takes the seat they offer and says
in words why not, ``leave`` and ``cancel`` before the start, and ``rematch`` asked twice gives one game."""

from __future__ import annotations

import json

from click.testing import CliRunner

from referee.cli import main


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``referee ARGS…`` in process: its exit code, standard output and standard error apart."""
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def keys(tmp_path, *names: str) -> dict[str, str]:
    public = {}
    for name in names:
        code, out, _err = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        assert code == 0, out
        public[name] = out.strip()
    return public


def test_an_invitation_link_takes_its_seat_once_and_the_game_starts(server, tmp_path, store):
    public = keys(tmp_path, "alice", "bob", "carol")
    code, out, err = run("create", "towerup", "--seat", f"alice={public['alice']}", "--invite", "",
                         "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out + err
    created = json.loads(out)
    game_id = created["game"]
    [link] = created["links"]
    assert link["seat"] == 1 and link["open"] == "invite"
    assert link["link"].startswith(f"{server}/play/join/{game_id}#")
    seed = link["link"].partition("#")[2]
    log = store.read_log(game_id)
    assert seed not in json.dumps(log) and public["alice"] in json.dumps(log[0]["creator"])
    code, out, err = run("join", link["link"], "--key", str(tmp_path / "bob.key"), "--name", "Bob")
    assert code == 0, out + err
    assert "seat 1" in err and json.loads(out)["receipt"]
    code, out, err = run("join", link["link"], "--key", str(tmp_path / "carol.key"), "--name", "Carol")
    assert code == 1 and "seat/taken" in err, out + err
    code, out, err = run("accept", game_id, "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out + err
    assert json.loads(out)["status"] == "active"
    assert [e["type"] for e in store.read_log(game_id)] == ["created", "seated", "accepted", "started"]
    code, out, err = run("join", link["link"], "--key", str(tmp_path / "carol.key"), "--name", "Carol")
    assert code == 1 and "game/not_waiting" in err, out + err


def test_a_seat_open_to_anyone_a_bad_invitation_a_leave_and_a_cancel(server, tmp_path, store):
    keys(tmp_path, "alice", "bob")
    code, out, err = run("create", "towerup", "--invite", "Bob", "--open", "", "--server", server)
    assert code != 0 and "--key" in out + err
    code, out, err = run("create", "towerup", "--invite", "Bob", "--open", "", "--key", str(tmp_path / "alice.key"),
                         "--server", server)
    assert code == 0, out + err
    created = json.loads(out)
    game_id = created["game"]
    assert [(s["seat"], s["open"]) for s in created["links"]] == [(0, "invite"), (1, "anyone")]
    assert created["links"][1]["link"] == f"{server}/play/join/{game_id}"
    code, out, err = run("join", created["links"][0]["link"] + "AAAA", "--key", str(tmp_path / "bob.key"))
    assert code == 1 and "not valid" in err, out + err
    code, out, err = run("join", f"{server}/play/join/{game_id}", "--key", str(tmp_path / "bob.key"))
    assert code != 0 and "--name" in out + err
    code, out, err = run("join", f"{server}/play/join/{game_id}", "--key", str(tmp_path / "bob.key"), "--name", "Zed")
    assert code == 0, out + err
    assert "seat 1" in err
    code, out, err = run("leave", game_id, "--key", str(tmp_path / "bob.key"), "--server", server)
    assert code == 0, out + err
    assert store.read_log(game_id)[-1]["type"] == "left"
    code, out, err = run("cancel", game_id, "--key", str(tmp_path / "bob.key"), "--server", server)
    assert code == 1 and json.loads(out)["error"]["code"] == "submission/bad_signature"
    code, out, err = run("cancel", game_id, "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out + err
    code, out, err = run("join", f"{server}/play/join/{game_id}", "--key", str(tmp_path / "bob.key"), "--name", "Zed")
    assert code == 1 and "game/cancelled" in err, out + err
    code, out, err = run("join", "https://example.org/games/x", "--key", str(tmp_path / "bob.key"))
    assert code == 2 and "not a join link" in out + err


def test_refusals_of_a_join_speak_german(server, tmp_path):
    keys(tmp_path, "alice", "bob")
    code, out, err = run("create", "towerup", "--invite", "", "--open", "", "--key", str(tmp_path / "alice.key"),
                         "--server", server)
    game_id = json.loads(out)["game"]
    code, out, err = run("join", f"{server}/play/join/{game_id}#AAAA", "--key", str(tmp_path / "bob.key"),
                         "--name", "Bob", env={"LANGUAGE": "de"})
    assert code == 1 and "Einladungslink" in err, err


def test_a_rematch_asked_twice_is_one_game(server, tmp_path):
    public = keys(tmp_path, "alice", "bob")
    code, out, err = run("create", "towerup", "--seat", f"alice={public['alice']}", "--seat", f"bob={public['bob']}",
                         "--server", server)
    game_id = json.loads(out)["game"]
    for name in ("alice", "bob"):
        assert run("accept", game_id, "--key", str(tmp_path / f"{name}.key"), "--server", server)[0] == 0
    code, out, err = run("rematch", game_id, "--key", str(tmp_path / "bob.key"), "--server", server)
    assert code == 1 and "refused" in err, out + err
    code, out, err = run("resign", game_id, "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out + err
    code, out, err = run("rematch", game_id, "--key", str(tmp_path / "bob.key"), "--server", server)
    assert code == 0, out + err
    first = json.loads(out)
    assert first["rematch_of"]["game"] == game_id and f"the rematch is {first['game']}" in err
    code, out, err = run("rematch", game_id, "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out + err
    assert json.loads(out)["game"] == first["game"] and "existed already" in err
