"""``clean`` (every page of files, trees, WARC, JSON Lines or stdin) and ``demo``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..settings import CleanerSettings
from ..sites import SITE_KEYS, SiteSettings, SiteTemplates
from .options import (
    SAMPLES_DIR,
    CommandParser,
    add_cleaner_options,
    cleaner_settings,
    load_models,
    skipped_records,
)
from .status import exit_status

if TYPE_CHECKING:
    from ..document import CleanedDocument
    from ..io import Source


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "clean",
        help="clean pages from files, directories, WARC, JSON Lines or stdin",
        description="Run the full pipeline over every page found in PATHs (HTML files, "
        "directory trees, WARC/WARC.gz, JSON Lines, or - for stdin). Every input page gives "
        "one output record; pages that cannot be cleaned carry an error.",
        add_options=_clean_options,
    ).set_defaults(handler=_cmd_clean)
    add_command(
        "demo",
        help="clean the bundled sample pages and show what was kept",
        description="Clean the sample pages shipped with the package (or PATHs) and print a "
        "summary and one cleaned page.",
        add_options=_demo_options,
    ).set_defaults(handler=_cmd_demo)


def _clean_options(p: CommandParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument(
        "-f",
        "--format",
        choices=("jsonl", "text", "warc", "cleaneval"),
        default="jsonl",
        help="jsonl: one JSON record per page (default); text: a mirrored tree of .txt files "
        "(needs -o DIR); warc: WARC conversion records; cleaneval: CleanEval's format, kept "
        "blocks marked <p>, <h> or <l> (a tree of .txt files with -o DIR, else stdout)",
    )
    p.add_argument("-o", "--output", help="output file or directory (default: stdout)")
    p.add_argument(
        "--no-sentences", action="store_true", help="leave the per-sentence list out of JSON"
    )
    add_cleaner_options(p)
    p.add_argument(
        "-j", "--jobs", type=int, default=1, help="worker processes (default %(default)s)"
    )
    p.add_argument(
        "--site-aware",
        action="store_true",
        help="drop blocks that repeat across the pages of one site (navigation, footers): a "
        "first pass learns every site's template from all its pages, a second cleans, so the "
        "result does not depend on file order (not with stdin)",
    )
    p.add_argument(
        "--site-key",
        choices=SITE_KEYS,
        default="host",
        help="what makes a site: the URL's host (default) or its registered domain",
    )
    p.add_argument(
        "--site-min-share",
        type=float,
        default=SiteSettings().min_share,
        help="a block on at least this share of its site's pages is template "
        f"(default {SiteSettings().min_share:g})",
    )
    p.add_argument(
        "--site-min-pages",
        type=int,
        default=SiteSettings().min_pages,
        help=f"sites with fewer pages are left alone (default {SiteSettings().min_pages})",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar, with a total and an ETA when the inputs are files and "
        "directory trees (default: when stderr is a terminal)",
    )


def _demo_options(p: CommandParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH")
    add_cleaner_options(p)


def _cmd_clean(args: argparse.Namespace) -> int:
    from ..io import (
        CleanEvalWriter,
        JsonlWriter,
        ReadStats,
        TextTreeWriter,
        WarcWriter,
        count_documents,
        iter_documents,
    )

    settings = cleaner_settings(args)
    if args.format == "text" and not args.output:
        raise ValueError("--format text writes a directory tree: give it with -o DIR")
    load_models(settings)  # fail now, before reading any input
    sites = None
    if args.site_aware:
        if "-" in args.paths:
            raise ValueError("--site-aware reads its inputs twice: give files, not stdin (-)")
        sites = _learn_sites(args, settings)
    read = ReadStats()
    exclude = [args.output] if args.output else []
    sources = iter_documents(args.paths, stdin=sys.stdin.buffer, stats=read, exclude=exclude)
    out_stream: Any = None
    if args.format == "jsonl":
        out_stream = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115
        writer: Any = JsonlWriter(out_stream, sentences=not args.no_sentences)
    elif args.format == "text":
        writer = TextTreeWriter(args.output)
    elif args.format == "cleaneval":
        if args.output:
            writer = TextTreeWriter(args.output, cleaneval=True)
        else:
            writer = CleanEvalWriter(sys.stdout)
    else:
        writer = WarcWriter(args.output if args.output else sys.stdout.buffer)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    total = count_documents(args.paths, exclude=exclude) if show else None
    counts: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    started = time.perf_counter()
    with writer:
        cleaned = _clean_sources(sources, settings, args.jobs, sites)
        for source, doc in _progress(cleaned, show, total=total):
            writer.write(source, doc)
            counts["documents"] += 1
            if doc.error is not None:
                errors[doc.error] += 1
            counts["sentences"] += len(doc.sentences)
            counts["kept"] += doc.n_kept
    if out_stream is not None and out_stream is not sys.stdout.buffer:
        out_stream.close()
    elapsed = time.perf_counter() - started
    print(
        f"stream-cleaner clean: {counts['documents']} documents ({_errors(errors)}), "
        f"{counts['kept']}/{counts['sentences']} sentences kept, "
        f"{counts['documents'] / elapsed if elapsed else 0:.1f} documents/s"
        f"{skipped_records(read)}",
        file=sys.stderr,
    )
    return exit_status(failed=errors.total(), total=counts["documents"])


def _errors(errors: Counter[str]) -> str:
    """The summary's count of the documents with an error, by error."""
    if not errors:
        return "0 with an error"
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(errors.items()))
    return f"{errors.total()} with an error: {reasons}"


def _learn_sites(args: argparse.Namespace, settings: CleanerSettings) -> SiteTemplates:
    """The first pass of ``clean --site-aware``: every page of every site, in a window that
    holds them all, so that the second pass sees the same statistics whatever the order."""
    from ..io import iter_documents
    from ..pipeline import observe_site

    sites = SiteTemplates(
        SiteSettings(
            site_key=args.site_key,
            min_share=args.site_min_share,
            min_pages=args.site_min_pages,
            window_pages=1_000_000,
            max_sites=1_000_000,
        )
    )
    for source in iter_documents(args.paths):
        observe_site(source.doc, sites, settings=settings)
    print(f"stream-cleaner clean: learnt the templates of {len(sites)} sites", file=sys.stderr)
    return sites


def _progress(items: Iterator[Any], show: bool, *, total: int | None = None) -> Iterator[Any]:
    """``items``, with a progress bar on stderr when ``show``: done of ``total`` with an ETA
    when the inputs could be counted (`count_documents`), else a count and a rate."""
    return _progress_bar(items, total) if show else items


def _progress_bar(items: Iterator[Any], total: int | None) -> Iterator[Any]:
    from tqdm import tqdm

    columns, rows = _terminal_size(sys.stderr)
    # tqdm's -1s: a bar as wide as the terminal wraps on some
    with tqdm(total=total, unit="doc", file=sys.stderr, ncols=columns - 1, nrows=rows - 1) as bar:
        for item in items:
            yield item
            if bar.total is not None and bar.n >= bar.total:
                bar.total = None  # more than counted: a WARC known by its bytes, not its name
            bar.update()


def _terminal_size(stream: Any) -> tuple[int, int]:
    """The columns and rows of the terminal ``stream`` writes to; COLUMNS (else 80) and 24
    where it tells none. A pseudo-terminal that reports 0 x 0 (a container's before it is
    sized, some CI runners) made tqdm, which measures it itself, take 0 rows for no room and
    print nothing at all."""
    try:
        size = os.get_terminal_size(stream.fileno())
        columns, rows = size.columns, size.lines
    except (AttributeError, OSError, ValueError):  # not a terminal, or no file at all
        columns = rows = 0
    if columns <= 0:
        given = os.environ.get("COLUMNS", "")
        columns = int(given) if given.isdigit() and int(given) > 0 else 80
    return columns, rows if rows > 0 else 24


def _clean_sources(
    sources: Iterator[Source],
    settings: CleanerSettings,
    jobs: int,
    sites: SiteTemplates | None = None,
) -> Iterator[tuple[Source, CleanedDocument]]:
    """Clean in this process, or in ``jobs`` processes that each hold the model once."""
    from ..pipeline import clean_document

    if jobs <= 1:
        for source in sources:
            yield (
                source,
                clean_document(source.doc, settings=settings, sites=sites, learn_site=False),
            )
        return
    from ..parallel import clean_in_processes

    yield from clean_in_processes(sources, settings, jobs, sites)


def _cmd_demo(args: argparse.Namespace) -> int:
    from ..io import iter_documents
    from ..pipeline import clean_document

    settings = cleaner_settings(args)
    paths = args.paths or [str(SAMPLES_DIR)]
    rows = []
    last = None
    for source in iter_documents(paths):
        doc = clean_document(source.doc, settings=settings)
        rows.append((Path(source.origin).name, doc))
        if doc.n_kept and (last is None or len(doc.sentences) > len(last.sentences)):
            last = doc
    print(f"{'page':<28} {'kept':>9} {'dropped by reason':<40} {'ppl':>7} {'ms':>6}")
    for name, doc in rows:
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(doc.dropped.items())) or "-"
        if doc.error:
            reasons = f"ERROR {doc.error}"
        ppl = f"{doc.perplexity:.0f}" if doc.perplexity else "-"
        print(
            f"{name[:28]:<28} {doc.n_kept:>4}/{len(doc.sentences):<4} {reasons[:40]:<40} "
            f"{ppl:>7} {doc.seconds['total'] * 1000:>6.1f}"
        )
    if last is not None:
        how = (
            f"max perplexity {settings.max_sentence_perplexity:g}"
            if settings.mode == "perplexity"
            else f"{settings.mode} mode"
        )
        print(f"\n--- cleaned text of {last.id} ({how}) ---")
        print(last.text[:3000])
    return exit_status(failed=sum(1 for _, doc in rows if doc.error), total=len(rows))
