"""Optional compiled speed-ups, built by ``scripts/build_native.py``; pure Python stands in.

Two of them read the C structures of another extension (selectolax's lexbor tree, the kenlm
model), so they are used only when built against the versions installed now
(``built_for.json``); ``STREAM_CLEANER_NATIVE=0`` turns all of them off. Each has a pure Python
reference that tests compare it with.
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


@cache
def native_module(name: str) -> ModuleType | None:
    """The compiled module ``name`` (one of `MODULES`), or None to use the Python path."""
    if not native_enabled():
        return None
    try:
        built_for = json.loads(BUILT_FOR.read_text())
    except (OSError, ValueError):
        return None  # never built
    problem = version_mismatch(built_for)
    if problem:
        log.warning("native speed-ups not used: %s (run scripts/build_native.py)", problem)
        return None
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ImportError as exc:
        log.warning("native speed-up %s not loaded: %s", name, exc)
        return None
