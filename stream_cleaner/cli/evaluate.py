"""``evaluate``: stream-cleaner, or a folder of another system's outputs, against gold text."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..evaluate import LAYOUTS, SPLITS
from ..settings import CleanerSettings
from .options import CommandParser, add_cleaner_options, cleaner_settings, load_models

if TYPE_CHECKING:
    from ..evaluate import Difference, LostContent, Page, PageScore


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "evaluate",
        help="score stream-cleaner (or a folder of outputs) against gold text",
        description="Score against hand-cleaned gold text, with three scorers named in the "
        "output: CleanEval word alignment (precision, recall, F1; per-page average and pooled), "
        "word Levenshtein similarity 1-d/max(|output|,|gold|) and bag-of-tokens F1; with a "
        "checks.json beside them, also trafilatura's snippet checks (pooled precision, recall, "
        "F1) and every figure per page type. PATH holds html/NAME.html and gold/NAME.txt: a "
        "CleanEval split (pages wrapped in <text id=..>, gold with a URL: line and <p>/<h>/<l> "
        "markers), Dragnet, the 2026 pages, or any benchmark in that shape. By default "
        "stream-cleaner cleans the pages; --outputs scores a folder of NAME.txt texts another "
        "system extracted instead.",
        add_options=_evaluate_options,
    ).set_defaults(handler=_cmd_evaluate)


def _evaluate_options(p: CommandParser) -> None:
    p.add_argument("path", metavar="PATH", help="folder with html/ and gold/")
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="auto",
        help="cleaneval: unwrap <text id=..> pages; generic: pages as they are; auto "
        "(default): cleaneval when the first page is wrapped and there is no checks.json",
    )
    p.add_argument(
        "--split",
        choices=SPLITS,
        default="all",
        help="pages of the fixed train/test split by a hash of the file name, as used for "
        "Dragnet (default: all)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="only the first N pages")
    p.add_argument(
        "--gold-comments",
        action="store_true",
        help="count the readers' comments after a Dragnet gold file's '!@#$%%^&*() COMMENTS' "
        "line as gold too (default: the article alone, Dragnet's main-content task)",
    )
    p.add_argument("--outputs", metavar="DIR", help="score the NAME.txt files of DIR instead")
    p.add_argument(
        "--missing",
        choices=("empty", "skip"),
        default="empty",
        help="a page with no file in --outputs counts as an empty output (default) or is left out",
    )
    p.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="DIR",
        help="count the pages whose main content this system loses and the NAME.txt outputs "
        "of DIR keep (of gold with at least 20 words: word recall < 0.3 here, > 0.7 there), and "
        "the reverse, and give the macro F1 difference with a 95%% interval over the pages' "
        "sites; repeatable (e.g. bench/quality.py --save-outputs's trafilatura folder)",
    )
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--per-page", metavar="PATH", help="also write per-page scores (TSV)")
    add_cleaner_options(p)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .. import evaluate

    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")
    pages = evaluate.read_pages(
        args.path,
        layout=args.layout,
        split=args.split,
        limit=args.limit,
        gold_comments=args.gold_comments,
    )
    with_gold = [page for page in pages if page.gold is not None]
    if not with_gold:
        raise ValueError(f"no page of {args.path} has a gold file")
    if args.outputs:
        system = f"outputs in {args.outputs}"
        outputs = evaluate.read_outputs(args.outputs, [page.name for page in with_gold])
        speed = ""
    else:
        settings = cleaner_settings(args)
        load_models(settings)  # fail now, before any page
        system = f"stream-cleaner {_describe_settings(settings)}"
        started = time.perf_counter()
        outputs = evaluate.clean_pages(with_gold, settings)
        elapsed = time.perf_counter() - started
        speed = f"; cleaned in {elapsed:.1f} s, {len(with_gold) / elapsed:.1f} pages/s"
    summary, scores = evaluate.score_outputs(with_gold, outputs, missing=args.missing)
    by_type = evaluate.summarize_by_type(scores)
    against = {
        folder: _compare_against(with_gold, scores, folder, missing=args.missing)
        for folder in args.against
    }
    missing = ""
    if summary.missing:
        how = "scored as empty" if args.missing == "empty" else "left out"
        missing = f"; {summary.missing} pages without output {how}"
    layout = evaluate.detect_layout(Path(args.path)) if args.layout == "auto" else args.layout
    print(
        f"{args.path} ({layout} layout, split {args.split}): {summary.pages} pages scored, "
        f"{len(pages) - len(with_gold)} without gold skipped{missing}\n"
        f"system: {system}{speed}\n"
    )
    print(evaluate.format_summary(summary))
    for kind, group in by_type.items():
        print(f"\n### {kind}, {group.pages} pages\n\n{evaluate.format_summary(group)}")
    for folder, (counts, d) in against.items():
        print(
            f"\nagainst {folder}: macro word-alignment F1 here minus there {d.mean:+.4f} (95 % "
            f"interval {d.low:+.4f} to {d.high:+.4f}, {d.sites} sites resampled; ahead in "
            f"{d.ahead:.0%} of the draws)\n"
            f"lost main content against {folder}: {len(counts.lost)} pages lost here and "
            f"kept there, {len(counts.reverse)} lost there and kept here (of {counts.pages} "
            f"pages with >= {evaluate.LOST_MIN_GOLD_WORDS} gold words)"
        )
        for label, names in (("lost here", counts.lost), ("lost there", counts.reverse)):
            if names:
                print(f"  {label}: {' '.join(names)}")
    if args.json:
        import json

        figures = {"path": args.path, "system": system, "split": args.split}
        figures |= summary.to_dict()
        if by_type:
            figures["by_type"] = {kind: group.to_dict() for kind, group in by_type.items()}
        if against:
            figures["lost_main_content"] = {k: v.to_dict() for k, (v, _) in against.items()}
            figures["differences"] = {k: d.to_dict() for k, (_, d) in against.items()}
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    if args.per_page:
        checked = any(s.snippets is not None for s in scores)
        with open(args.per_page, "w", encoding="utf-8") as out:
            columns = "page\tprecision\trecall\tf1\tlevenshtein\tbag_f1\tgold_words"
            out.write(columns + ("\ttype\ttp\tfn\tfp\ttn\n" if checked else "\n"))
            for s in scores:
                a = s.alignment
                out.write(
                    f"{s.name}\t{a.precision:.4f}\t{a.recall:.4f}\t{a.f1:.4f}\t"
                    f"{s.levenshtein:.4f}\t{s.bag_f1:.4f}\t{a.gold_words}"
                )
                if checked:
                    c = s.snippets or evaluate.SnippetCounts()
                    out.write(
                        f"\t{s.page_type}\t{c.true_positives}\t{c.false_negatives}\t"
                        f"{c.false_positives}\t{c.true_negatives}"
                    )
                out.write("\n")
    return 0


def _compare_against(
    pages: list[Page], scores: list[PageScore], folder: str, *, missing: str
) -> tuple[LostContent, Difference]:
    """The pages lost against another system's outputs in ``folder``, and the reverse; the
    macro F1 difference with its interval over the pages' sites."""
    from .. import evaluate

    theirs = evaluate.read_outputs(folder, [page.name for page in pages])
    _, their_scores = evaluate.score_outputs(pages, theirs, missing=missing)
    difference = evaluate.paired_difference(scores, their_scores, evaluate.page_sites(pages))
    return evaluate.compare_lost(scores, their_scores), difference


def _describe_settings(settings: CleanerSettings) -> str:
    """The settings that change what is kept, for a report's heading."""
    parts = [f"max perplexity {settings.max_sentence_perplexity:g}", f"parser {settings.parser}"]
    mode = getattr(settings, "mode", None)  # the block labeller's modes, once they exist
    if mode is not None:
        parts.insert(0, f"mode {mode}")
    if settings.model_path:
        parts.append(f"model {settings.model_path}")
    if settings.models:
        parts.append(f"models {settings.models}")
    return "(" + ", ".join(parts) + ")"
