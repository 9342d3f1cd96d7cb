"""``python -m stream_cleaner._native``: which native speed-ups load here; exit 1 if any does not.

The image's build runs it, so an image without them fails to build instead of running at half
speed.
"""

from __future__ import annotations

import json
import logging
import sys

from . import BUILT_FOR, MODULES, native_module


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    missing = [name for name in MODULES if native_module(name) is None]
    try:
        built_for = json.loads(BUILT_FOR.read_text())
    except (OSError, ValueError):
        built_for = None
    loaded = len(MODULES) - len(missing)
    print(f"native speed-ups: {loaded} of {len(MODULES)} loaded, built for {built_for}")
    if missing:
        print(f"not loaded: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
