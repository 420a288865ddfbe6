"""Running the referee's processes, for ``referee serve`` and for the operator (``docs/operations.md``).

* :mod:`.embedded_redis` — a real ``redis-server`` started and stopped by ``referee serve`` (and the tests).
* :mod:`.embedded_cluster` — a real 3-master Redis Cluster, for the tests and benchmarks of the cluster store.
* :mod:`.supervise` — ``referee serve``'s children restarted with backoff when they die.
* :mod:`.gunicorn_conf` — the web server's settings (``gunicorn -c python:referee.running.gunicorn_conf``: the
  Procfile and ``referee serve``).
* :mod:`.backup` — ``referee backup`` and ``referee restore`` of what cannot be rebuilt.
"""
