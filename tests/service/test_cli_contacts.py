"""``referee contact add|list|change|remove`` against a real server: each request signed with the key file
(CONTRACT section 9)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from live_server import serving

from referee.cli import main


def test_the_contact_commands_register_list_change_and_remove(app, tmp_path):
    runner = CliRunner()
    key = tmp_path / "erin.key"
    assert runner.invoke(main, ["keygen", "--out", str(key)]).exit_code == 0
    with serving(app) as url:
        def run(*args):
            result = runner.invoke(main, ["contact", *args, "--key", str(key), "--server", url])
            assert result.exit_code == 0, result.output
            return json.loads(result.output)

        added = run("add", "--webhook", "http://127.0.0.1:9/erin", "--events", "turn,finished")
        assert added["secret"].startswith("whsec_") and added["events"] == ["turn", "finished"]
        assert [c["id"] for c in run("list")["contacts"]] == [added["id"]]
        changed = run("change", added["id"], "--webhook", "http://127.0.0.1:9/erin2", "--events", "turn")
        assert changed["webhook"].endswith("/erin2") and changed["events"] == ["turn"]
        assert run("remove", added["id"])["removed"] is True
        assert run("list")["contacts"] == []
        refused = runner.invoke(main, ["contact", "remove", added["id"], "--key", str(key), "--server", url])
        assert refused.exit_code != 0 and "contact/not_found" in refused.output
