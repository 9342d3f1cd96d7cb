"""Quality and single-core speed of stream-cleaner (each of its modes) and its peers.

One process, one run, every system on the same pages and under the same scorers
(``stream_cleaner.evaluate``: CleanEval word alignment macro and micro, word Levenshtein
similarity, bag-of-tokens F1; on sets with a ``checks.json``, trafilatura's snippet checks too,
and every figure per page type). The process pins itself to one CPU; each system is built, warmed
up on a few pages, then timed over each dataset in one pass (``throughput.measure_pass``: the
same timing as ``throughput.py``), and the texts of that pass are scored against the gold.
With ``--passes N`` the systems take turns for N timed passes each and the speed is the median
(the host's slow minutes then fall on every system, not on whichever ran through them).

Datasets: CleanEval test; CleanEval dev, flagged, since stream-cleaner's threshold was chosen on
it; Dragnet, all pages, the fixed test split (``stream_cleaner.evaluate.dragnet_split``) and
the test pages of sites with no page in the train split (``data.new_site_test_pages``), the
latter two scored from the same pass; the 460 pages of 2026 (``modern2026``, generic layout
with page types and snippet checks) and any other set in that layout (:data:`PAGE_SETS`, or
``--dataset NAME=PATH``). The published outputs of jusText and Boilerpipe on CleanEval test
are scored too, beside our own runs of jusText and boilerpy3 on the same pages.

Lost main content: for each stream-cleaner system and each peer, the pages whose main content
one loses and the other keeps, both ways (``stream_cleaner.evaluate.lost_main_content``), on
every set and per page type. Each stream-cleaner system's macro word-alignment F1 minus each
peer's, with a 95 % interval from a bootstrap over the pages' sites
(``stream_cleaner.evaluate.paired_difference``, ``page_sites``): whether a lead of a few
thousandths is one.

stream-cleaner runs in each mode of ``stream_cleaner.settings.MODES`` (a new mode shows up
here by itself), with ``STREAM_CLEANER_*`` variables applied to every mode; ``--variant NAME
FIELD=VALUE...`` adds a stream-cleaner system of its own settings (an experimental labeller:
``--variant exp mode=article labeller_path=/tmp/labeller.json``).

Run it in the bench venv (``bash bench/setup-env.sh``)::

    .cache/bench-venv/bin/python bench/quality.py [--limit N] [--systems a,b] [--out DIR]
        [--datasets modern2026] [--dataset NAME=PATH] [--variant NAME FIELD=VALUE...]

It prints markdown tables and writes ``quality.json`` and ``quality.png`` (quality against
pages/s) into ``--out`` (default ``artifacts/quality``, ignored by git).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
import throughput
from data import (
    DATA_DIR,
    Page,
    load_cleaneval,
    load_dragnet,
    load_page_set,
    new_site_test_pages,
)

from stream_cleaner.evaluate import (
    KEPT_MIN_RECALL,
    LOST_MAX_RECALL,
    LOST_MIN_GOLD_WORDS,
    SCORER_NAMES,
    Difference,
    LostContent,
    PageScore,
    Summary,
    compare_lost,
    dragnet_split,
    page_sites,
    paired_difference,
    read_outputs,
    score_outputs,
    summarize_by_type,
)

REPO = Path(__file__).resolve().parent.parent
OUT_DEFAULT = REPO / "artifacts" / "quality"
CPU_DEFAULT = 1
PUBLISHED = {"justext": "justext", "boilerpipe": "boilerpy3"}
"""Published CleanEval test outputs, by folder, with the peer we run that they compare with."""

PAGE_SETS = {"modern2026": "modern2026"}
"""Sets in the generic layout (``html/``, ``gold/``, optionally ``checks.json``), by dataset
name: their folder under ``.cache/data``. Add one here, or at run time with ``--dataset``."""

DATASETS = ("cleaneval-test", "cleaneval-dev", "dragnet", *PAGE_SETS)
TUNED_ON = {"cleaneval-dev": "stream-cleaner's threshold was chosen on these pages"}
OURS = "stream-cleaner"
"""The prefix of stream-cleaner's system names; every other system is a peer."""
ALL_PAGES = "all"
"""The key of the whole set beside its page types, in the lost-main-content figures."""


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
    return throughput.build_stream_cleaner(f"{OURS}-{mode}", settings)


def settings_fields() -> set[str]:
    """The names of stream-cleaner's settings, which ``--variant`` may set."""
    from stream_cleaner.settings import CleanerSettings

    return {f.name for f in dataclasses.fields(CleanerSettings)}


def variant_system(name: str, options: Sequence[str]) -> throughput.System:
    """stream-cleaner with its own settings: ``FIELD=VALUE`` of ``CleanerSettings`` on top of
    the STREAM_CLEANER_* variables, each value read as that variable would be.

    Raises:
        ValueError: for an option that is not ``FIELD=VALUE`` of a settings field.
    """
    from stream_cleaner.settings import ENV_PREFIX, CleanerSettings

    known = settings_fields()
    environ = dict(os.environ)
    for option in options:
        field, sep, value = option.partition("=")
        if not sep or field not in known:
            raise ValueError(f"{name}: {option!r} is not FIELD=VALUE of {sorted(known)}")
        environ[ENV_PREFIX + field.upper()] = value
    return throughput.build_stream_cleaner(name, CleanerSettings.from_env(environ))


def settings_out_of_fold(directory: Path, base: Any) -> dict[str, Any]:
    """Each page a fold labeller was trained without (``DIR/folds.json``) -> ``base`` (`auto`
    settings) with that fold's labeller and, where ``bench/page_types.py --folds`` wrote it,
    that fold's page-type model (see `out_of_fold_system`)."""
    folds = json.loads((directory / "folds.json").read_text())["pages"]

    def page_types(k: int) -> str | None:
        path = directory / f"page-types-fold-{k}.json"
        return str(path) if path.is_file() else None

    by_fold = {
        k: base.with_options(
            labeller_path=str(directory / f"fold-{k}.json"), page_type_model_path=page_types(k)
        )
        for k in set(folds.values())
    }
    return {name: by_fold[k] for name, k in folds.items()}


def out_of_fold_system(name: str, directory: Path) -> throughput.System:
    """stream-cleaner in `auto` mode where each page that a fold labeller was trained without
    is cleaned by that labeller (``bench/auto_training.py folds`` writes ``DIR/fold-K.json``
    and ``DIR/folds.json``, page name -> fold): the figures of pages the shipped labeller
    learnt from, out of fold. Other pages get the shipped labeller. Where ``bench/page_types.py
    --folds DIR`` wrote ``DIR/page-types-fold-K.json``, the page's type (which `auto`'s rules
    read) comes from that fold's page-type model too, else from the shipped one, which learnt
    every 2026 page."""
    from stream_cleaner import clean_document
    from stream_cleaner.settings import CleanerSettings

    base = CleanerSettings.from_env().with_options(mode="auto")
    by_page = settings_out_of_fold(directory, base)
    system = throughput.build_stream_cleaner(name, base)

    def run(raws: list[Any]) -> throughput.PassResult:
        texts, reasons, empty = [], Counter(), 0
        for raw in raws:
            doc = clean_document(raw, settings=by_page.get(raw.id, base))
            if doc.error is not None:
                reasons[doc.error] += 1
            empty += not doc.text
            texts.append(doc.text)
        return throughput.PassResult(reasons.total(), empty, dict(reasons), tuple(texts), {})

    return dataclasses.replace(system, run=run)


def all_systems() -> tuple[str, ...]:
    """Every system name this script knows: stream-cleaner's modes, then the peers."""
    return (*(f"stream-cleaner-{m}" for m in stream_cleaner_modes()), *peers.PEERS)


def build_system(
    name: str,
    variants: dict[str, list[str]] | None = None,
    out_of_fold: dict[str, Path] | None = None,
) -> throughput.System:
    """Build one system by its name in :func:`all_systems`, in ``variants`` (its options) or
    in ``out_of_fold`` (its fold labellers' folder)."""
    if variants and name in variants:
        return variant_system(name, variants[name])
    if out_of_fold and name in out_of_fold:
        return out_of_fold_system(name, out_of_fold[name])
    if name.startswith(f"{OURS}-"):
        return stream_cleaner_system(name.removeprefix(f"{OURS}-"))
    return throughput.build_peer(name)


def load_dataset(name: str, limit: int | None, page_sets: dict[str, str] = PAGE_SETS) -> list[Page]:
    """The pages of one dataset of :data:`DATASETS` or of ``page_sets`` (name -> folder)."""
    if name in page_sets:
        return load_page_set(page_sets[name], limit=limit)
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
    by_type: dict[str, Summary] = dataclasses.field(default_factory=dict)  # per page type


def run_dataset(
    dataset: str,
    pages: Sequence[Page],
    systems: dict[str, throughput.System],
    warmup_pages: int,
    passes: int = 1,
) -> tuple[list[Result], dict[str, dict[str, str]], dict[str, dict[str, list[PageScore]]]]:
    """Time and score every system on one dataset.

    With several ``passes``, the systems take turns (every system's first pass, then every
    system's second...), so a slow minute of the machine falls on all of them; a system's
    speed is the median of its passes and the texts scored are its first pass's.

    Returns:
        The results (Dragnet three times: all pages, the test split, its pages of new sites),
        each system's outputs by page name, and the per-page scores by scored set and system.
    """
    results: list[Result] = []
    outputs: dict[str, dict[str, str]] = {}
    page_scores: dict[str, dict[str, list[PageScore]]] = {}
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
            summary, per_page = score_outputs(subset, outputs[name])
            page_scores.setdefault(label, {})[name] = per_page
            results.append(
                Result(
                    label,
                    name,
                    system.version,
                    summary,
                    speed,
                    failures[name],
                    rates_of,
                    summarize_by_type(per_page),
                )
            )
        print(
            f"{dataset} {name}: {speed:.1f} pages/s (median of {passes}), macro F1 "
            f"{results[-1].summary.f1:.3f} (scored in {time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
    return results, outputs, page_scores


def compare_with_peers(
    scores: dict[str, list[PageScore]],
) -> dict[str, dict[str, dict[str, LostContent]]]:
    """Lost main content of each stream-cleaner system against each peer, both ways.

    Args:
        scores: the per-page scores of one scored set, by system.

    Returns:
        ``{ours: {peer: {"all": LostContent, page type: LostContent, ...}}}``, the page types
        of the set's checks (none without checks), the most frequent first.
    """
    types = list(summarize_by_type(next(iter(scores.values()), [])))
    table: dict[str, dict[str, dict[str, LostContent]]] = {}
    for ours, our_scores in scores.items():
        if not ours.startswith(OURS):
            continue
        for peer, peer_scores in scores.items():
            if peer.startswith(OURS):
                continue
            cells = {ALL_PAGES: compare_lost(our_scores, peer_scores)}
            for kind in types:
                cells[kind] = compare_lost(
                    [s for s in our_scores if s.page_type == kind],
                    [s for s in peer_scores if s.page_type == kind],
                )
            table.setdefault(ours, {})[peer] = cells
    return table


def differences_from_peers(
    scores: dict[str, list[PageScore]], sites: dict[str, str]
) -> dict[str, dict[str, Difference]]:
    """Each stream-cleaner system's macro word-alignment F1 minus each peer's on one scored
    set, with its interval over the pages' ``sites`` (`paired_difference`)."""
    return {
        ours: {
            peer: paired_difference(our_scores, peer_scores, sites)
            for peer, peer_scores in scores.items()
            if not peer.startswith(OURS)
        }
        for ours, our_scores in scores.items()
        if ours.startswith(OURS)
    }


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


def format_results(results: Sequence[Result], dataset: str, page_type: str | None = None) -> str:
    """One dataset's markdown table, or one page type's, best macro word-alignment F1 first.

    The snippet checks get a column when the set has them; pages/s only for the whole set.
    """

    def summary_of(r: Result) -> Summary | None:
        return r.summary if page_type is None else r.by_type.get(page_type)

    rows = [(r, s) for r in results if r.dataset == dataset and (s := summary_of(r)) is not None]
    rows.sort(key=lambda row: -row[1].f1)
    snippets = any(s.snippets is not None for _, s in rows)
    lines = [
        "| system | word-align F1 (macro) | P (macro) | R (macro) | word-align F1 (micro) "
        "| Levenshtein sim. | bag-of-tokens F1 |"
        + (" snippet F1 (P / R) |" if snippets else "")
        + (" pages/s |" if page_type is None else ""),
        "|---|---:|---:|---:|---:|---:|---:|"
        + ("---:|" if snippets else "")
        + ("---:|" if page_type is None else ""),
    ]
    for r, s in rows:
        line = (
            f"| {r.system} | {s.f1:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.micro_f1:.3f} "
            f"| {s.levenshtein:.3f} | {s.bag_f1:.3f} |"
        )
        if snippets:
            c = s.snippets
            line += f" {c.f1:.3f} ({c.precision:.3f} / {c.recall:.3f}) |" if c else " - |"
        if page_type is None:
            speed = f"{r.pages_per_second:.1f}" if r.pages_per_second else "-"
            if len(r.pass_rates) > 1:
                speed += f" ({min(r.pass_rates):.0f}-{max(r.pass_rates):.0f})"
            line += f" {speed} |"
        lines.append(line)
    return "\n".join(lines)


def format_lost(table: dict[str, dict[str, dict[str, LostContent]]]) -> str:
    """Lost main content, each stream-cleaner system against each peer: one row per pair, a
    column for the whole set and one per page type; a cell reads ``lost / reverse``."""
    first = next(iter(next(iter(table.values())).values()))
    keys = list(first)
    lines = [
        "| stream-cleaner vs peer | " + " | ".join(f"{k} ({first[k].pages})" for k in keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    for ours, against in table.items():
        for peer, cells in against.items():
            counts = " | ".join(f"{len(cells[k].lost)} / {len(cells[k].reverse)}" for k in keys)
            lines.append(f"| {ours.removeprefix(OURS + '-')} vs {peer} | {counts} |")
    return "\n".join(lines)


def format_differences(table: dict[str, dict[str, Difference]]) -> str:
    """One row per stream-cleaner system and peer: the difference, its interval, how often
    stream-cleaner is ahead in the resamples, and the pages and sites resampled."""
    lines = [
        "| stream-cleaner minus peer | macro F1 difference | 95 % interval | ahead in | pages "
        "(sites) |",
        "|---|---:|---:|---:|---:|",
    ]
    for ours, against in table.items():
        for peer, d in against.items():
            lines.append(
                f"| {ours.removeprefix(OURS + '-')} - {peer} | {d.mean:+.4f} | "
                f"{d.low:+.4f} to {d.high:+.4f} | {d.ahead:.0%} | {d.pages} ({d.sites}) |"
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

    first = ("cleaneval-test", "dragnet-test", "dragnet-test-new-sites", "dragnet-all")
    found = list(dict.fromkeys(r.dataset for r in results))
    datasets = [d for d in first if d in found] + [d for d in found if d not in first]
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
        help=f"comma-separated datasets (default: all of {', '.join(DATASETS)}, and those of "
        "--dataset)",
    )
    parser.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="add a set in the generic layout (PATH/html/NAME.html, PATH/gold/NAME.txt, "
        "optionally PATH/checks.json; PATH absolute or under .cache/data); repeatable",
    )
    parser.add_argument(
        "--variant",
        action="append",
        nargs="+",
        default=[],
        metavar="ARG",
        help="NAME FIELD=VALUE...: add a stream-cleaner system named stream-cleaner-NAME with "
        "these CleanerSettings fields over the STREAM_CLEANER_* variables (e.g. --variant exp "
        "mode=article labeller_path=/tmp/labeller.json); it always runs; repeatable",
    )
    parser.add_argument(
        "--out-of-fold",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="add a stream-cleaner system named stream-cleaner-NAME in auto mode that cleans "
        "each page a fold labeller of DIR was trained without with that labeller "
        "(bench/auto_training.py folds); it always runs; repeatable",
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
    args.page_sets = dict(PAGE_SETS)
    for entry in args.dataset:
        name, sep, path = entry.partition("=")
        if not sep or not name.strip() or not path.strip():
            parser.error(f"--dataset takes NAME=PATH, not {entry!r}")
        if name.strip() in DATASETS:
            parser.error(f"--dataset {name.strip()!r}: that name is taken")
        args.page_sets[name.strip()] = path.strip()
    datasets = (*DATASETS, *(n for n in args.page_sets if n not in DATASETS))
    args.variants = {}
    for name, *options in args.variant:
        full = name if name.startswith(f"{OURS}-") else f"{OURS}-{name}"
        if full in systems or full in args.variants:
            parser.error(f"--variant {name!r}: that system name is taken")
        fields = settings_fields()
        if bad := [o for o in options if "=" not in o or o.partition("=")[0] not in fields]:
            parser.error(f"--variant {name!r}: {bad} are not FIELD=VALUE of CleanerSettings")
        args.variants[full] = options
    entries, args.out_of_fold = args.out_of_fold, {}
    for entry in entries:
        name, sep, path = entry.partition("=")
        full = name if name.startswith(f"{OURS}-") else f"{OURS}-{name}"
        if not sep or not (Path(path) / "folds.json").is_file():
            parser.error(f"--out-of-fold takes NAME=DIR with DIR/folds.json, not {entry!r}")
        if full in systems or full in args.variants:
            parser.error(f"--out-of-fold {name!r}: that system name is taken")
        args.out_of_fold[full] = Path(path)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    args.systems += [name for name in args.variants if name not in args.systems]
    args.systems += [name for name in args.out_of_fold if name not in args.systems]
    args.datasets = [s.strip() for s in (args.datasets or ",".join(datasets)).split(",")]
    args.datasets = [s for s in args.datasets if s]
    if unknown := sorted(
        set(args.systems) - set(systems) - set(args.variants) - set(args.out_of_fold)
    ):
        parser.error(f"unknown systems {unknown}; choose from {', '.join(systems)}")
    if unknown := sorted(set(args.datasets) - set(datasets)):
        parser.error(f"unknown datasets {unknown}; choose from {', '.join(datasets)}")
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
            systems[name] = build_system(name, args.variants, args.out_of_fold)
        except Exception as exc:  # one system that cannot be built costs only its rows
            skipped[name] = f"{type(exc).__name__}: {exc}"
            print(f"skipping {name}: {skipped[name]}", file=sys.stderr)
    results: list[Result] = []
    published: list[tuple[str, str, Summary, Summary]] = []
    sizes: dict[str, int] = {}
    lost: dict[str, dict[str, dict[str, dict[str, LostContent]]]] = {}
    differences: dict[str, dict[str, dict[str, Difference]]] = {}
    for dataset in args.datasets:
        pages = load_dataset(dataset, args.limit, args.page_sets)
        sizes[dataset] = len(pages)
        found, outputs, scores = run_dataset(
            dataset, pages, systems, args.warmup_pages, args.passes
        )
        results += found
        sites = page_sites(pages)
        for label, by_system in scores.items():
            if table := compare_with_peers(by_system):
                lost[label] = table
                differences[label] = differences_from_peers(by_system, sites)
        if args.save_outputs:
            save_outputs(args.out / "outputs" / dataset, outputs)
        if dataset == "cleaneval-test":
            published = score_published(pages, outputs, DATA_DIR)

    print(f"Scorers: {'; '.join(SCORER_NAMES.values())}. {affinity}.\n")
    for dataset in dict.fromkeys(r.dataset for r in results):
        pages = results[[r.dataset for r in results].index(dataset)].summary.pages
        note = f" ({TUNED_ON[dataset]})" if dataset in TUNED_ON else ""
        print(f"### {dataset}, {pages} pages{note}\n\n{format_results(results, dataset)}\n")
        first = next(r for r in results if r.dataset == dataset)
        for kind, summary in first.by_type.items():
            print(f"#### {dataset}: {kind}, {summary.pages} pages\n")
            print(format_results(results, dataset, kind) + "\n")
        if dataset in lost:
            print(
                f"#### {dataset}: lost main content, stream-cleaner against each peer (pages "
                f"with >= {LOST_MIN_GOLD_WORDS} gold words in brackets; lost / reverse: pages "
                f"stream-cleaner loses and the peer keeps / the peer loses and stream-cleaner "
                f"keeps)\n\n{format_lost(lost[dataset])}\n"
            )
            print(
                f"#### {dataset}: stream-cleaner's macro word-alignment F1 minus each peer's "
                f"(interval from a bootstrap over the pages' sites)\n\n"
                f"{format_differences(differences[dataset])}\n"
            )
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
        "results": [
            {
                **asdict(r),
                "summary": r.summary.to_dict(),
                "by_type": {kind: s.to_dict() for kind, s in r.by_type.items()},
            }
            for r in results
        ],
        "lost_main_content_rule": {
            "min_gold_words": LOST_MIN_GOLD_WORDS,
            "max_recall_lost": LOST_MAX_RECALL,
            "min_recall_kept": KEPT_MIN_RECALL,
        },
        "lost_main_content": {
            label: {
                ours: {
                    peer: {key: cell.to_dict() for key, cell in cells.items()}
                    for peer, cells in against.items()
                }
                for ours, against in table.items()
            }
            for label, table in lost.items()
        },
        "differences": {
            label: {
                ours: {peer: d.to_dict() for peer, d in against.items()}
                for ours, against in table.items()
            }
            for label, table in differences.items()
        },
        "published": [
            {"outputs": f, "peer": p, "published": t.to_dict(), "this_run": m.to_dict()}
            for f, p, t, m in published
        ],
        "variants": args.variants,
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
