"""``referee.host.runtime.settle_heap`` (issue 13: the tail of the latency was full garbage collections walking
the ~110,000 objects of start-up): run where the long-lived processes run it, in a process of its own
(freezing this test process's objects would change the suite's own collections)."""

from __future__ import annotations

import subprocess
import sys

from svc_helpers import REPO

CHECK = """
import gc, sys
from referee.host.runtime import settle_heap
import referee.running.gunicorn_conf as conf
frozen = settle_heap()
print(frozen, gc.get_freeze_count(), 'referee.games.fivetowers.game' in sys.modules,
      'referee.games.towerup.game' in sys.modules, callable(conf.post_worker_init))
"""


def test_settling_the_heap_freezes_the_start_up_objects_and_loads_every_engine():
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    frozen, count, fivetowers, towerup, hook = done.stdout.split()
    assert int(frozen) == int(count) > 20_000  # the imports alone are tens of thousands of objects
    assert (fivetowers, towerup, hook) == ("True", "True", "True")
