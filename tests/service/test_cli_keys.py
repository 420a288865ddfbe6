"""``referee keygen --encrypt`` and ``--key`` with a passphrase-encrypted key file (``docs/keys.md``), against a
live server; the plain ``referee keygen`` file keeps working (``test_cli.py``)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from referee.cli import main as cli
from referee.protocol.keyfile import decrypt_key, encrypt_key
from referee.protocol.signing import generate_key, private_key_b64, public_key_b64


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input, env=env or {"REFEREE_KEY_PASSPHRASE": None})
    return result.exit_code, result.output


def test_keygen_encrypt_writes_the_format_with_a_prompted_passphrase(tmp_path):
    path = tmp_path / "ann.key"
    code, out = run("keygen", "--out", str(path), "--encrypt", "--name", "Ann", input="s3cret\ns3cret\n")
    assert code == 0, out
    public = out.strip().splitlines()[-1]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    document = json.loads(path.read_text())
    assert document["format"] == "referee-key" and document["name"] == "Ann" and document["public"] == public
    assert public_key_b64(decrypt_key(path.read_text(), "s3cret")) == public
    # the passphrase is asked twice; two different answers write nothing
    code, out = run("keygen", "--out", str(tmp_path / "bea.key"), "--encrypt", input="one\ntwo\none\none\n")
    assert code == 0 and (tmp_path / "bea.key").exists()
    assert "do not match" in out
    code, out = run("keygen", "--out", str(path), "--encrypt", input="x\nx\n")
    assert code != 0 and "not overwriting" in out


def test_an_encrypted_key_signs_accept_and_move(server, tmp_path, store):
    ann, bea = generate_key(), generate_key()
    (tmp_path / "ann.key").write_text(encrypt_key(ann, "ann's passphrase", name="Ann"))
    (tmp_path / "bea.key").write_text(private_key_b64(bea) + "\n")  # the plain format, still read
    code, out = run("create", "fivetowers", "--seat", f"ann={public_key_b64(ann)}", "--seat",
                    f"bea={public_key_b64(bea)}", "--server", server)
    assert code == 0, out
    game = json.loads(out)["game"]
    # the passphrase from the environment...
    code, out = run("accept", game, "--key", str(tmp_path / "ann.key"), "--server", server,
                    env={"REFEREE_KEY_PASSPHRASE": "ann's passphrase"})
    assert code == 0, out
    code, out = run("accept", game, "--key", str(tmp_path / "bea.key"), "--server", server)
    assert code == 0, out
    # ...or asked for
    code, out = run("move", game, '{"type": "bid", "amount": 1}', "--key", str(tmp_path / "ann.key"), "--wait", "0",
                    "--server", server, input="ann's passphrase\n")
    assert code == 0, out
    assert json.loads(out[out.index("{"):])["position"] == 4
    log = store.read_log(game)
    assert [e["type"] for e in log] == ["created", "accepted", "accepted", "started", "move"]


def test_a_wrong_passphrase_is_refused_before_anything_is_sent(server, tmp_path, store):
    key = generate_key()
    (tmp_path / "k.key").write_text(encrypt_key(key, "right"))
    code, out = run("create", "fivetowers", "--seat", f"a={public_key_b64(key)}", "--seat",
                    f"b={public_key_b64(generate_key())}", "--server", server)
    game = json.loads(out)["game"]
    code, out = run("accept", game, "--key", str(tmp_path / "k.key"), "--server", server,
                    env={"REFEREE_KEY_PASSPHRASE": "wrong"})
    assert code == 2 and "wrong passphrase" in out
    (tmp_path / "broken.key").write_text('{"format": "referee-key", "version": 9}')
    code, out = run("accept", game, "--key", str(tmp_path / "broken.key"), "--server", server)
    assert code == 2 and "version 9 is not supported" in out and "Passphrase" not in out
    assert [e["type"] for e in store.read_log(game)] == ["created"]
