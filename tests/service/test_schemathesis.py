"""Schemathesis over ``/openapi.json`` (issue 14, item 10): requests that fit the published schema, to every
operation, never get a 5xx. Bounded so it stays a quick, deterministic part of the suite: positive
(schema-valid) data only, a few examples per operation, examples derived deterministically, no example
database. The requests go to an app on the suite's real Redis holding an active game.

The schema is the recorded ``tests/surface/openapi.json``, which ``tests/surface/test_surface.py`` holds equal,
byte for byte, to the document the app serves (reading it costs nothing; making an app to ask it for its
document took each xdist worker 0.9 s of CPU at collection). schemathesis's ``from_fixture`` does not work with
pytest 9 (``'Function' object has no attribute '_nodeid'``), so each case is sent to the fixture's app with
``app=``.

The operations are parametrized by pytest itself, one item per operation with its label in the id: under pytest 9
``schema.parametrize()`` gave all 44 items one node id, and pytest-xdist, which schedules by node id, ran one
of them (``tests/conftest.py`` now refuses a collection with a node id twice)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from svc_helpers import Http, accept_all, create_game

from referee.app import create_app

#: Examples per operation: 10 finds the unbounded ``GET /games?offset`` that answered 503 before issue 14
#: (5 did not); about 5 s for every operation on the shared machine.
EXAMPLES = 10


def _openapi() -> dict:
    return json.loads((Path(__file__).resolve().parents[1] / "surface" / "openapi.json").read_text())


#: the event streams (tag ``events``) answer 200 with a stream that stays open for minutes: their inputs are
#: checked by ``test_events.py`` and ``test_live_browser_stream.py``
schema = schemathesis.openapi.from_dict(_openapi()).exclude(tag="events")
schema.config.generation.update(modes=[GenerationMode.POSITIVE], max_examples=EXAMPLES, deterministic=True,
                                database="none")


@pytest.fixture(scope="module")
def target(tmp_path_factory, redis_server):
    """An app on the real Redis with an active game (module-wide: the cases only add refused requests)."""
    app = create_app({"REDIS_URL": redis_server.url, "REFEREE_VAR": str(tmp_path_factory.mktemp("schemathesis")),
                      "REFEREE_DISPATCH": "none", "REFEREE_MAX_WAIT": 0, "TESTING": True,
                      "REFEREE_QUEUE": "schemathesis"})
    game = create_game(Http(app.test_client()), "fivetowers", 2)
    accept_all(Http(app.test_client()), game)
    yield app
    app.extensions["referee.store"].close()


OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("operation", OPERATIONS, ids=[operation.label for operation in OPERATIONS])
def test_no_operation_answers_5xx_to_a_well_formed_request(operation, target):
    @given(case=operation.as_strategy(GenerationMode.POSITIVE))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def call(case):
        case.call_and_validate(app=target, checks=[not_a_server_error])

    call()
