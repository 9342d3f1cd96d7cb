"""Size, load time and memory of a KenLM model as the cleaner loads it (memory-mapped).

Reports the process RSS before and after loading and after scoring every sentence of the
CleanEval test pages, and how much of the model file is resident: file-backed pages of a
shared mapping are in the page cache once, however many worker processes map them.

    .venv/bin/python bench/model_footprint.py [MODEL]
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import load_cleaneval

from stream_cleaner import RawDocument, clean_document
from stream_cleaner.lm import DEFAULT_MODEL_PATH, LanguageModel

_MAPPING_HEADER = re.compile(r"[0-9a-f]+-[0-9a-f]+ ")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def mapping_kb(path: Path) -> dict[str, int]:
    """Rss, Pss and Shared of the model file's mapping, from /proc/self/smaps."""
    totals: dict[str, int] = {}
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if _MAPPING_HEADER.match(line):
            inside = line.rstrip().endswith(str(path))
            continue
        if inside:
            key, _, value = line.partition(":")
            if key in ("Rss", "Pss", "Shared_Clean", "Private_Clean"):
                totals[key] = totals.get(key, 0) + int(value.split()[0])
    return totals


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_MODEL_PATH).resolve()
    pages = load_cleaneval("test")
    before = rss_mb()
    model = LanguageModel(path)
    started = time.perf_counter()
    model.model  # noqa: B018 - load now
    load = time.perf_counter() - started
    loaded = rss_mb()
    started = time.perf_counter()
    n = sum(len(clean_document(RawDocument(body=p.raw), model=model).sentences) for p in pages)
    elapsed = time.perf_counter() - started
    print(f"model            {path.name} ({model.id}), order {model.order}")
    print(f"file size        {path.stat().st_size / 1e6:.1f} MB")
    print(f"load time        {load * 1000:.1f} ms (memory-mapped, lazy)")
    print(
        f"process RSS      {before:.0f} MB before load, {loaded:.0f} MB after, "
        f"{rss_mb():.0f} MB after cleaning {len(pages)} pages ({n} sentences, {elapsed:.1f} s)"
    )
    mapped = mapping_kb(path)
    print(
        f"model mapping    Rss {mapped.get('Rss', 0) / 1024:.1f} MB, "
        f"clean file-backed pages shared through the page cache"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
