"""Quality and single-core speed of stream-cleaner (each of its modes) and its peers.

One process, one run, every system on the same pages and under the same scorers
(``stream_cleaner.evaluate``: CleanEval word alignment macro and micro, word Levenshtein
similarity, bag-of-tokens F1). The process pins itself to one CPU; each system is built, warmed
up on a few pages, then timed over each dataset in one pass (``throughput.measure_pass``: the
same timing as ``throughput.py``), and the texts of that pass are scored against the gold.
With ``--passes N`` the systems take turns for N timed passes each and the speed is the median
(the host's slow minutes then fall on every system, not on whichever ran through them).

Datasets: CleanEval test; CleanEval dev, flagged, since stream-cleaner's threshold was chosen on
it; Dragnet, all pages, the fixed test split (``stream_cleaner.evaluate.dragnet_split``) and
the test pages of sites with no page in the train split (``data.new_site_test_pages``), the
latter two scored from the same pass. The published outputs of jusText and Boilerpipe on
CleanEval test are scored too, beside our own runs of jusText and boilerpy3 on the same pages.

Run it in the bench venv (``bash bench/setup-env.sh``)::

    .cache/bench-venv/bin/python bench/quality.py [--limit N] [--systems a,b] [--out DIR]

It prints markdown tables and writes ``quality.json`` and ``quality.png`` (quality against
pages/s) into ``--out`` (default ``artifacts/quality``, ignored by git).
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
import throughput
from data import DATA_DIR, Page, load_cleaneval, load_dragnet, new_site_test_pages

from stream_cleaner.evaluate import (
    SCORER_NAMES,
    Summary,
    dragnet_split,
    read_outputs,
    score_outputs,
)

REPO = Path(__file__).resolve().parent.parent
OUT_DEFAULT = REPO / "artifacts" / "quality"
CPU_DEFAULT = 1
PUBLISHED = {"justext": "justext", "boilerpipe": "boilerpy3"}
"""Published CleanEval test outputs, by folder, with the peer we run that they compare with."""

DATASETS = ("cleaneval-test", "cleaneval-dev", "dragnet")
TUNED_ON = {"cleaneval-dev": "stream-cleaner's threshold was chosen on these pages"}


def stream_cleaner_modes() -> tuple[str, ...]:
    """stream-cleaner's modes: ``settings.MODES`` when it exists, else the one behaviour."""
    from stream_cleaner import settings

    return tuple(getattr(settings, "MODES", ("perplexity",)))


def stream_cleaner_system(mode: str) -> throughput.System:
    """stream-cleaner in one mode, with STREAM_CLEANER_* variables applied to the rest."""
    from stream_cleaner import settings as settings_module
    from stream_cleaner.settings import CleanerSettings

    settings = CleanerSettings.from_env()
    if hasattr(settings_module, "MODES"):
        settings = settings.with_options(mode=mode)
    return throughput.build_stream_cleaner(f"stream-cleaner-{mode}", settings)


def all_systems() -> tuple[str, ...]:
    """Every system name this script knows: stream-cleaner's modes, then the peers."""
    return (*(f"stream-cleaner-{m}" for m in stream_cleaner_modes()), *peers.PEERS)


def build_system(name: str) -> throughput.System:
    """Build one system by its name in :func:`all_systems`."""
    if name.startswith("stream-cleaner-"):
        return stream_cleaner_system(name.removeprefix("stream-cleaner-"))
    return throughput.build_peer(name)


def load_dataset(name: str, limit: int | None) -> list[Page]:
    """The pages of one dataset of :data:`DATASETS`."""
    if name == "dragnet":
        return load_dragnet(limit=limit)
    return load_cleaneval(name.removeprefix("cleaneval-"), limit=limit)


@dataclass(frozen=True, slots=True)
class Result:
    """One system on one (scored) dataset."""

    dataset: str
    system: str
    version: str | None
    summary: Summary
    pages_per_second: float | None  # the median of the passes
    failures: int
    pass_rates: tuple[float, ...] = ()  # pages/s of each timed pass, in order


def run_dataset(
    dataset: str,
    pages: Sequence[Page],
    systems: dict[str, throughput.System],
    warmup_pages: int,
    passes: int = 1,
) -> tuple[list[Result], dict[str, dict[str, str]]]:
    """Time and score every system on one dataset.

    With several ``passes``, the systems take turns (every system's first pass, then every
    system's second...), so a slow minute of the machine falls on all of them; a system's
    speed is the median of its passes and the texts scored are its first pass's.

    Returns:
        The results (Dragnet twice: all pages and the test split) and each system's outputs
        by page name.
    """
    results: list[Result] = []
    outputs: dict[str, dict[str, str]] = {}
    scored = {dataset: pages}
    if dataset == "dragnet":
        scored = {
            "dragnet-test": [p for p in pages if dragnet_split(p.name) == "test"],
            "dragnet-test-new-sites": new_site_test_pages(pages),
            "dragnet-all": pages,
        }
    rates: dict[str, list[float]] = {name: [] for name in systems}
    failures: dict[str, int] = {}
    for system in systems.values():
        throughput.warm_up(system, pages[:warmup_pages])
    for turn in range(passes):
        for name, system in systems.items():
            row, result = throughput.measure_pass(system, pages)
            rates[name].append(row.pages_per_second)
            if turn == 0:
                failures[name] = row.failures
                outputs[name] = dict(zip((p.name for p in pages), result.texts, strict=True))
            print(
                f"{dataset} {name}: pass {turn + 1}/{passes}, {row.pages_per_second:.1f} pages/s",
                file=sys.stderr,
            )
    for name, system in systems.items():
        speed, rates_of = statistics.median(rates[name]), tuple(rates[name])
        started = time.perf_counter()
        for label, subset in scored.items():
            if not any(p.gold is not None for p in subset):
                continue  # a --limit too small for any test-split page
            summary, _ = score_outputs(subset, outputs[name])
            results.append(
                Result(label, name, system.version, summary, speed, failures[name], rates_of)
            )
        print(
            f"{dataset} {name}: {speed:.1f} pages/s (median of {passes}), macro F1 "
            f"{results[-1].summary.f1:.3f} (scored in {time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
    return results, outputs


def score_published(
    pages: Sequence[Page], ours: dict[str, dict[str, str]], root: Path
) -> list[tuple[str, str, Summary, Summary]]:
    """Score the published outputs and our run of the same peer on the pages both cover.

    Returns:
        ``(published folder, our peer, published summary, our summary)`` per folder found.
    """
    rows = []
    for folder, peer in PUBLISHED.items():
        path = root / "cleaneval" / "published-outputs" / folder
        if not path.is_dir() or peer not in ours:
            continue
        published = read_outputs(path, [p.name for p in pages])
        covered = [p for p in pages if p.name in published]
        if not covered:
            continue
        theirs, _ = score_outputs(covered, published)
        mine, _ = score_outputs(covered, ours[peer])
        rows.append((folder, peer, theirs, mine))
    return rows


def save_outputs(folder: Path, outputs: dict[str, dict[str, str]]) -> None:
    """Write each system's texts as ``folder/SYSTEM/NAME.txt`` (UTF-8)."""
    for system, texts in outputs.items():
        target = folder / system
        target.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (target / f"{name}.txt").write_text(text, encoding="utf-8")


def format_results(results: Sequence[Result], dataset: str) -> str:
    """One dataset's markdown table, best macro word-alignment F1 first."""
    rows = sorted((r for r in results if r.dataset == dataset), key=lambda r: -r.summary.f1)
    lines = [
        "| system | word-align F1 (macro) | P (macro) | R (macro) | word-align F1 (micro) "
        "| Levenshtein sim. | bag-of-tokens F1 | pages/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        s = r.summary
        speed = f"{r.pages_per_second:.1f}" if r.pages_per_second else "-"
        if len(r.pass_rates) > 1:
            speed += f" ({min(r.pass_rates):.0f}-{max(r.pass_rates):.0f})"
        lines.append(
            f"| {r.system} | {s.f1:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.micro_f1:.3f} "
            f"| {s.levenshtein:.3f} | {s.bag_f1:.3f} | {speed} |"
        )
    return "\n".join(lines)


def format_published(rows: Sequence[tuple[str, str, Summary, Summary]]) -> str:
    """The published outputs against our runs of the same tools, on the same pages."""
    lines = [
        "| outputs | pages | word-align F1 (macro) | word-align F1 (micro) | Levenshtein sim. "
        "| bag-of-tokens F1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for folder, peer, theirs, mine in rows:
        for label, s in ((f"{folder} (published)", theirs), (f"{peer} (this run)", mine)):
            lines.append(
                f"| {label} | {s.pages} | {s.f1:.3f} | {s.micro_f1:.3f} | {s.levenshtein:.3f} "
                f"| {s.bag_f1:.3f} |"
            )
    return "\n".join(lines)


def plot(results: Sequence[Result], path: Path) -> None:
    """Macro word-alignment F1 against pages/s (log scale), one panel per dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = [d for d in ("cleaneval-test", "dragnet-test", "dragnet-test-new-sites",
                            "dragnet-all", "cleaneval-dev")
                if any(r.dataset == d for r in results)]  # fmt: skip
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    cols = min(2, len(datasets))
    rows = (len(datasets) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.8 * rows), squeeze=False)
    for ax in axes.flat[len(datasets) :]:
        ax.set_visible(False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for r in (r for r in results if r.dataset == dataset and r.pages_per_second):
            ours = r.system.startswith("stream-cleaner")
            ax.scatter(r.pages_per_second, r.summary.f1, color="C3" if ours else "C0", zorder=3)
            ax.annotate(r.system, (r.pages_per_second, r.summary.f1), fontsize=7,
                        xytext=(4, 3), textcoords="offset points")  # fmt: skip
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("pages/s, one core (log)")
        ax.set_ylabel("word-alignment F1 (macro)")
        ax.set_title(dataset + (" (tuned on)" if dataset in TUNED_ON else ""))
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    systems = all_systems()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N pages of each")
    parser.add_argument(
        "--systems",
        default=",".join(systems),
        help=f"comma-separated systems (default: all of {', '.join(systems)})",
    )
    parser.add_argument(
        "--datasets",
        default=",".join(DATASETS),
        help=f"comma-separated datasets (default: all of {', '.join(DATASETS)})",
    )
    parser.add_argument("--out", type=Path, default=OUT_DEFAULT, help="where the JSON and PNG go")
    parser.add_argument("--cpu", type=int, default=CPU_DEFAULT, help="the CPU to pin to (1)")
    parser.add_argument(
        "--warmup-pages", type=int, default=throughput.WARMUP_PAGES_DEFAULT, metavar="N"
    )
    parser.add_argument(
        "--passes",
        type=int,
        default=1,
        metavar="N",
        help="timed passes per system and dataset, the systems taking turns; pages/s is the "
        "median, the range beside it (1)",
    )
    parser.add_argument(
        "--save-outputs",
        action="store_true",
        help="also write every system's texts to OUT/outputs/DATASET/SYSTEM/NAME.txt "
        "(score them again with `stream-cleaner evaluate --outputs`)",
    )
    parser.add_argument("--verbose", action="store_true", help="let the systems log")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    args.datasets = [s.strip() for s in args.datasets.split(",") if s.strip()]
    if unknown := sorted(set(args.systems) - set(systems)):
        parser.error(f"unknown systems {unknown}; choose from {', '.join(systems)}")
    if unknown := sorted(set(args.datasets) - set(DATASETS)):
        parser.error(f"unknown datasets {unknown}; choose from {', '.join(DATASETS)}")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every system on every dataset, print the tables, write the JSON and the plot."""
    args = parse_args(argv)
    if not args.verbose:
        logging.disable(logging.ERROR)  # peers log per odd page; it would be timed too
    affinity = throughput.pin_to_one_core(args.cpu)
    print(f"{affinity}; Python {platform.python_version()}", file=sys.stderr)
    systems: dict[str, throughput.System] = {}
    skipped: dict[str, str] = {}
    for name in args.systems:
        try:
            systems[name] = build_system(name)
        except Exception as exc:  # one system that cannot be built costs only its rows
            skipped[name] = f"{type(exc).__name__}: {exc}"
            print(f"skipping {name}: {skipped[name]}", file=sys.stderr)
    results: list[Result] = []
    published: list[tuple[str, str, Summary, Summary]] = []
    sizes: dict[str, int] = {}
    for dataset in args.datasets:
        pages = load_dataset(dataset, args.limit)
        sizes[dataset] = len(pages)
        found, outputs = run_dataset(dataset, pages, systems, args.warmup_pages, args.passes)
        results += found
        if args.save_outputs:
            save_outputs(args.out / "outputs" / dataset, outputs)
        if dataset == "cleaneval-test":
            published = score_published(pages, outputs, DATA_DIR)

    print(f"Scorers: {'; '.join(SCORER_NAMES.values())}. {affinity}.\n")
    for dataset in dict.fromkeys(r.dataset for r in results):
        pages = results[[r.dataset for r in results].index(dataset)].summary.pages
        note = f" ({TUNED_ON[dataset]})" if dataset in TUNED_ON else ""
        print(f"### {dataset}, {pages} pages{note}\n\n{format_results(results, dataset)}\n")
    if published:
        print("### CleanEval test: published outputs against this run, on the pages they cover\n")
        print(format_published(published) + "\n")
    if skipped:
        print("Skipped: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    failures = {k: v for k, v in peers.FAILURES.items() if v}
    if failures:
        print(f"Peer exceptions (pages returned as empty): {failures}")

    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "cpu": affinity,
        "python": platform.python_version(),
        "limit": args.limit,
        "passes": args.passes,
        "scorers": SCORER_NAMES,
        "pages": sizes,
        "results": [{**asdict(r), "summary": r.summary.to_dict()} for r in results],
        "published": [
            {"outputs": f, "peer": p, "published": t.to_dict(), "this_run": m.to_dict()}
            for f, p, t, m in published
        ],
        "skipped": skipped,
        "peer_failures": failures,
    }
    (args.out / "quality.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if results:
        plot(results, args.out / "quality.png")
    print(f"wrote {args.out / 'quality.json'} and {args.out / 'quality.png'}", file=sys.stderr)
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
