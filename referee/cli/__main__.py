"""``python -m referee.cli …``: the ``referee`` command (``serve`` starts its children this way)."""

from . import main

if __name__ == "__main__":
    main()
