"""Optional compiled speed-ups, compiled into the wheel (``setup.py``) or in place in a source
tree (``scripts/build_native.py``); pure Python stands in, at about half the speed.

Two of them read the C structures of another extension (selectolax's lexbor tree, the kenlm
model), so they are used only when built against the versions installed now
(``built_for.json``); ``STREAM_CLEANER_NATIVE=0`` turns all of them off. When they cannot be
used otherwise (never built, built for other versions), the log says so once, as a warning.
Each has a pure Python reference that tests compare it with.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)
BUILT_FOR = Path(__file__).parent / "built_for.json"
MODULES = (
    "lexbor_walk", "sentences", "signatures", "trees", "text_features", "kenlm_score",
    "record_batch", "decoding", "sequence", "page_structure",
)  # fmt: skip


def native_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False when ``STREAM_CLEANER_NATIVE`` says off (0, false, no, off)."""
    value = (os.environ if environ is None else environ).get("STREAM_CLEANER_NATIVE", "1")
    return value.strip().lower() not in ("0", "false", "no", "off")


def version_mismatch(built_for: Mapping[str, str]) -> str | None:
    """Why modules built for these package versions cannot be used now, or None if they can."""
    for package, version in built_for.items():
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return f"{package} is not installed"
        if installed != version:
            return f"built for {package} {version}, but {installed} is installed"
    return None


HOW_TO_BUILD = "install the stream-cleaner wheel, or in a source tree run scripts/build_native.py"


@cache
def native_usable() -> bool:
    """Whether the compiled modules may be loaded; the first call says why not, once."""
    if not native_enabled():
        log.info("native speed-ups turned off (STREAM_CLEANER_NATIVE): running in pure Python")
        return False
    try:
        built_for = json.loads(BUILT_FOR.read_text())
    except (OSError, ValueError):
        problem = "they were never built"
    else:
        problem = version_mismatch(built_for)
    if problem:
        log.warning(
            "native speed-ups not used: %s; running in pure Python, about half as fast (%s)",
            problem,
            HOW_TO_BUILD,
        )
        return False
    return True


@cache
def native_module(name: str) -> ModuleType | None:
    """The compiled module ``name`` (one of `MODULES`), or None to use the Python path."""
    if not native_usable():
        return None
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ImportError as exc:
        log.warning("native speed-up %s not loaded: %s", name, exc)
        return None
