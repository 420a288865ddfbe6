"""The browser verifier's third-party files (``/play/verify``, issue 38): Pyodide and Ed25519, from the npm registry.

Nothing of these is in git (Pyodide alone is about 13 MB): ``python -m referee.web.vendor`` (run by ``.ci/run``)
downloads each pinned npm tarball, checks its sha256, and unpacks only the files the page needs into
``referee/web/vendored/`` (git-ignored), with a ``pins.json`` that says what was installed. Running it again with
the files in place does nothing but :func:`precompress`. The pages never fetch anything from a CDN: they serve these
files themselves (``/play/verify/vendor/<path>``), and ``referee verify-page --out DIR`` copies them.

* ``pyodide`` — CPython compiled to WebAssembly, the core files only (the interpreter, its JavaScript loader and
  the standard library; no packages are loaded: the verifier needs none beyond its own pure-Python files);
* ``@noble/ed25519`` and the SHA-512 of ``@noble/hashes`` — audited, dependency-free Ed25519 in JavaScript, called
  synchronously from Python (WebCrypto's Ed25519 is asynchronous, and the verifier checks signatures in the
  middle of the fold).

Each file is compressed once, here, beside it (``pyodide.asm.wasm.br``, ``….gz``: :func:`precompress`), and
``/play/verify/vendor/…`` answers the copy the browser accepts (``referee.web.compression``): gzip always, brotli
where the ``brotli`` package is importable (in the project's venv; ``.ci/run`` runs this file with the system's
Python before the venv exists: gzip only there, and ``referee serve`` adds the brotli copies in the background).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:  # the project's dependency; this file also runs with the system's Python (standard library only)
    import brotli
except ImportError:  # pragma: no cover - depends on the Python that runs it
    brotli = None

VENDOR_DIR = Path(__file__).resolve().parent / "vendored"
REGISTRY = "https://registry.npmjs.org"


@dataclass(frozen=True)
class Package:
    """One npm tarball, pinned by version and sha256, and the files of it the page needs (``package/<name>``)."""

    name: str
    version: str
    sha256: str
    folder: str
    files: tuple[str, ...]

    @property
    def tarball(self) -> str:
        base = self.name.rsplit("/", 1)[-1]
        return f"{REGISTRY}/{self.name}/-/{base}-{self.version}.tgz"


PYODIDE_VERSION = "314.0.7"

PACKAGES = (
    Package("pyodide", PYODIDE_VERSION, "66b7949e5a0cba2250b586d7e368bf12fb482800748d182c4618254b685ffaa0", "pyodide",
            ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")),
    Package("@noble/ed25519", "3.0.0", "cb136ca3a71848403343815aeaad420df647b2f4018a7667bb92fd1ed82025a5",
            "noble-ed25519", ("index.js", "LICENSE")),
    Package("@noble/hashes", "2.0.1", "638ffb3053a7e7478c9e54a6e297f3601299ee570a41112e501af7050d086a0a",
            "noble-hashes", ("sha2.js", "_md.js", "_u64.js", "utils.js", "LICENSE")),
)


def pins() -> dict[str, str]:
    """``{npm name: version}`` of what the page needs."""
    return {package.name: package.version for package in PACKAGES}


def installed(vendor_dir: Path = VENDOR_DIR) -> bool:
    """Whether ``vendor_dir`` holds every file of the pinned versions (what ``pins.json`` says and the files)."""
    try:
        if json.loads((vendor_dir / "pins.json").read_text(encoding="utf-8")) != pins():
            return False
    except (OSError, ValueError):
        return False
    return all((vendor_dir / package.folder / name).is_file() for package in PACKAGES for name in package.files)


def vendor_files(vendor_dir: Path = VENDOR_DIR) -> list[str]:
    """The installed files, relative to ``vendor_dir`` (``pyodide/pyodide.mjs``, …), licences included."""
    return sorted(f"{package.folder}/{name}" for package in PACKAGES for name in package.files
                  if (vendor_dir / package.folder / name).is_file())


#: the compressed copies' encodings (``Content-Encoding``), the preferred first, and their files' suffixes
SUFFIXES = {"br": ".br", "gzip": ".gz"}
#: smaller files are sent as they are (compressing them saves less than the headers it adds cost)
MIN_SIZE = 500
#: kinds compressed already: never compressed again
COMPRESSED_KINDS = (".zip", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".woff2", ".gz", ".br")


def compressible(path: Path | str, size: int) -> bool:
    return size >= MIN_SIZE and not str(path).endswith(COMPRESSED_KINDS)


def encodings() -> tuple[str, ...]:
    """The encodings this Python can write: gzip, and brotli where the ``brotli`` package is installed."""
    return tuple(name for name in SUFFIXES if name != "br" or brotli is not None)


def compress(data: bytes, encoding: str) -> bytes:
    """``data`` compressed at the encoding's best level: brotli 11 up to 4 MB, 9 beyond (11 takes ~35 s on Pyodide's
    9.6 MB of WebAssembly and saves 12% more than 9's 1.5 s); gzip 9 without a time in its header (the same file
    gives the same bytes)."""
    if encoding == "br":
        if brotli is None:
            raise ValueError("brotli is not installed")
        return bytes(brotli.compress(data, quality=11 if len(data) <= 4 << 20 else 9))
    return gzip.compress(data, 9, mtime=0)


def write_atomically(target: Path, body: bytes) -> None:
    """``body`` into ``target`` through a temporary file beside it, renamed: a reader never sees half of it."""
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    part.write_bytes(body)
    os.replace(part, target)


def _missing_copies(vendor_dir: Path) -> Iterator[tuple[Path, str, Path]]:
    """``(file, encoding, copy)`` for every compressible installed file whose copy in an encoding of
    :func:`encodings` is missing or older than the file."""
    for rel in vendor_files(vendor_dir):
        path = vendor_dir / rel
        if not compressible(path, path.stat().st_size):
            continue
        for encoding in encodings():
            copy = path.with_name(path.name + SUFFIXES[encoding])
            if not copy.is_file() or copy.stat().st_mtime_ns < path.stat().st_mtime_ns:
                yield path, encoding, copy


def precompress(vendor_dir: Path = VENDOR_DIR, *, log=print) -> int:  # type: ignore[no-untyped-def]
    """Write the compressed copies (:func:`encodings`) beside every installed file that has none, or an older one;
    returns how many were written."""
    written = 0
    for path, encoding, copy in _missing_copies(vendor_dir):
        write_atomically(copy, compress(path.read_bytes(), encoding))
        written += 1
    if written:
        log(f"compressed {written} copies ({', '.join(encodings())}) beside the files in {vendor_dir}")
    return written


def precompressed(vendor_dir: Path = VENDOR_DIR) -> bool:
    """Whether every compressible file has its copy in each encoding of :func:`encodings` (none is older)."""
    return next(_missing_copies(vendor_dir), None) is None


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as answer:
        return bytes(answer.read())


def install(vendor_dir: Path = VENDOR_DIR, *, fetch=_download, log=print) -> bool:  # type: ignore[no-untyped-def]
    """Download, check and unpack every pinned package into ``vendor_dir``, and compress them (:func:`precompress`);
    False (nothing was downloaded) when they are there already. ``ValueError`` when a tarball's sha256 is not the
    pinned one (nothing is unpacked then)."""
    if installed(vendor_dir):
        precompress(vendor_dir, log=log)
        return False
    unpacked: dict[str, bytes] = {}
    for package in PACKAGES:
        log(f"fetching {package.name}@{package.version} from {package.tarball}")
        data = fetch(package.tarball)
        digest = hashlib.sha256(data).hexdigest()
        if digest != package.sha256:
            raise ValueError(f"{package.name}@{package.version}: the tarball's sha256 is {digest}, "
                             f"not the pinned {package.sha256}")
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for name in package.files:
                member = tar.extractfile(f"package/{name}")
                if member is None:  # pragma: no cover - a pinned tarball has them
                    raise ValueError(f"{package.name}@{package.version} has no {name}")
                unpacked[f"{package.folder}/{name}"] = member.read()
    for rel, body in unpacked.items():
        target = vendor_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    (vendor_dir / "pins.json").write_text(json.dumps(pins(), indent=1) + "\n", encoding="utf-8")
    log(f"installed {len(unpacked)} files into {vendor_dir}")
    precompress(vendor_dir, log=log)
    return True


def install_in_background(say) -> None:  # type: ignore[no-untyped-def]
    """:func:`install` in a thread when the files are missing (``referee serve`` at its start, so that the README's
    run command needs no step of its own), telling ``say(text, err=False)`` what happened; a failure (no network)
    stops nothing: the page says the files are missing. Installed files without their compressed copies (installed
    by a Python without ``brotli``) get them, in the same thread."""
    if installed() and precompressed():
        return

    def fetch() -> None:
        try:
            if install(log=lambda _line: None):
                say("the browser verifier's files are installed: /play/verify works")
        except (OSError, ValueError) as exc:
            say(f"the browser verifier's files could not be fetched ({exc}); /play/verify says so, and "
                "`python -m referee.web.vendor` tries again", err=True)

    if installed():
        say("compressing the browser verifier's files (brotli) in the background")
    else:
        say("fetching the browser verifier's files (Pyodide, Ed25519: pinned npm tarballs) in the background")
    threading.Thread(target=fetch, name="verifier-files", daemon=True).start()


def main() -> int:
    try:
        if not install():
            print(f"the pinned Pyodide and Ed25519 files are in {VENDOR_DIR} already")
    except (OSError, ValueError) as exc:
        print(f"cannot install the browser verifier's files: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover - python -m referee.web.vendor
    sys.exit(main())
