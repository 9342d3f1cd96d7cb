"""Which HTML5 containers the corpus and article labellers should call boilerplate whatever
their trees say (a labeller file's ``boilerplate_containers``;
`training.BOILERPLATE_CONTAINERS_BY_MODE`).

Measured through `clean_document` on training and validation splits only: CleanEval dev
(corpus mode's training pages; none holds ``nav``, ``footer`` or ``aside``), Dragnet's train
split (word-alignment F1, macro) and MultiBoilerNet's modern English GoogleTrends train and val
pages, rebuilt as HTML from their rows (bench/multilingual_pipeline.py; MultiBoilerNet's macro
F1 over rows). Each variant replaces the loaded labeller's rule, the trees stay as shipped.

    PYTHONPATH=$PWD .venv/bin/python bench/container_rule.py [--modes corpus,article]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from multilingual import load_set, scores_of
from multilingual_pipeline import row_predictions

from stream_cleaner import CleanerSettings
from stream_cleaner.evaluate import clean_pages, read_pages, score_outputs
from stream_cleaner.labeller import load_labeller

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {
    "none": (),
    "nav": ("nav",),
    "nav footer": ("footer", "nav"),
    "nav footer aside": ("aside", "footer", "nav"),
    "nav footer aside header": ("aside", "footer", "header", "nav"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="corpus,article")
    parser.add_argument("--data", default=str(ROOT / ".cache/data"))
    args = parser.parse_args()

    dragnet = [p for p in read_pages(f"{args.data}/dragnet", split="train") if p.gold is not None]
    cleaneval = [p for p in read_pages(f"{args.data}/cleaneval/dev") if p.gold is not None]
    trends = {name: load_set(f"googletrends/{name}") for name in ("train", "val")}
    print("| mode | containers | CleanEval dev | Dragnet train | GoogleTrends train | val | s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in args.modes.split(","):
        settings = CleanerSettings(mode=mode)
        labeller = load_labeller(mode)
        shipped = labeller.boilerplate_containers
        try:
            for name, containers in VARIANTS.items():
                labeller.boilerplate_containers = containers
                start = time.perf_counter()
                row = [score_outputs(pages, clean_pages(pages, settings))[0].f1
                       for pages in (cleaneval, dragnet)]  # fmt: skip
                for pages in trends.values():
                    found = [row_predictions(p, settings)[0] for p in pages]
                    row.append(scores_of(pages, found)["macro"])
                mark = " (shipped)" if tuple(sorted(containers)) == tuple(sorted(shipped)) else ""
                figures = " | ".join(f"{f:.4f}" for f in row)
                print(f"| {mode} | {name}{mark} | {figures} | {time.perf_counter() - start:.0f} |",
                      flush=True)  # fmt: skip
        finally:
            labeller.boilerplate_containers = shipped


if __name__ == "__main__":
    main()
