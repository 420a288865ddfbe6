"""``referee worker`` (and ``referee bot``) processes for the tests, forked from one process that has imported them.

A ``referee worker`` started as ``python -m referee.cli worker …`` spends ~0.5 CPU-seconds before it serves (the
interpreter, the imports of the CLI, RQ, redis-py and the workers, the rulesets), and the suite starts about fifty
of them as part of its servers (each browser test module's, the service tests' ``spawn_worker``), and a dozen
bots. Here one *zygote* per pytest process imports all that once; each is a fork of it that then runs the same command
line through the same entry point (``referee.cli.main``) with its own environment, folder, session and output
files. It is the real command, its real RQ worker and loops, in a process of its own that the test signals and
waits for like a ``subprocess.Popen``: only the interpreter's start and the imports are shared.

The tests *of* the worker's process (its start, its graceful stop, ``referee serve``'s supervision) start real
``python -m referee.cli`` processes as before. ``REFEREE_TEST_FORK_WORKERS=0`` starts every one that way.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# The zygote: imports what `referee worker` imports, then forks a child per request line on stdin
# ({"argv", "env", "cwd", "out", "err", "session"}) and answers on stdout: {"pid"} at each fork, {"exit", "code"}
# when a child ends (reaped here: only the parent can). The output files are made before the fork, so that they
# are there when the test hears the pid.
_ZYGOTE = r"""
import json, os, signal, sys
import referee.cli, referee.cli.bots, referee.cli.operations, workers.runner
from referee.host.runtime import settle_heap

settle_heap()  # the rulesets loaded and the heap frozen once, for every child
wake_r, wake_w = os.pipe()
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *_: None)
out = os.fdopen(os.dup(1), "w", buffering=1)
requests = os.fdopen(0, "rb", buffering=0)
pending = b""

def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        out.write(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}) + "\n")

def opened(path):
    return os.open(path or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

def child(request, stdout, stderr):
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a fresh `python` (a bot stops on it)
    os.close(wake_r); os.close(wake_w)
    if request["session"]:
        os.setsid()
    os.chdir(request["cwd"])
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    os.close(out.fileno())  # the zygote's answers are its own
    sys.stdout.reconfigure(line_buffering=True)  # a log read while the worker runs (as with PYTHONUNBUFFERED)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["referee", *request["argv"]]
    code = 1
    try:
        referee.cli.main(args=request["argv"], prog_name="referee")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush(); sys.stderr.flush()
        finally:
            os._exit(code)

import select
while True:
    ready, _, _ = select.select([requests, wake_r], [], [])
    if wake_r in ready:
        os.read(wake_r, 512)
        reap()
    if requests in ready:
        chunk = requests.read(65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            stdout = opened(request["out"])
            stderr = stdout if request["err"] == "stdout" else opened(request["err"])
            pid = os.fork()
            if pid == 0:
                child(request, stdout, stderr)
            for fd in {stdout, stderr}:
                os.close(fd)
            out.write(json.dumps({"pid": pid}) + "\n")
    reap()
"""


class ForkedProcess:
    """A child of the zygote, with the part of ``subprocess.Popen`` the tests use."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str]):
        self.zygote, self.pid, self.args = zygote, pid, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.zygote.wait_exit(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """One zygote process (started at the first ``spawn``) and the exits of its children, read by a thread."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()  # one request (and its pid answer) at a time
        self.changed = threading.Condition()
        self.pids: list[int] = []
        self.exits: dict[int, int] = {}

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen([sys.executable, "-c", _ZYGOTE], cwd=REPO, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, env=os.environ.copy())
            threading.Thread(target=self._read, args=(self.process,), name="zygote-reader", daemon=True).start()
        return self.process

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            with self.changed:
                if "pid" in message:
                    self.pids.append(message["pid"])
                else:
                    self.exits[message["exit"]] = message["code"]
                self.changed.notify_all()
        with self.changed:  # the zygote is gone: no answer will come
            self.changed.notify_all()

    def spawn(self, argv: list[str], *, env: dict[str, str], cwd: str | Path = REPO, stdout: str | Path | None = None,
              stderr: str | Path | None = None, new_session: bool = False) -> ForkedProcess:
        """``referee ARGV…`` in a fork; ``stdout``/``stderr``: files appended to (``stderr="stdout"``: with it)."""
        request = {"argv": argv, "env": env, "cwd": str(cwd), "out": str(stdout) if stdout else None,
                   "err": "stdout" if stderr == "stdout" else (str(stderr) if stderr else None),
                   "session": new_session}
        with self.lock:
            process = self._start()
            assert process.stdin is not None
            with self.changed:
                known = len(self.pids)
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            with self.changed:
                if not self.changed.wait_for(lambda: len(self.pids) > known or process.poll() is not None, 30):
                    raise RuntimeError("the worker zygote did not fork within 30 s")
                if len(self.pids) == known:
                    raise RuntimeError(f"the worker zygote exited with {process.returncode}")
                pid = self.pids[known]
        return ForkedProcess(self, pid, ["referee", *argv])

    def exit_code(self, pid: int) -> int | None:
        with self.changed:
            return self.exits.get(pid)

    def wait_exit(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exits or self.process is None or self.process.poll() is not None,
                                  timeout)
            return self.exits.get(pid)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_ZYGOTE_OF_THIS_PROCESS = Zygote()


def referee_process(argv: list[str], *, env: dict[str, str], cwd: str | Path = REPO, stdout: str | Path | None = None,
                    stderr: str | Path | None = None, new_session: bool = False) -> Any:
    """``referee ARGV…`` (``worker …``, ``bot …``): a fork of this pytest process's zygote (a ``subprocess.Popen``
    of ``python -m referee.cli`` where ``REFEREE_TEST_FORK_WORKERS=0``). ``stdout``/``stderr``: files appended to
    (``stderr="stdout"``: with it), else nothing."""
    if os.environ.get("REFEREE_TEST_FORK_WORKERS", "1") == "0":
        with contextlib.ExitStack() as files:  # the child has its own copies of them
            out = files.enter_context(open(stdout, "ab")) if stdout else subprocess.DEVNULL
            err = subprocess.STDOUT if stderr == "stdout" else (
                files.enter_context(open(stderr, "ab")) if stderr else subprocess.DEVNULL)
            return subprocess.Popen([sys.executable, "-m", "referee.cli", *argv], cwd=cwd, env=env,
                                    stdout=out, stderr=err, start_new_session=new_session)
    return _ZYGOTE_OF_THIS_PROCESS.spawn(argv, env=env, cwd=cwd, stdout=stdout, stderr=stderr, new_session=new_session)


def referee_worker(argv: list[str], **options: Any) -> Any:
    """``referee worker ARGV…`` (:func:`referee_process`)."""
    return referee_process(["worker", *argv], **options)


def wait_for_worker(redis_url: str, worker: Any, name: str, log: Path, timeout: float = 30) -> None:
    """Until the RQ worker ``name`` (a process of :func:`referee_worker`) has registered with Redis; raises, with the
    end of its ``log``, when it exits first or does not register within ``timeout`` seconds."""
    import redis
    from rq import Worker

    conn = redis.Redis.from_url(redis_url)
    try:
        deadline = time.monotonic() + timeout
        while not any(w.name == name for w in Worker.all(connection=conn)):
            if worker.poll() is not None:
                raise RuntimeError(f"the RQ worker exited with {worker.returncode}: {log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the RQ worker did not start within {timeout:g} s")
            time.sleep(0.1)
    finally:
        conn.close()


@atexit.register
def close() -> None:
    """Stop this process's zygote (its children are the tests' to stop)."""
    _ZYGOTE_OF_THIS_PROCESS.close()
