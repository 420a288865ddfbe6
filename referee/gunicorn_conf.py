"""gunicorn settings of ``referee serve`` and the ``Procfile`` (``gunicorn -c python:referee.gunicorn_conf``).

Forwarded headers: gunicorn by default believes ``X-Forwarded-Proto`` and header-borne ``SCRIPT_NAME``
from 127.0.0.1, so any local process could make the pages' links point at another host
(``SCRIPT_NAME: //evil.example``). Here only the proxies named in ``REFEREE_TRUSTED_PROXIES`` (none by
default) are trusted, and a header with an underscore from anyone else is dropped (the request is still
answered). The app applies the same setting itself (``referee/defences.py``).
"""

from __future__ import annotations

from referee.config import load_config

_config = load_config()

forwarded_allow_ips = ",".join(_config["REFEREE_TRUSTED_PROXIES"])  # "" is: nobody
header_map = "drop"
