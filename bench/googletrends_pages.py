"""MultiBoilerNet's English GoogleTrends pages as page sets that `stream-cleaner train-labeller`
and `stream-cleaner evaluate --layout generic` read: ``html/NAME.html``, the page rebuilt from
its rows (`multilingual_pipeline.page_html`), and ``gold/NAME.txt``, the text of its content
rows, one a line.

These are the modern pages among the data (BoilerNet's pages found through Google Trends
topics, HTML5 containers and all; Dragnet's are from 2012), labelled as article extraction
labels them: the main content is content. The article labeller trains on Dragnet's train
split and the 50 train pages (docs/labeller.md); the 30 val pages validate it; the 100 test
pages are reported only.

    PYTHONPATH=$PWD .venv/bin/python bench/googletrends_pages.py   # after bench/setup-data.sh
"""

from __future__ import annotations

import argparse
from pathlib import Path

from multilingual import load_set
from multilingual_pipeline import page_html

ROOT = Path(__file__).resolve().parent.parent
SPLITS = ("train", "val", "test")


def write_page_set(split: str, out: Path) -> int:
    """Write one split's pages under ``out``; returns how many."""
    for sub in ("html", "gold"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    pages = load_set(f"googletrends/{split}")
    for page in pages:
        stem = page.name.rsplit("/", 1)[-1]
        (out / "html" / f"{stem}.html").write_text(page_html(page), encoding="utf-8")
        content = [t.strip() for t, label in zip(page.texts, page.labels, strict=True) if label]
        gold = "\n".join(t for t in content if t)
        (out / "gold" / f"{stem}.txt").write_text(gold + "\n", encoding="utf-8")
    return len(pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / ".cache/data/googletrends-pages"))
    args = parser.parse_args()
    for split in SPLITS:
        n = write_page_set(split, Path(args.out) / split)
        print(f"{n} pages in {Path(args.out) / split}")


if __name__ == "__main__":
    main()
