"""Issue 17 item 5 over HTTP: a body whose key looks like the strict parser's old in-band duplicate marker is
an ordinary unknown field (400), never a 500."""

from __future__ import annotations


def test_the_marker_key_in_an_api_body_is_a_400_not_a_500(make_app):
    client = make_app().test_client()
    for body in (b'{"\\u0000duplicates": 5}', b'{"ruleset": "fivetowers", "seats": [], "\\u0000duplicates": []}'):
        answer = client.post("/games", data=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, answer.json
        assert answer.json["error"]["code"] == "request/invalid"
