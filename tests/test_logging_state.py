"""The check that every test leaves logging as it found it (``tests/logging_state.py``, the autouse fixture of
``tests/conftest.py``; issue 50): it names what import-linter's ``dictConfig`` changed, and puts it back."""

from __future__ import annotations

import logging
import logging.config

from logging_state import changes, kept, restore, snapshot


def test_a_dict_config_that_disables_the_loggers_there_are_is_named_and_put_back():
    # (loggers that exist before the snapshot: run alone, or first on its worker, nothing has made rq's yet)
    existing = logging.getLogger("workers.allowlist")
    for name in ("importlinter", "rq.worker"):
        logging.getLogger(name)
    before = snapshot()
    logging.config.dictConfig({"version": 1, "handlers": {"console": {"class": "logging.NullHandler"}},
                               "loggers": {"importlinter": {"level": "INFO", "handlers": ["console"]}}})
    logging.getLogger("rq.worker").propagate = False
    logging.disable(logging.CRITICAL)
    found = changes(before)
    assert "workers.allowlist: disabled False -> True" in found
    assert "rq.worker: propagate True -> False" in found
    assert any(line.startswith("importlinter: level") for line in found)
    assert "logging.disable: 0 -> 50" in found
    restore(before)
    assert changes(before) == []
    assert not existing.disabled and logging.getLogger("rq.worker").propagate
    assert logging.root.manager.disable == 0


def test_kept_puts_back_a_level_and_a_handler_set_within_it():
    before = snapshot()
    with kept():
        logging.getLogger().setLevel(logging.DEBUG)
        logging.getLogger("rq.job").addHandler(logging.NullHandler())
        assert changes(before)
    assert changes(before) == []
