"""Running the service: ``referee serve`` (everything, supervised: its embedded Redis servers are redis-server
processes of its own), ``referee worker``, ``referee reconcile``, ``referee rebuild``, and the hidden
``_werkzeug``, ``serve``'s web server without gunicorn (``python -m referee.cli _werkzeug …``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import click

from ..config import load_config, read_password_file, with_password
from ..host.logs import announce, configure_logging
from ..protocol.signing import public_key_b64, read_or_create_key_file
from ..running.supervise import Child, Supervisor, describe_exit

#: ``serve --house-bot``: the strategy and think time (seconds) of the house bot (docs/bots.md)
HOUSE_BOT_STRATEGY, HOUSE_BOT_THINK = "greedy", 0.5

#: quick deaths in a row of the log's embedded Redis after which ``serve`` stops (with the backoff's delays, about a
#: minute of trying: 0.25 s, 0.5 s … 30 s)
LOG_REDIS_GIVE_UP = 8

#: ``worker --notify``: what the worker does with notifications (``workers.runner.run_worker(notify=…)``)
_NOTIFY_MODES: dict[str, bool | str] = {"yes": True, "no": False, "only": "only"}


def _spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    # a session of its own: Ctrl-C in the terminal reaches only `serve`, which stops the children in order
    return subprocess.Popen(args, env=env, start_new_session=True)


def _worker_args(index: int | str, notify: str = "no") -> Any:
    def make(restarts: int) -> list[str]:
        # a fresh name on each restart: RQ keeps a killed worker's name registered until its TTL runs out
        name = f"referee-{os.getpid()}-{index}" + (f"-r{restarts}" if restarts else "")
        return [sys.executable, "-m", "referee.cli", "worker", "--name", name, "--notify", notify]

    return make


def _web_args(host: str, port: int, web_workers: int) -> list[str]:
    try:
        import gunicorn  # noqa: F401, PLC0415 - only to know whether it is there
    except ImportError:
        return [sys.executable, "-m", "referee.cli", "_werkzeug", "--host", host, "--port", str(port)]
    # the worker model (gevent) lives in referee/running/gunicorn_conf.py, shared with the Procfile
    return [sys.executable, "-m", "gunicorn", "--config", "python:referee.running.gunicorn_conf",
            "--workers", str(web_workers), "--bind", f"{host}:{port}", "--log-level", "warning",
            "referee.app:create_app()"]


def _wait_redis(url: str, process: subprocess.Popen[bytes], timeout: float = 20.0) -> bool:
    import redis  # noqa: PLC0415

    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if client.ping():
                return True
        except redis.RedisError:
            time.sleep(0.1)
    return False


def _wait_http(url: str, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as response:
                if response.status == 200:
                    return True
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    return False


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--web-workers", default=2, show_default=True, type=int, help="gunicorn worker processes")
@click.option("--rq-workers", default=1, show_default=True, type=int, help="replay worker processes")
@click.option("--mail-gateway", "mail_port", type=int, default=None, metavar="PORT",
              help="also run the play-by-email SMTP gateway on this port (e.g. 2525)")
@click.option("--house-bot", is_flag=True,
              help="also run the house bot: one `referee bot` (greedy, --think 0.5) with its own key in "
                   "<REFEREE_VAR>/house-bot.key, answered by GET /house-bot")
def serve(*, host: str, port: int, web_workers: int, rq_workers: int, mail_port: int | None, house_bot: bool) -> None:
    """Run everything: Redis (embedded unless REDIS_URL is set), replay workers and the web server.

    Prints the URL. A worker, web server or the log's embedded Redis that dies is restarted with backoff
    (``referee.supervise``); Ctrl-C or SIGTERM, an embedded work Redis that is gone, or a log Redis that
    cannot start again, stops everything."""
    from ..running.embedded_redis import EmbeddedRedis, bind_problem, free_port, read_or_create_password  # noqa: PLC0415
    from ..store.cluster import is_cluster_url  # noqa: PLC0415

    for option, wanted in (("--port", port), ("--mail-gateway", mail_port)):  # else serve's wait for its web
        # server would be answered by whatever already listens there
        why = bind_problem(wanted, host, reuse_address=True) if wanted is not None else None
        if why:
            raise click.UsageError(f"{option} {wanted}: {host}:{wanted} cannot be listened on ({why}); "
                                   f"another server has it? choose another {option}")
    config = load_config()
    configure_logging(config, process="serve")  # REFEREE_LOG_FORMAT=json: what serve says, as JSON lines
    if is_cluster_url(os.environ.get("REDIS_URL")) and not os.environ.get("REFEREE_WORK_REDIS_URL"):
        raise click.UsageError("REDIS_URL names a Redis Cluster: set REFEREE_WORK_REDIS_URL to a plain Redis for "
                               "RQ's queue (docs/scale.md)")
    env = dict(os.environ)
    supervisor = Supervisor(lambda args: _spawn(args, env), lambda message: announce(
        f"serve: {message}", err=True, warning=" started (pid " not in message))  # exits and restarts: warnings
    redis_children: list[Child] = []

    var = Path(config["REFEREE_VAR"])
    var.mkdir(mode=0o700, parents=True, exist_ok=True)
    password_file = var / "redis-password"  # the embedded servers' password (0600); see embedded_redis.py
    if not (os.environ.get("REDIS_URL") and os.environ.get("REFEREE_WORK_REDIS_URL")):
        read_or_create_password(password_file)  # once, before the Redis processes read it
    if config["REFEREE_METRICS"]:  # one metrics view over every child: prometheus_client's multi-process mode
        from ..host.metrics import MULTIPROC_ENV, default_directory, prepare_directory  # noqa: PLC0415

        env[MULTIPROC_ENV] = str(prepare_directory(os.environ.get(MULTIPROC_ENV) or default_directory(var)))
        announce(f"metrics of every process in {env[MULTIPROC_ENV]} (PROMETHEUS_MULTIPROC_DIR)")

    def embedded(name: str, durable: bool) -> str:
        server = EmbeddedRedis(directory=var / name, durable=durable, port=free_port(), password_file=password_file,
                               maxmemory=config["REFEREE_REDIS_MAXMEMORY"])
        args = server.prepare()  # redis-server itself is the child: no Python process beside it
        log = server.directory / "redis.log"  # what Redis says (its warnings; why it did not start), 0600

        def spawn(command: list[str]) -> subprocess.Popen[bytes]:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                return subprocess.Popen(command, env=env, start_new_session=True, stdout=fd, stderr=subprocess.STDOUT,
                                        umask=0o077)
            finally:
                os.close(fd)

        # the log's Redis is started again on its own files when it dies (a full disk it met, an OOM kill), unless
        # it dies LOG_REDIS_GIVE_UP times in a row, each soon after its start; the work Redis keeps only what
        # can be rebuilt, in memory: without it serve stops
        child = supervisor.start(f"embedded Redis ({name})", lambda _restarts: args, restart=durable, spawn=spawn,
                                 give_up_after=LOG_REDIS_GIVE_UP if durable else None)
        if durable:
            env.setdefault("REFEREE_LOG_DISK", str(server.directory))  # the disk the floor watches (diskspace.py)
        redis_children.append(child)
        url = with_password(server.public_url, server.password)
        assert child.process is not None
        if not _wait_redis(url, child.process):
            supervisor.stop(redis_children)
            raise click.ClickException(f"the embedded Redis in {server.directory} did not start (its log: {log})")
        kind = "logs; AOF, appendfsync always" if durable else "queue and projections; not persisted"
        announce(f"embedded Redis on {server.public_url} ({kind}) in {server.directory}; password in {password_file}")
        return url

    redis_url = os.environ.get("REDIS_URL") or embedded("redis", durable=True)
    work_url = os.environ.get("REFEREE_WORK_REDIS_URL") or (
        redis_url if os.environ.get("REDIS_URL") else embedded("redis-work", durable=False))
    env["REDIS_URL"], env["REFEREE_WORK_REDIS_URL"] = redis_url, work_url
    env.setdefault("REFEREE_PUBLIC_URL", f"http://{f'[{host}]' if ':' in host else host}:{port}")
    if not os.environ.get("REDIS_URL") or not os.environ.get("REFEREE_WORK_REDIS_URL"):
        announce(f"more workers: REDIS_URL={_without_password(redis_url)} "
                   f"REFEREE_WORK_REDIS_URL={_without_password(work_url)} "
                   f"REFEREE_REDIS_PASSWORD_FILE={password_file} referee worker")
    read_or_create_key_file(config["REFEREE_KEY_FILE"])  # create it once, before the web workers race for it
    house_key_file = var / "house-bot.key"
    if house_bot:  # an ordinary client with a key of its own (0600, created once); the web server names it
        env["REFEREE_HOUSE_BOT_KEY"] = public_key_b64(read_or_create_key_file(house_key_file))
        announce(f"house bot key {env['REFEREE_HOUSE_BOT_KEY']} (in {house_key_file}; GET /house-bot)")
    stopping = False

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    served: list[Child] = []
    url = f"http://{host}:{port}"
    try:
        for i in range(rq_workers):
            served.append(supervisor.start(f"replay worker {i}", _worker_args(i)))
        # deliveries (webhooks, mail) in a worker of their own: a slow endpoint never delays a replay
        served.append(supervisor.start("notify worker", _worker_args("notify", notify="only")))
        if mail_port is not None:
            gateway = [sys.executable, "-m", "referee.cli", "mail-gateway", "--host", host, "--port", str(mail_port)]
            served.append(supervisor.start("mail gateway", lambda _restarts: gateway))
            announce(f"mail gateway on smtp://{host}:{mail_port}")
        from ..notify.mail import mailer_from_config  # noqa: PLC0415

        announce(mailer_from_config(config).describe())
        announce("webhooks may reach loopback and private addresses (local use; REFEREE_WEBHOOK_PRIVATE=0 refuses "
                   "them, as the Procfile does)" if config["REFEREE_WEBHOOK_PRIVATE"] else
                   "webhooks may not reach loopback or private addresses (REFEREE_WEBHOOK_PRIVATE=0)")
        web_args = _web_args(host, port, web_workers)
        served.append(supervisor.start("web server", lambda _restarts: web_args))
        if _wait_http(url):
            announce(f"referee serving on {url}  (API docs: {url}/docs; Ctrl-C stops)")
            if host in ("127.0.0.1", "::1", "localhost"):  # passkeys need a host name: WebAuthn refuses an IP address
                announce(f"players' pages: http://localhost:{port}/play/")
            from ..web import vendor  # noqa: PLC0415

            vendor.install_in_background(announce)
            if house_bot:  # once the web server answers: the bot's first look finds it
                bot_args = [sys.executable, "-m", "referee.cli", "bot", "--key", str(house_key_file), "--strategy",
                            HOUSE_BOT_STRATEGY, "--think", str(HOUSE_BOT_THINK), "--poll", "1", "--server", url]
                served.append(supervisor.start("house bot", lambda _restarts: bot_args))
        else:
            announce(f"the web server did not answer on {url}", err=True)
            stopping = True
        while not stopping:  # restart dead workers and web servers; stop when a Redis of ours is gone
            gone = supervisor.essential_exited()
            if gone is not None:
                assert gone.process is not None
                announce(f"serve: {gone.name} (pid {gone.pid}) {describe_exit(gone.process.returncode)}; "
                           "the service cannot run without it: stopping", err=True)
                break
            supervisor.poll()
            time.sleep(0.1)
    finally:
        supervisor.stop(served)  # web and workers first, so that no one writes to a Redis that is going away
        supervisor.stop(redis_children)
        if env.get("PROMETHEUS_MULTIPROC_DIR") and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            shutil.rmtree(env["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)  # its own (memory): nothing to keep
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        announce("referee stopped")


def _without_password(url: str) -> str:
    """``url`` as it may be printed: without its password."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


@click.command("_werkzeug", hidden=True)
@click.option("--host", default="127.0.0.1")
@click.option("--port", default=8000, type=int)
def werkzeug_server(host: str, port: int) -> None:
    """Fallback web server when gunicorn is not installed."""
    from werkzeug.serving import run_simple  # noqa: PLC0415

    from ..app import create_app  # noqa: PLC0415

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    run_simple(host, port, create_app(), threaded=True, use_reloader=False)


def _redis_urls(url: str | None, work_url: str | None) -> tuple[str, str]:
    from ..store.cluster import is_cluster_url  # noqa: PLC0415

    config = load_config()
    log_url = url or config["REDIS_URL"]
    work = work_url or (config["REFEREE_WORK_REDIS_URL"] if not url else log_url)
    if config["REFEREE_REDIS_PASSWORD_FILE"]:  # --url/--work-url without a password: the file's
        password = read_password_file(config["REFEREE_REDIS_PASSWORD_FILE"])
        log_url, work = with_password(log_url, password), with_password(work, password)
    if is_cluster_url(log_url) and (not work or work == log_url or is_cluster_url(work)):
        raise click.UsageError("the logs' Redis is a cluster (redis+cluster://): give RQ's queue a plain Redis "
                               "with --work-url or REFEREE_WORK_REDIS_URL (docs/scale.md)")
    return log_url, work


url_option = click.option("--url", help="the logs' Redis URL (default $REDIS_URL)")
work_url_option = click.option("--work-url", help="the queue's and projections' Redis URL (with a cluster "
                                                  "--url: the queue's only; "
                                                  "default $REFEREE_WORK_REDIS_URL, else --url)")


@click.command()
@url_option
@work_url_option
@click.option("--queue", help="queue name (default $REFEREE_QUEUE or 'referee')")
@click.option("--burst", is_flag=True, help="exit when the queue is empty")
@click.option("--worker-class", type=click.Choice(["simple", "fork"]), default="simple", show_default=True)
@click.option("--name", help="worker name")
@click.option("--verbose", "-v", is_flag=True, help="log every job (RQ's INFO level)")
@click.option("--notify", type=click.Choice(["yes", "no", "only"]), default="yes", show_default=True,
              help="route the outbox and deliver webhooks and mail too (after replays), not at all, or only that")
def worker(*, url: str | None, work_url: str | None, queue: str | None, burst: bool, worker_class: str,
           name: str | None, verbose: bool, notify: str) -> None:
    """An RQ replay worker (JSON serializer) with RQ's scheduler, the reconciler and the deadline scheduler."""
    from workers.runner import run_worker  # noqa: PLC0415

    config = load_config()
    configure_logging(config, process="notify" if notify == "only" else "worker")
    log_url, work = _redis_urls(url, work_url)
    run_worker(log_url, queue or config["REFEREE_QUEUE"], work_url=work, burst=burst, worker_class=worker_class,
               reconcile_every=config["REFEREE_RECONCILE_EVERY"], stale_after=config["REFEREE_STALE_AFTER"],
               name=name, logging_level="INFO" if verbose else "WARNING",
               deadlines_every=config["REFEREE_DEADLINES_EVERY"],
               notify=_NOTIFY_MODES[notify])


@click.command()
@url_option
@work_url_option
@click.option("--queue", help="queue name")
@click.option("--every", type=float, default=0, help="repeat every N seconds (0: once)")
@click.option("--stale-after", type=float, help="seconds after which a pending game is re-queued")
@click.option("--stale-only", is_flag=True,
              help="look only at the games whose pending flag is stale (what a worker's pass does), not at every game")
def reconcile(*, url: str | None, work_url: str | None, queue: str | None, every: float,
              stale_after: float | None, stale_only: bool) -> None:
    """Push a replay for every game whose projection lags its log with none on the way."""
    import redis  # noqa: PLC0415

    from workers.queue import replay_queue  # noqa: PLC0415
    from workers.reconciler import reconcile_once  # noqa: PLC0415

    from ..store import RedisStore  # noqa: PLC0415

    config = load_config()
    log_url, work = _redis_urls(url, work_url)
    store = RedisStore.from_url(log_url, work_url=work)
    rq_queue = replay_queue(redis.Redis.from_url(work), queue or config["REFEREE_QUEUE"])
    limit = config["REFEREE_STALE_AFTER"] if stale_after is None else stale_after
    while True:
        queued = reconcile_once(store, rq_queue, limit, full=None if stale_only else True)
        click.echo(f"queued {len(queued)} replay(s){': ' + ', '.join(queued) if queued else ''}")
        if every <= 0:
            return
        time.sleep(every)


@click.command()
@click.argument("games", nargs=-1)
@click.option("--older-than", type=float, metavar="SECONDS",
              help="archive games over for at least this long (default $REFEREE_ARCHIVE_AFTER: 604800, a week)")
@click.option("--dry-run", is_flag=True, help="only print what would move; change nothing")
@url_option
@work_url_option
def archive(games: tuple[str, ...], older_than: float | None, dry_run: bool, url: str | None,
            work_url: str | None) -> None:
    """Move finished games out of Redis into the archive ($REFEREE_ARCHIVE_DIR): every listed game (or GAMES)
    over for --older-than seconds; each file is written and fsync'd before the game's keys are deleted."""
    from ..games_service.archiving import archive_games  # noqa: PLC0415
    from ..store import RedisStore  # noqa: PLC0415
    from ..store.archive import DirectoryArchive  # noqa: PLC0415
    from ..store.messages import messages_of  # noqa: PLC0415

    config = load_config()
    log_url, work = _redis_urls(url, work_url)
    archive_dir = DirectoryArchive(config["REFEREE_ARCHIVE_DIR"])
    store = RedisStore.from_url(log_url, work_url=work).use_archive(archive_dir).replicas_from(config)
    if not Path(config["REFEREE_KEY_FILE"]).is_file():  # never a key of its own: the bundles are the referee's
        raise click.UsageError(f"the referee's key file {config['REFEREE_KEY_FILE']} is not there: run with the "
                               "service's REFEREE_VAR or REFEREE_KEY_FILE")
    key = read_or_create_key_file(config["REFEREE_KEY_FILE"])
    limit = config["REFEREE_ARCHIVE_AFTER"] if older_than is None else older_than
    tty = sys.stderr.isatty()
    outcomes = archive_games(store, messages_of(store), archive_dir, key, older_than=limit, dry_run=dry_run,
                             games=list(games) or None,
                             progress=(lambda done, total: click.echo(f"\r\x1b[2K{done}/{total} game(s) looked at",
                                                                     err=True, nl=False)) if tty else None)
    if tty:
        click.echo("", err=True)
    moved = [o for o in outcomes if o.action == "archived"]
    verb = "would archive" if dry_run else "archived"
    for outcome in outcomes:
        if outcome.action == "archived":
            click.echo(f"{verb} {outcome.game}")
        elif outcome.action in ("retry", "cleaned") or games:
            click.echo(f"{outcome.game}: {outcome.action}{': ' + outcome.reason if outcome.reason else ''}")
    click.echo(f"{verb} {len(moved)} game(s) of {len(outcomes)} looked at, into {archive_dir.path}")


@click.command()
@click.argument("games", nargs=-1)
@click.option("--all", "all_games", is_flag=True,
              help="every game that has a log, the players' index of games, and the ratings")
@click.option("--players", is_flag=True,
              help="only the players' index of games and tournaments (player:{<key>}:games, :tournaments), from every "
                   "log's created entry")
@click.option("--ratings", is_flag=True,
              help="every ruleset's ratings, from the tournaments' logs (counting the organiser-signed tournaments "
                   "only when REFEREE_ORGANISER_KEYS is set)")
@click.option("--archive-index", is_flag=True,
              help="only the archive's list of its games ($REFEREE_ARCHIVE_DIR/index.jsonl), from its documents")
@url_option
@work_url_option
def rebuild(games: tuple[str, ...], *, all_games: bool, players: bool, ratings: bool, archive_index: bool,
            url: str | None, work_url: str | None) -> None:
    """Rebuild projections from the logs, from scratch (the logs are only read)."""
    from workers.projector import Projector  # noqa: PLC0415

    from ..games_service.players import rebuild_player_index, rebuild_tournament_index  # noqa: PLC0415
    from ..store import GameNotFound, RedisStore  # noqa: PLC0415

    if not games and not all_games and not ratings and not players and not archive_index:
        raise click.UsageError("name games to rebuild, or --all, or --players, or --ratings, or --archive-index")
    if all_games or archive_index:
        from ..store.archive import DirectoryArchive  # noqa: PLC0415

        archived = DirectoryArchive(load_config()["REFEREE_ARCHIVE_DIR"])
        click.echo(f"archive index: {archived.rebuild_index()} game(s) listed, in {archived.index_file}")
        if not (games or all_games or ratings or players):
            return
    log_url, work = _redis_urls(url, work_url)
    store = RedisStore.from_url(log_url, work_url=work)
    projector = Projector(store, entry_delay=0)
    targets = list(games)
    if all_games or players:
        scanned = store.scan_games()
        rows = rebuild_player_index(store, scanned)
        click.echo(f"players' index: {rows} row(s) of {len(scanned)} game(s), "
                   f"{rebuild_tournament_index(store)} row(s) of tournaments")
    if all_games:
        targets = scanned
        listed = set(store.live_games())
        for game_id in targets:
            if game_id not in listed:  # a game whose indexing was lost: list it again
                store.index_game(game_id, 0)
    failed = 0
    for game_id in targets:
        try:
            summary = projector.rebuild(game_id)
        except GameNotFound:
            click.echo(f"{game_id}: no such game", err=True)
            failed += 1
            continue
        click.echo(f"{game_id}: {summary['seq']} entries, {summary['status']}")
    if all_games or ratings:
        _rebuild_ratings(store)
    if failed:
        sys.exit(1)


def _rebuild_ratings(store: Any) -> None:
    """Every ruleset's ratings from the tournaments' logs, under this environment's REFEREE_ORGANISER_KEYS."""
    from ..games_service import GameService  # noqa: PLC0415
    from ..tournaments.service import TournamentService  # noqa: PLC0415

    keys = load_config()["REFEREE_ORGANISER_KEYS"]
    service = TournamentService(store, GameService(store, organiser_keys=keys), keys)
    for name, fold in service.rebuild_ratings().items():
        vetted = f"vetted ({len(keys)} organiser key{'s' if len(keys) != 1 else ''})" if keys else "unvetted"
        click.echo(f"ratings of {name}: {sum(fold.rated.values())} games of {len(fold.rated)} tournament(s), "
                   f"{len(fold.players)} players, {vetted}")

