"""The strict parser's duplicate keys are kept out of band (issue 17 item 5): no key a client sends can pose
as the parser's own bookkeeping."""

from __future__ import annotations

import pytest

from referee.protocol.canonical import StrictJSONError, parse_strict


@pytest.mark.parametrize("body", [b'{"\\u0000duplicates": 5}', b'{"\\u0000duplicates": []}',
                                  b'{"a": {"\\u0000duplicates": ["a"]}}'])
def test_a_key_like_the_old_marker_is_just_a_key(body):
    value = parse_strict(body)
    inner = value.get("a", value)
    assert "\x00duplicates" in inner  # kept as the client sent it; the schema then refuses unknown fields


def test_duplicates_are_still_every_one_reported():
    with pytest.raises(StrictJSONError) as caught:
        parse_strict(b'{"a": 1, "a": 2, "b": {"c": 1, "c": 1, "\\u0000duplicates": []}}')
    assert caught.value.problems == [{"path": "$", "problem": "duplicate key 'a'"},
                                     {"path": "$.b", "problem": "duplicate key 'c'"}]
