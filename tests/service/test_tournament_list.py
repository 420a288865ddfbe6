"""``GET /tournaments`` (the tournaments page's list): newest first, paged like ``GET /games``, a summary each;
a bad page is a 400 and nothing else."""

from __future__ import annotations

from tournament_helpers import Players, join


def test_the_list_is_newest_first_and_paged(http):
    made = []
    for n in (2, 3, 4):
        players = Players(n)
        status, created = http.post("/tournaments", players.body(format={"kind": "round_robin"}))
        assert status == 201, created
        made.append((created["tournament"], players))
    first, _ = made[0]
    status, receipt = join(http, first, made[0][1].keys[0])
    assert status == 202, receipt

    status, page = http.get("/tournaments?limit=2")
    assert status == 200, page
    assert [t["tournament"] for t in page["tournaments"]] == [made[2][0], made[1][0]]
    assert page["offset"] == 0 and page["next"] == 2
    newest = page["tournaments"][0]
    assert newest["status"] == "waiting" and newest["players"] == 4 and newest["joined"] == 0
    assert newest["ruleset"]["name"] == "fivetowers" and newest["format"]["kind"] == "round_robin"
    assert newest["round"] == 0 and newest["seq"] == 1 and len(newest["head"]) == 64 and newest["created_at"]

    status, rest = http.get("/tournaments?offset=2&limit=2")
    assert status == 200 and rest["next"] is None
    assert [(t["tournament"], t["joined"], t["seq"]) for t in rest["tournaments"]] == [(first, 1, 2)]
    status, everything = http.get("/tournaments")
    assert status == 200 and len(everything["tournaments"]) == 3 and everything["next"] is None
    status, far = http.get(f"/tournaments?offset={2**53 - 1}&limit=100")  # the largest offset: an empty page
    assert status == 200 and far == {"tournaments": [], "offset": 2**53 - 1, "next": None}


def test_a_bad_page_is_refused(http):
    for query in ("limit=101", "limit=0", "offset=-1", "limit=x"):
        status, error = http.get(f"/tournaments?{query}")
        assert status == 400 and error["error"]["code"] == "request/invalid", (query, error)
