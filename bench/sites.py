"""Site-level template detection on Dragnet: F1 with and without site evidence.

Dragnet records no URLs; a page's site is the one it declares (canonical link, og:url, base
href) or the host most of its links point to (`stream_cleaner.sites.find_page_url`), and its
URL, as a crawler would send it, is its name on that host. Sites with
at least ``--min-site-pages`` pages are kept (a deterministic selection: the same pages every
run). Site statistics come from all pages of those sites, unlabelled, as a crawler's stream
would show them; quality is scored on the test-split pages only (`evaluate.dragnet_split`).

For each mode it prints word-alignment F1 (macro), the share of output words that are not in
the gold (boilerplate left), and pages/s with and without site evidence:

    python bench/sites.py [--modes perplexity,corpus,article]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.data import load_cleaneval, load_dragnet
from stream_cleaner import clean_document
from stream_cleaner.decode import decode_body
from stream_cleaner.document import RawDocument
from stream_cleaner.evaluate import align_words, dragnet_split
from stream_cleaner.lm import load_model
from stream_cleaner.pipeline import observe_site
from stream_cleaner.settings import CleanerSettings
from stream_cleaner.sites import SiteSettings, SiteTemplates, find_page_url, site_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-site-pages", type=int, default=8)
    parser.add_argument(
        "--dataset",
        choices=("dragnet", "cleaneval-test"),
        default="dragnet",
        help="dragnet: its test split scored, every page learnt; cleaneval-test: a check on "
        "another benchmark (its few multi-page sites, every one of their pages scored)",
    )
    parser.add_argument("--min-pages", type=int, help="the rule's min_pages (default: 5)")
    parser.add_argument("--no-throughput", action="store_true", help="quality only")
    parser.add_argument("--modes", help="comma-separated modes (default: every mode there is)")
    parser.add_argument(
        "--labeller",
        action="append",
        default=[],
        metavar="MODE=FILE",
        help="a labeller file for a mode instead of the shipped one (repeatable)",
    )
    parser.add_argument(
        "--rule-with-labeller",
        action="store_true",
        help="apply the direct rule also where the labeller reads site evidence",
    )
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})

    import stream_cleaner.settings as settings_module

    modes = (
        args.modes.split(",")
        if args.modes
        else list(getattr(settings_module, "MODES", ("perplexity",)))
    )
    pages = load_dragnet() if args.dataset == "dragnet" else load_cleaneval("test")
    site_pages: dict[str, list] = defaultdict(list)
    urls = {}
    for page in pages:
        url = getattr(page, "url", "")
        site = site_of(url or find_page_url(decode_body(page.raw).text))
        # the URL a crawler would send: the page's own, on its site's host (the URL a page
        # declares is often its site's home page, the same on every page)
        urls[page.name] = url or (f"https://{site}/{page.name}" if site else "")
        if site:
            site_pages[site].append(page)
    chosen = {s: p for s, p in sorted(site_pages.items()) if len(p) >= args.min_site_pages}
    all_pages = [page for group in chosen.values() for page in group]
    test = [
        p
        for p in all_pages
        if p.gold is not None and (args.dataset != "dragnet" or dragnet_split(p.name) == "test")
    ]
    print(
        f"{args.dataset} sites with >= {args.min_site_pages} pages: {len(chosen)} sites, "
        f"{len(all_pages)} pages ({len(test)} scored)"
    )
    model = load_model()
    rows = []
    for mode in modes:
        labellers = dict(spec.split("=", 1) for spec in args.labeller)
        settings = CleanerSettings(mode=mode, labeller_path=labellers.get(mode))
        site_settings = SiteSettings(rule_with_labeller=args.rule_with_labeller)
        if args.min_pages:
            site_settings = replace(site_settings, min_pages=args.min_pages)
        sites = SiteTemplates(replace(site_settings, window_pages=1_000_000, max_sites=1_000_000))
        for page in all_pages:
            raw = RawDocument(body=page.raw, id=page.name, url=urls[page.name])
            observe_site(raw, sites, settings=settings)
        for label, with_sites in (("without site evidence", None), ("with site evidence", sites)):
            f1s, noise = [], []
            for page in test:
                doc = clean_document(
                    RawDocument(body=page.raw, id=page.name, url=urls[page.name]),
                    settings=settings, model=model, sites=with_sites, learn_site=False,
                )  # fmt: skip
                alignment = align_words(doc.text, page.gold)
                f1s.append(alignment.f1)
                if alignment.output_words:
                    noise.append(1 - alignment.aligned / alignment.output_words)
            rows.append((mode, label, statistics.mean(f1s), statistics.mean(noise)))
        if args.no_throughput:
            continue
        # throughput as a stream sees it: learn as you go, over every page of the chosen sites,
        # with the URL a crawler sends (here: made from the site the page declares)
        # (best of three interleaved runs each: the machine's other load only adds time)
        raws = [RawDocument(body=page.raw, url=urls[page.name]) for page in all_pages]
        best = {"without": float("inf"), "with": float("inf")}
        for _ in range(3):
            for label, stream_sites in (("without", None), ("with", SiteTemplates(site_settings))):
                started = time.perf_counter()
                for raw in raws:
                    clean_document(raw, settings=settings, model=model, sites=stream_sites)
                best[label] = min(best[label], time.perf_counter() - started)
        for label, seconds in best.items():
            rows.append((mode, f"stream, {label} sites (pages/s)", len(raws) / seconds, None))
        cost = 1 - best["without"] / best["with"]
        rows.append((mode, "throughput cost of site evidence", cost, None))
    print("\n| mode | run | F1 (macro) / pages/s | non-gold share of output |")
    print("|---|---|---:|---:|")
    for mode, label, value, noise in rows:
        tail = f"{noise:.3f}" if noise is not None else ""
        print(f"| {mode} | {label} | {value:.3f} | {tail} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
