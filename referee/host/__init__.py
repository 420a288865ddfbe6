"""What every referee process takes from its machine: the web workers, ``referee worker``, ``referee serve``
and the command line alike.

* :mod:`.logs` — the log lines (text, or JSON with ``REFEREE_LOG_FORMAT=json``) and their context.
* :mod:`.metrics` — every Prometheus series, across processes (CONTRACT section 13, "Metrics").
* :mod:`.diskspace` — the free space under the log Redis and the floor kept above a full disk.
* :mod:`.durable` — a folder's fsync, so that a written file survives a crash.
* :mod:`.runtime` — a long-running process's start-up: every engine loaded, the heap frozen out of the collector.
"""
