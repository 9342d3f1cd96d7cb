"""Single-core throughput of stream-cleaner and its peers on the CleanEval pages (or the 2026
pages, ``--pages modern2026``).

One process, one run: the process pins itself to CPU 0, loads the pages, then for each system
runs a warm-up pass over a few pages and times one full pass over all of them with
``time.perf_counter()``. stream-cleaner gets each page's raw bytes and decodes them itself, inside
the timing; the peers get text decoded beforehand by ``data.decode_for_peers``, outside it. MB/s
counts the raw input bytes (10**6 bytes a MB) for every system alike.

Run it in the bench venv (``bash bench/setup-env.sh``)::

    .cache/bench-venv/bin/python bench/throughput.py [--limit N] [--systems a,b] [--json PATH]
    .cache/bench-venv/bin/python bench/throughput.py --pages modern2026 --passes 3

With ``--passes N`` the systems take turns for N timed passes each (every system's first
pass, then every system's second...) and each system's speed is the median of its passes:
a slow minute of the host then falls on every system, and the ratios to the baseline hold.
The host's speed also swings within a minute (Resiliparse's passes over CleanEval test
measured 359 to 767 pages/s in one run of five), so with ``--interleave K`` each pass takes
turns every K pages instead: every system cleans pages 1..K, then every system (in the
reverse order) K+1..2K, and so on, each turn timed alone and a system's pass the sum of its
turns.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import peers
from data import CLEANEVAL_SPLITS, Page, decode_for_peers, load_cleaneval, load_page_set

BASELINE = "resiliparse"
# name -> (parser, mode): the paper's filter on both parsers (issue 2's core), and the block
# labeller's two modes on the default parser
STREAM_CLEANER_VARIANTS = {
    "stream-cleaner-lexbor": ("lexbor", "perplexity"),
    "stream-cleaner-html5lib": ("html5lib", "perplexity"),
    "stream-cleaner-corpus": ("lexbor", "corpus"),
    "stream-cleaner-article": ("lexbor", "article"),
    "stream-cleaner-auto": ("lexbor", "auto"),
}
SYSTEMS = (*STREAM_CLEANER_VARIANTS, *peers.PEERS)
WARMUP_PAGES_DEFAULT = 5
BENCH_CPU = 0


@dataclass(frozen=True, slots=True)
class PassResult:
    """What one pass over the pages produced, apart from its time.

    Attributes:
        failures: pages the system failed on (a peer's exception, a stream-cleaner error).
        empty: pages for which the system returned no text, failures included.
        failures_by_reason: failures by stream-cleaner error reason, or under the peer's name.
        texts: the text the system returned for each input, in order (quality.py scores it).
        stage_seconds: stream-cleaner only: seconds per pipeline stage summed over the pages
            (``CleanedDocument.seconds``, ``total`` included).
    """

    failures: int
    empty: int
    failures_by_reason: dict[str, int]
    texts: tuple[str, ...] = ()
    stage_seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class System:
    """One system under test, split so that only its work on the pages is timed.

    Attributes:
        name: the name used by ``--systems`` and in the table.
        version: the installed version of the system's distribution.
        prepare: turns pages into the system's inputs (records or decoded text); not timed.
        run: processes every input once; this is what is timed.
    """

    name: str
    version: str | None
    prepare: Callable[[Sequence[Page]], list[Any]]
    run: Callable[[list[Any]], PassResult]


@dataclass(frozen=True, slots=True)
class Row:
    """One system's figures over its timed pass."""

    system: str
    version: str | None
    pages: int
    input_bytes: int
    seconds: float
    failures: int
    empty: int
    failures_by_reason: dict[str, int]
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def pages_per_second(self) -> float:
        """Pages per second of the timed pass."""
        return self.pages / self.seconds

    @property
    def megabytes_per_second(self) -> float:
        """Raw input megabytes (10**6 bytes) per second of the timed pass."""
        return self.input_bytes / 1e6 / self.seconds


def build_stream_cleaner(name: str, settings: Any = None) -> System:
    """Build stream-cleaner with the parser backend that ``name`` stands for, or ``settings``.

    The language model is loaded here; its lazy parts load in the warm-up pass, untimed.

    Args:
        name: a key of :data:`STREAM_CLEANER_VARIANTS`, or any name when ``settings`` is given.
        settings: the ``CleanerSettings`` to run with (quality.py: one per mode).

    Returns:
        The system: ``clean_document`` on each page's raw bytes, the shared default model.

    Raises:
        ImportError: when stream-cleaner cannot be imported.
        ValueError: when stream-cleaner does not know the parser backend.
    """
    # Imported here, not at the top: a core that does not import costs only its own rows.
    from stream_cleaner import CleanerSettings, RawDocument, clean_document
    from stream_cleaner.lm import load_model

    # STREAM_CLEANER_* variables apply (e.g. STREAM_CLEANER_MODEL_PATH to time another model)
    if settings is None:
        parser, mode = STREAM_CLEANER_VARIANTS[name]
        settings = CleanerSettings.from_env().with_options(parser=parser, mode=mode)
    load_model(settings.model_path)

    def prepare(pages: Sequence[Page]) -> list[Any]:
        return [RawDocument(body=p.raw, id=p.name, url=p.url) for p in pages]

    def run(raws: list[Any]) -> PassResult:
        reasons: Counter[str] = Counter()
        stages: Counter[str] = Counter()
        empty = 0
        texts = []
        for raw in raws:
            doc = clean_document(raw, settings=settings)
            if doc.error is not None:
                reasons[doc.error] += 1
            if not doc.text:
                empty += 1
            texts.append(doc.text)
            stages.update(doc.seconds)
        return PassResult(reasons.total(), empty, dict(reasons), tuple(texts), dict(stages))

    return System(name, _installed_version("stream-cleaner"), prepare, run)


def build_peer(name: str) -> System:
    """Build one peer of ``peers.PEERS``.

    Args:
        name: the peer's key in ``peers.PEERS``.

    Returns:
        The system: the peer's adapter on each page's text from ``decode_for_peers``.

    Raises:
        ImportError: when the peer is not installed.
    """
    reason = peers.check_peer_import(name)
    if reason is not None:
        raise ImportError(reason)
    extract = peers.PEERS[name]

    def prepare(pages: Sequence[Page]) -> list[Any]:
        return [decode_for_peers(p.raw) for p in pages]

    def run(texts: list[Any]) -> PassResult:
        failed_before = peers.FAILURES[name]
        empty = 0
        outputs = []
        for text in texts:
            output = extract(text)
            if not output:
                empty += 1
            outputs.append(output)
        failures = peers.FAILURES[name] - failed_before
        return PassResult(failures, empty, {name: failures} if failures else {}, tuple(outputs))

    return System(name, peers.peer_version(name), prepare, run)


def warm_up(system: System, pages: Sequence[Page]) -> None:
    """Run an untimed pass, so that lazy loading (imports, the language model) is not timed.

    Args:
        system: the system under test.
        pages: the pages of the warm-up pass.
    """
    system.run(system.prepare(pages))


def measure(system: System, pages: Sequence[Page]) -> Row:
    """Time one pass of a warmed-up system over all the pages.

    Args:
        system: the system under test.
        pages: the pages of the timed pass.

    Returns:
        The system's figures over the timed pass.
    """
    return measure_pass(system, pages)[0]


def measure_pass(system: System, pages: Sequence[Page]) -> tuple[Row, PassResult]:
    """Time one pass of a warmed-up system over all the pages, keeping what it returned.

    Args:
        system: the system under test.
        pages: the pages of the timed pass.

    Returns:
        The system's figures over the timed pass, and the pass's result (its texts too).
    """
    inputs = system.prepare(pages)
    gc.collect()
    start = time.perf_counter()
    result = system.run(inputs)
    seconds = time.perf_counter() - start
    return _row(system, pages, seconds, result), result


def _row(system: System, pages: Sequence[Page], seconds: float, result: PassResult) -> Row:
    """A system's figures over a pass of ``pages`` that took ``seconds``."""
    return Row(
        system=system.name,
        version=system.version,
        pages=len(pages),
        input_bytes=sum(len(p.raw) for p in pages),
        seconds=seconds,
        failures=result.failures,
        empty=result.empty,
        failures_by_reason=result.failures_by_reason,
        stage_seconds=result.stage_seconds,
    )


def measure_interleaved(
    systems: dict[str, System], pages: Sequence[Page], chunk: int
) -> dict[str, Row]:
    """One pass of every system over all the pages, the systems taking turns every ``chunk``
    pages (the order reversed every turn), each turn timed alone.

    Returns:
        Each system's figures over its pass: the sums over its turns.
    """
    inputs = {name: system.prepare(pages) for name, system in systems.items()}
    seconds = dict.fromkeys(systems, 0.0)
    results: dict[str, list[PassResult]] = {name: [] for name in systems}
    gc.collect()
    order = list(systems)
    for start in range(0, len(pages), chunk):
        for name in order:
            part = inputs[name][start : start + chunk]
            began = time.perf_counter()
            results[name].append(systems[name].run(part))
            seconds[name] += time.perf_counter() - began
        order.reverse()
    rows = {}
    for name, system in systems.items():
        reasons: Counter[str] = Counter()
        stages: Counter[str] = Counter()
        for result in results[name]:
            reasons.update(result.failures_by_reason)
            stages.update(result.stage_seconds)
        turns = PassResult(
            sum(r.failures for r in results[name]), sum(r.empty for r in results[name]),
            dict(reasons), stage_seconds=dict(stages),
        )  # fmt: skip
        rows[name] = _row(system, pages, seconds[name], turns)
    return rows


def format_table(rows: Sequence[Row]) -> str:
    """Render the rows as a markdown table, with each system's speed relative to the baseline.

    Args:
        rows: the measured systems, in the order to print.

    Returns:
        The table, one line per system after the header.
    """
    baseline = next((r.pages_per_second for r in rows if r.system == BASELINE), None)
    lines = [
        f"| system | pages | seconds | pages/s | MB/s | failures | empty | vs {BASELINE} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = f"{r.pages_per_second / baseline:.2f}x" if baseline else "n/a"
        lines.append(
            f"| {r.system} | {r.pages} | {r.seconds:.2f} | {r.pages_per_second:.1f} "
            f"| {r.megabytes_per_second:.2f} | {r.failures} | {r.empty} | {ratio} |"
        )
    return "\n".join(lines)


def format_stages(rows: Sequence[Row]) -> str:
    """Milliseconds per page in each pipeline stage, one line per stream-cleaner row (the
    stages a mode skips are blank; ``total`` is the sum the pipeline itself measured)."""
    stages = list(dict.fromkeys(stage for r in rows for stage in r.stage_seconds))
    if not stages:
        return ""
    lines = [
        "| system | " + " | ".join(stages) + " |",
        "|---|" + "---:|" * len(stages),
    ]
    for r in rows:
        if r.stage_seconds:
            cells = [
                f"{1000 * r.stage_seconds[s] / r.pages:.3f}" if s in r.stage_seconds else ""
                for s in stages
            ]
            lines.append(f"| {r.system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pin_to_one_core(cpu: int = BENCH_CPU) -> str:
    """Pin this process to one CPU so every system gets the same single core.

    Args:
        cpu: the CPU to run on (default :data:`BENCH_CPU`).

    Returns:
        A note on the CPUs the process may run on afterwards.
    """
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity on this platform)"
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {sorted(os.sched_getaffinity(0))}"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The options, ``systems`` as a list of names.
    """
    parser = argparse.ArgumentParser(
        description="Single-core throughput of stream-cleaner and its peers on CleanEval.",
    )
    parser.add_argument("--split", choices=CLEANEVAL_SPLITS, default="test")
    parser.add_argument(
        "--pages",
        metavar="SET",
        help="time a page set in the generic layout instead of CleanEval (modern2026, or a "
        "folder under .cache/data or absolute)",
    )
    parser.add_argument(
        "--passes",
        type=int,
        default=1,
        metavar="N",
        help="timed passes per system, the systems taking turns; the median counts (1)",
    )
    parser.add_argument(
        "--interleave",
        type=int,
        metavar="K",
        help="within each pass, the systems take turns every K pages (each turn timed alone)",
    )
    parser.add_argument("--limit", type=int, metavar="N", help="time only the first N pages")
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated systems to run (default: all of {', '.join(SYSTEMS)})",
    )
    parser.add_argument(
        "--warmup-pages",
        type=int,
        default=WARMUP_PAGES_DEFAULT,
        metavar="N",
        help="pages of the untimed warm-up pass per system (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument(
        "--stages",
        action="store_true",
        help="also print stream-cleaner's milliseconds per page in each pipeline stage",
    )
    parser.add_argument(
        "--cpu",
        type=int,
        default=BENCH_CPU,
        metavar="N",
        help="the CPU the process pins itself to (default: %(default)s)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="let the systems log (by default their warnings would flood the terminal)",
    )
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(args.systems) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if args.warmup_pages < 1:
        parser.error("--warmup-pages must be at least 1: the warm-up loads lazy parts")
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    if args.interleave is not None and args.interleave < 1:
        parser.error("--interleave must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The exit status: 0, or 1 when no system could run.
    """
    args = parse_args(argv)
    if not args.verbose:
        # Peers log a warning or a traceback per odd page (boilerpy3, readability); writing
        # those to the terminal would be timed too, and would bury the table.
        logging.disable(logging.ERROR)
    affinity = pin_to_one_core(args.cpu)
    if args.pages:
        pages = load_page_set(args.pages, limit=args.limit)
        label = args.pages
    else:
        pages = load_cleaneval(args.split)[: args.limit]
        label = f"CleanEval {args.split}"
    input_bytes = sum(len(p.raw) for p in pages)
    print(
        f"{label}: {len(pages)} pages, {input_bytes / 1e6:.1f} MB; {affinity}; "
        f"Python {platform.python_version()}",
        file=sys.stderr,
    )

    systems: dict[str, System] = {}
    skipped: dict[str, str] = {}
    for name in args.systems:
        build = build_stream_cleaner if name in STREAM_CLEANER_VARIANTS else build_peer
        try:
            system = build(name)
            warm_up(system, pages[: args.warmup_pages])
        except Exception as exc:  # an import or set-up error of one system skips its row only
            skipped[name] = f"{type(exc).__name__}: {exc}"
            print(f"skipping {name}: {skipped[name]}", file=sys.stderr)
            continue
        systems[name] = system
    passes: dict[str, list[Row]] = {name: [] for name in systems}
    for turn in range(args.passes):
        if args.interleave:
            measured = measure_interleaved(systems, pages, args.interleave)
        else:
            measured = {name: measure(system, pages) for name, system in systems.items()}
        for name, row in measured.items():
            print(
                f"{name}: pass {turn + 1}/{args.passes}, {row.seconds:.2f} s, "
                f"{row.pages_per_second:.1f} pages/s",
                file=sys.stderr,
            )
            passes[name].append(row)
    # each system's median pass (by time)
    rows = [sorted(runs, key=lambda r: r.seconds)[len(runs) // 2] for runs in passes.values()]

    if rows:
        print(format_table(rows))
        if args.stages and any(r.stage_seconds for r in rows):
            print("\nms per page by stage:\n" + format_stages(rows))
        print(f"\nTotal timed: {sum(r.seconds for r in rows):.2f} s")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        report = {
            "split": args.split,
            "page_set": args.pages,
            "passes": args.passes,
            "interleave": args.interleave,
            "pages": len(pages),
            "input_bytes": input_bytes,
            "cpu": affinity,
            "python": platform.python_version(),
            "baseline": BASELINE,
            "systems": [
                {
                    **asdict(r),
                    "pages_per_second": r.pages_per_second,
                    "megabytes_per_second": r.megabytes_per_second,
                }
                for r in rows
            ],
            "skipped": skipped,
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if rows else 1


def _installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, ``None`` when it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
