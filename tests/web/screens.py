"""Screenshots that only people look at (``test-artifacts/``, ``docs/screens/``): made when asked for with
``REFEREE_SCREENSHOTS=1``, not on every run (a full page costs CPU, and no assertion reads them)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: whether screenshots for people are made in this run
SHOOT = os.environ.get("REFEREE_SCREENSHOTS") == "1"


def shoot(target: Any, path: Path, **options: Any) -> None:
    """``target.screenshot(path=path, **options)`` (a Playwright page or locator), with ``REFEREE_SCREENSHOTS=1``."""
    if SHOOT:
        target.screenshot(path=str(path), **options)
