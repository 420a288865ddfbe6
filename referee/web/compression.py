"""Every text answer compressed, brotli or gzip, as the request's ``Accept-Encoding`` prefers (issue 49).

**Answers made per request** (pages, JSON, the generated module, CSV, the metrics): :func:`compress_answer`, the
app's ``after_request`` hook (``referee.app.init_compression``), compresses the body of a kind of
:data:`COMPRESSED_KINDS` of 500 bytes or more at a fast level (brotli 5, gzip 6), adds ``Vary: Accept-Encoding``,
gives a strong ETag the encoding (``"…-br"``: another representation) and answers ``If-None-Match`` with 304.
A streamed answer is never touched: the event streams (``text/event-stream``; an event must not wait in a
compressor's buffer) and the files sent by ``send_file`` (below).

**Static files**: a file the pages load as it is (``static/``: the ES modules, the style sheet, the icon; the
verifier's engine files and worker; the vendored Pyodide and Ed25519 files) is compressed once, with brotli and gzip,
and the copy that the request's ``Accept-Encoding`` prefers is sent (``Content-Encoding``, ``Vary:
Accept-Encoding``); a request that accepts neither gets the file itself. Where the compressed copies come from:

* ``static/`` and the engine files: at their first request, into ``<REFEREE_VAR>/cache/static/`` under the sha256 of
  the file's contents (``<digest>.br``, ``<digest>.gz``; written to a temporary name, then renamed, so that processes
  of one server share them and a reader never sees half of one). A changed file has another digest: a stale copy is
  never sent. The digest of a file is kept per process by its (path, size, time), so a request costs a ``stat``.
* the vendored files: beside each file (``pyodide.asm.wasm.br``, …), written by ``referee.web.vendor`` when it
  installs them (brotli only where the ``brotli`` package is installed; gzip always). A missing copy is never made
  at request time (brotli's best level takes ~35 s on Pyodide's 9.6 MB of WebAssembly): the file goes uncompressed.

Compressed answers keep their conditional requests: each copy is sent by ``send_file`` with an ETag of its own (not
the file's), and ``If-None-Match`` of it answers 304. Files under 500 bytes, and kinds that are compressed already
(``python_stdlib.zip`` is a zip), are sent as they are (``vendor.compressible``). The pages and JSON answers, made
per request, are compressed per request (above).
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from pathlib import Path

import brotli
from flask import Response, current_app, request, send_file

from .vendor import MIN_SIZE, compress, compressible, write_atomically
from .vendor import SUFFIXES as ENCODINGS

#: the kinds of answer compressed per request
COMPRESSED_KINDS = frozenset({"text/html", "text/css", "text/plain", "text/csv", "text/javascript",
                              "application/javascript", "application/json", "image/svg+xml"})
#: brotli's and gzip's levels per request: brotli 5 costs about gzip 6's CPU and is 10-20% smaller
#: (``tests/bench/bench_compression.py``)
BROTLI_LEVEL, GZIP_LEVEL = 5, 6

_digests: dict[str, tuple[int, int, str]] = {}  # path -> (size, mtime_ns, sha256 of the contents)
_compressed: dict[tuple[str, str], bytes] = {}  # (sha256 of a file, encoding) -> its compressed bytes
_lock = threading.Lock()


def chosen_encoding(available: tuple[str, ...] = tuple(ENCODINGS)) -> str | None:
    """The encoding of ``available`` the request accepts with the highest ``q`` (ties: the order of ``available``),
    or None (then the file itself). ``*`` accepts any; ``q=0`` refuses."""
    accept = request.accept_encodings
    best, best_q = None, 0.0
    for encoding in available:
        quality = accept[encoding]  # werkzeug's Accept: 0 when not named (nor by *)
        if quality > best_q:
            best, best_q = encoding, quality
    return best


def cache_dir() -> Path:
    """``<REFEREE_VAR>/cache/static`` of the app (``var`` when the app has no such setting)."""
    # absolute: Flask's send_file reads a relative path from the app's package folder, not the working directory
    # (`referee serve`'s REFEREE_VAR is "var", relative: every compressed module was a 500 before)
    return (Path(current_app.config.get("REFEREE_VAR") or "var") / "cache" / "static").resolve()


def _digest(path: Path, size: int, mtime_ns: int) -> str:
    key = str(path)
    known = _digests.get(key)
    if known is not None and known[:2] == (size, mtime_ns):
        return known[2]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    _digests[key] = (size, mtime_ns, digest)
    return digest


def cached_copy(path: Path, encoding: str, folder: Path) -> Path | None:
    """The compressed copy of ``path`` in ``folder`` (made now if it is not there yet), or None when it cannot be
    written (a read-only folder) or the file changed meanwhile: the file goes uncompressed this time. The bytes
    compressed in this process are kept (a few hundred KB: the files of ``static/`` and the engine's), so that
    another app of the process (the tests make many, each with its own ``REFEREE_VAR``) writes its copy without
    compressing again."""
    stat = path.stat()
    digest = _digest(path, stat.st_size, stat.st_mtime_ns)
    copy = folder / (digest + ENCODINGS[encoding])
    if copy.is_file():
        return copy
    with _lock:  # one thread compresses a file at a time (gevent: a greenlet; the next one finds the copy)
        if copy.is_file():
            return copy
        body = _compressed.get((digest, encoding))
        if body is None:
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                return None
            body = _compressed[(digest, encoding)] = compress(data, encoding)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_atomically(copy, body)
        except OSError:
            return None
    return copy


def beside_copy(path: Path, encoding: str) -> Path | None:
    """The compressed copy written beside ``path`` ahead of time (``referee.web.vendor``), if it is there and not
    older than the file."""
    copy = path.with_name(path.name + ENCODINGS[encoding])
    try:
        if copy.stat().st_mtime_ns >= path.stat().st_mtime_ns:
            return copy
    except OSError:
        pass
    return None


def send_static(path: Path, mimetype: str, *, max_age: int | None = None, beside: bool = False) -> Response:
    """``path`` answered in the encoding the request prefers, from its compressed copy (in the cache, or ``beside``
    it), else as it is; ``Vary: Accept-Encoding`` either way. ``max_age``: as ``send_file``'s (None: ``no-cache``,
    revalidated by the ETag). ``FileNotFoundError`` for a missing file, as ``send_file``."""
    size = path.stat().st_size
    copy, encoding = None, None
    if compressible(path, size):
        if beside:
            copies = {name: found for name in ENCODINGS if (found := beside_copy(path, name)) is not None}
            encoding = chosen_encoding(tuple(copies))
            copy = copies.get(encoding) if encoding else None
        elif (encoding := chosen_encoding()) is not None:
            copy = cached_copy(path, encoding, cache_dir())
    if copy is None:
        response = send_file(path, mimetype=mimetype, max_age=max_age, conditional=True)
    else:
        response = send_file(copy, mimetype=mimetype, max_age=max_age, conditional=True)
        response.headers["Content-Encoding"] = str(encoding)
    response.vary.add("Accept-Encoding")
    return response


def compress_fast(data: bytes, encoding: str) -> bytes:
    """``data`` compressed at the per-request level of ``encoding``."""
    if encoding == "br":
        return bytes(brotli.compress(data, quality=BROTLI_LEVEL))
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing, no time in it
    return packer.compress(data) + packer.flush()


def compress_answer(response: Response) -> Response:
    """The app's ``after_request`` hook (see the module's text)."""
    if (response.is_streamed or response.direct_passthrough or "Content-Encoding" in response.headers
            or response.mimetype not in COMPRESSED_KINDS or not 200 <= response.status_code < 300
            or response.status_code in (204, 206)):
        return response
    body = response.get_data()
    if len(body) < MIN_SIZE:
        return response
    response.vary.add("Accept-Encoding")
    encoding = chosen_encoding()
    if encoding is None:
        return response
    response.set_data(compress_fast(body, encoding))
    response.headers["Content-Encoding"] = encoding
    etag, weak = response.get_etag()
    if etag and not weak:
        response.set_etag(f"{etag}-{encoding}")
    if etag and request.method in ("GET", "HEAD"):
        response.make_conditional(request)
    return response
