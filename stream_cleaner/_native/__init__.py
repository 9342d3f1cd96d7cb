"""Optional compiled speed-ups, compiled into the wheel (``setup.py``) or in place in a source
tree (``scripts/build_native.py``); pure Python stands in, at about half the speed.

Two of them read the C structures of another extension (selectolax's lexbor tree, the kenlm
model), so they are used only when built against the versions installed now
(``built_for.json``), and, where their sources are at hand (a source tree), only when built
from these sources: a checkout that changed a ``.pyx`` without rebuilding runs in pure Python
instead of calling functions its old build lacks. ``STREAM_CLEANER_NATIVE=0`` turns all of
them off. When they cannot be used otherwise (never built, built for other versions or from
other sources), the log says so once, as a warning.
Each has a pure Python reference that tests compare it with.
"""

from __future__ import annotations

import hashlib
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
    "record_batch", "decoding", "sequence", "page_structure", "langid",
)  # fmt: skip


def native_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False when ``STREAM_CLEANER_NATIVE`` says off (0, false, no, off)."""
    value = (os.environ if environ is None else environ).get("STREAM_CLEANER_NATIVE", "1")
    return value.strip().lower() not in ("0", "false", "no", "off")


# built_for.json's digest of the sources the modules were built from (`source_digest`)
SOURCES_KEY = "sources"
SOURCE_SUFFIXES = (".pyx", ".pxi", ".h")


def source_digest(directory: Path = BUILT_FOR.parent) -> str | None:
    """The SHA-256 of the native modules' sources in ``directory`` (their names and bytes),
    or None where they are not there (an installed wheel without them)."""
    files = sorted(p for p in directory.iterdir() if p.suffix in SOURCE_SUFFIXES)
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stale_sources(built_for: Mapping[str, str], directory: Path = BUILT_FOR.parent) -> str | None:
    """Why modules built from the sources ``built_for`` names cannot be used with the sources
    in ``directory``, or None if they can (or no sources are there to compare)."""
    digest = source_digest(directory)
    if digest is None or built_for.get(SOURCES_KEY) == digest:
        return None
    return "they were built from other sources (a .pyx, .pxi or .h file has changed since)"


def version_mismatch(built_for: Mapping[str, str]) -> str | None:
    """Why modules built for these package versions cannot be used now, or None if they can."""
    for package, version in built_for.items():
        if package == SOURCES_KEY:
            continue
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
        problem = version_mismatch(built_for) or stale_sources(built_for, BUILT_FOR.parent)
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
