"""Device links (CONTRACT section 15): ``POST /keys/links``, ``GET /keys/links/{link}`` once, its status, the size
and rate limits — on the real work Redis; and ``referee key link`` / ``referee key fetch`` against a live server, the
fetched key moving a seat (``referee move --key FILE``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from click.testing import CliRunner

from referee.cli import main as cli
from referee.cli.keys import parse_link
from referee.protocol.keyfile import open_device_box, seal_device_box
from referee.protocol.signing import b64url_decode, b64url_encode, generate_key, private_key_b64, public_key_b64


def _box(size: int = 100) -> str:
    return b64url_encode(os.urandom(size))


def test_a_box_is_given_once_and_its_status_says_it_was_taken(make_app):
    app = make_app()
    client = app.test_client()
    box = _box()
    made = client.post("/keys/links", json={"box": box})
    assert made.status_code == 201 and made.headers["Cache-Control"] == "no-store"
    link = made.json["link"]
    assert len(link) == 22 and made.json["expires"].endswith("Z")
    assert client.get(f"/keys/links/{link}/status").json == {"taken": False, "expires": made.json["expires"]}
    assert client.get(f"/keys/links/{link}").json == {"box": box}
    again = client.get(f"/keys/links/{link}")
    assert again.status_code == 404 and again.json["error"]["code"] == "link/gone"
    assert client.get(f"/keys/links/{link}/status").json["taken"] is True
    # the Redis hash holds no box any more, only the mark until the link expires
    work = app.extensions["referee.store"].work
    assert work.hget(f"devlink:{link}", "box") is None and 0 < work.pttl(f"devlink:{link}") <= 600_000
    unknown = client.get("/keys/links/AAAAAAAAAAAAAAAAAAAAAA")
    assert unknown.status_code == 404 and unknown.json["error"]["code"] == "link/gone"
    assert client.get("/keys/links/not-a-link!/status").status_code == 404


def test_a_link_after_its_time_is_gone(make_app):
    app = make_app(REFEREE_DEVICE_LINK_SECONDS=0.3)
    client = app.test_client()
    link = client.post("/keys/links", json={"box": _box()}).json["link"]
    time.sleep(0.5)  # Redis expires the hash at its PEXPIREAT
    for path in (f"/keys/links/{link}", f"/keys/links/{link}/status"):
        answer = client.get(path)
        assert answer.status_code == 404 and answer.json["error"]["code"] == "link/gone", path


def test_a_box_over_the_limit_or_malformed_is_refused_and_nothing_stored(make_app):
    app = make_app()
    client = app.test_client()
    work = app.extensions["referee.store"].work
    before = set(work.scan_iter("devlink:*"))
    big = client.post("/keys/links", json={"box": _box(2049)})
    assert big.status_code == 413 and big.json["error"]["code"] == "link/too_large"
    assert big.json["error"]["details"] == {"size": 2049, "limit": 2048}
    assert client.post("/keys/links", json={"box": _box(2048)}).status_code == 201  # the limit itself is fine
    for bad in ({"box": "abc="}, {"box": _box(20)}, {}, {"box": 7}):
        answer = client.post("/keys/links", json=bad)
        assert answer.status_code == 400 and answer.json["error"]["code"] == "request/invalid", bad
    assert len(set(work.scan_iter("devlink:*")) - before) == 1


def test_making_links_is_limited_per_address(make_app):
    app = make_app(REFEREE_RATE_DEVICE_LINKS="3 per minute")
    client = app.test_client()
    assert [client.post("/keys/links", json={"box": _box()}).status_code for _ in range(3)] == [201] * 3
    refused = client.post("/keys/links", json={"box": _box()})
    assert refused.status_code == 429 and refused.json["error"]["code"] == "rate/limited"
    assert int(refused.headers["Retry-After"]) >= 1
    other = client.post("/keys/links", json={"box": _box()}, environ_base={"REMOTE_ADDR": "192.0.2.9"})
    assert other.status_code == 201


def test_the_box_opens_only_with_its_secret():
    key, secret = generate_key(), os.urandom(32)
    box = seal_device_box(key, "Ann", secret)
    opened, name = open_device_box(box, secret)
    assert (public_key_b64(opened), name) == (public_key_b64(key), "Ann")
    for wrong in (os.urandom(32), secret[:31]):
        try:
            open_device_box(box, wrong)
        except ValueError as exc:
            assert "secret" in str(exc)
        else:
            raise AssertionError("a wrong secret opened the box")


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input, env={"REFEREE_KEY_PASSPHRASE": None})
    return result.exit_code, result.output


def test_key_link_then_key_fetch_moves_a_key_file_that_then_moves_a_seat(server, tmp_path, store):
    ann, bea = generate_key(), generate_key()
    (tmp_path / "ann.key").write_text(private_key_b64(ann) + "\n")
    code, out = run("key", "link", "--key", str(tmp_path / "ann.key"), "--name", "Ann", "--no-wait", "--server", server)
    assert code == 0, out
    url = out.splitlines()[0]
    assert url.startswith(f"{server}/play/link/") and "#" in url
    assert "▀" in out or "█" in out  # the QR code, drawn in the terminal
    base, link, secret = parse_link(url)
    assert base == server and len(secret) == 32
    # the server holds the sealed box; the fragment's secret opens it
    kept = store.work.hget(f"devlink:{link}", "box").decode()
    assert public_key_b64(open_device_box(b64url_decode(kept), secret)[0]) == public_key_b64(ann)
    code, out = run("key", "fetch", url, "--out", str(tmp_path / "moved.key"))
    assert code == 0, out
    assert out.splitlines()[0] == public_key_b64(ann)
    assert oct((tmp_path / "moved.key").stat().st_mode & 0o777) == "0o600"
    assert (tmp_path / "moved.key").read_text() == private_key_b64(ann) + "\n"
    code, out = run("key", "fetch", url, "--out", str(tmp_path / "again.key"))
    assert code != 0 and "link/gone" in out and not (tmp_path / "again.key").exists()
    # the fetched key plays
    (tmp_path / "bea.key").write_text(private_key_b64(bea) + "\n")
    seats = ["--seat", f"ann={public_key_b64(ann)}", "--seat", f"bea={public_key_b64(bea)}"]
    code, out = run("create", "fivetowers", *seats, "--server", server)
    game = json.loads(out)["game"]
    for key in ("moved.key", "bea.key"):
        assert run("accept", game, "--key", str(tmp_path / key), "--server", server)[0] == 0
    code, out = run("move", game, '{"type": "bid", "amount": 1}', "--key", str(tmp_path / "moved.key"), "--wait", "0",
                    "--server", server)
    assert code == 0, out
    assert [e["type"] for e in store.read_log(game)][-1] == "move"


def test_key_link_waits_until_the_other_device_took_the_key(server, tmp_path):
    (tmp_path / "k.key").write_text(private_key_b64(generate_key()) + "\n")
    command = [sys.executable, "-m", "referee.cli", "key", "link", "--key", str(tmp_path / "k.key"), "--no-qr",
               "--server", server]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith(f"{server}/play/link/"), url
        code, out = run("key", "fetch", url, "--out", str(tmp_path / "there.key"))
        assert code == 0, out
        _out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "Waiting for the other device" in err and "taken by the other device" in err


def test_key_fetch_refuses_a_link_without_its_secret_before_asking_the_server(server, tmp_path):
    code, out = run("key", "fetch", f"{server}/play/link/AAAAAAAAAAAAAAAAAAAAAA", "--out", str(tmp_path / "x.key"))
    assert code != 0 and "#" in out and not (tmp_path / "x.key").exists()
    code, out = run("key", "fetch", "not a link", "--out", str(tmp_path / "x.key"))
    assert code != 0 and "not a device link" in out
