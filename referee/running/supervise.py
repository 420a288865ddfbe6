"""Process supervision for ``referee serve``: restart a child that dies, with backoff, and say so.

``serve`` runs the embedded Redis servers, the replay workers and the web server as child processes,
each the leader of a process group (session) of its own. The :class:`Supervisor` watches the workers
and the web server: when one exits without being asked to, it is started again after a delay that
doubles with each quick death (:class:`Backoff`: 0.25 s, 0.5 s, 1 s … at most 30 s; a child that ran
for ``stable_after`` seconds starts again from the shortest delay), and every death and restart is
logged. Whatever the dead child left behind in its process group (the RQ scheduler a worker forks,
gunicorn's workers) is terminated first, so that nothing is orphaned and the port is free again.

The log's embedded Redis is restarted too, on the same files (issue 50: a full disk it met, an OOM kill):
the web answers 503 while it is down and the workers catch up after. But a child started with
``give_up_after`` that dies that many times in a row, each time sooner than ``stable_after`` (a Redis
that cannot start at all), is given up, and so is a child that is not restarted (the work Redis, whose
queue and projections live only in memory): then ``serve`` stops everything
(:meth:`Supervisor.essential_exited`); so it does on SIGINT/SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

Spawn = Callable[[list[str]], subprocess.Popen[bytes]]
Log = Callable[[str], None]


@dataclass(frozen=True)
class Backoff:
    """The delay before the ``n``-th consecutive restart (n = 1, 2, …): ``initial * factor**(n-1)``,
    at most ``maximum`` seconds."""

    initial: float = 0.25
    factor: float = 2.0
    maximum: float = 30.0

    def delay(self, failures: int) -> float:
        return min(self.maximum, self.initial * self.factor ** max(0, failures - 1))


@dataclass
class Child:
    """One supervised process: ``make_args(restarts)`` gives its command line for each (re)start."""

    name: str
    make_args: Callable[[int], list[str]]
    restart: bool = True
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    failures: int = 0  # consecutive quick deaths
    restart_at: float | None = None
    history: list[int] = field(default_factory=list)  # every pid it ran as
    spawn: Spawn | None = None  # how it is started, if not as the supervisor starts its children
    give_up_after: int | None = None  # quick deaths in a row after which it is not started again
    gave_up: bool = False

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def kill_group(pid: int, sig: int = signal.SIGTERM) -> None:
    """Signal what is left of the process group ``pid`` led (nothing, usually)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Supervisor:
    """Starts children, restarts the restartable ones when they die, stops them all in order."""

    def __init__(self, spawn: Spawn, log: Log, *, backoff: Backoff | None = None, stable_after: float = 10.0,
                 clock: Callable[[], float] = time.monotonic):
        self.spawn = spawn
        self.log = log
        self.backoff = backoff or Backoff()
        self.stable_after = stable_after
        self.clock = clock
        self.children: list[Child] = []

    def start(self, name: str, make_args: Callable[[int], list[str]], *, restart: bool = True,
              spawn: Spawn | None = None, give_up_after: int | None = None) -> Child:
        child = Child(name, make_args, restart, spawn=spawn, give_up_after=give_up_after)
        self._launch(child)
        self.children.append(child)
        self.log(f"{name} started (pid {child.pid})")
        return child

    def _launch(self, child: Child) -> None:
        child.process = (child.spawn or self.spawn)(child.make_args(child.restarts))
        child.started_at = self.clock()
        child.restart_at = None
        child.history.append(child.process.pid)

    def essential_exited(self) -> Child | None:
        """A child that must not die (the work Redis) and has, or one given up (a Redis that cannot start):
        the caller then stops everything."""
        return next((c for c in self.children if c.gave_up or (not c.restart and c.process is not None
                                                                and c.process.poll() is not None)), None)

    def poll(self) -> None:
        """Notice dead restartable children and restart those whose backoff has passed."""
        now = self.clock()
        for child in self.children:
            if not child.restart or child.process is None or child.gave_up:
                continue
            if child.restart_at is None:
                code = child.process.poll()
                if code is None:
                    continue
                kill_group(child.process.pid, signal.SIGKILL)  # its orphans (RQ's scheduler, gunicorn's workers)
                ran = now - child.started_at
                child.failures = 1 if ran >= self.stable_after else child.failures + 1
                if child.give_up_after is not None and child.failures > child.give_up_after:
                    child.gave_up = True
                    self.log(f"{child.name} (pid {child.process.pid}) {describe_exit(code)} after {ran:.1f} s, "
                             f"quick death number {child.failures} in a row: not starting it again")
                    continue
                delay = self.backoff.delay(child.failures)
                child.restart_at = now + delay
                self.log(f"{child.name} (pid {child.process.pid}) {describe_exit(code)} after {ran:.1f} s; "
                         f"restarting it in {delay:g} s")
            elif now >= child.restart_at:
                old = child.process.pid
                child.restarts += 1
                self._launch(child)
                self.log(f"{child.name} restarted (pid {child.pid}, was {old}; restart {child.restarts})")

    def stop(self, children: list[Child] | None = None, timeout: float = 15.0) -> None:
        """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL; then clear each child's process group."""
        targets = [c for c in (self.children if children is None else children) if c.process is not None]
        for child in targets:
            assert child.process is not None
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = self.clock() + timeout
        for child in targets:
            assert child.process is not None
            try:
                child.process.wait(timeout=max(0.1, deadline - self.clock()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
            kill_group(child.process.pid, signal.SIGKILL)
