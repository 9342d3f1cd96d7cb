"""``perplexity`` and ``strip-tags``: a model's scores, and a page's text unfiltered."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence

from ..settings import PARSERS, CleanerSettings
from .options import CommandParser, add_model_option
from .status import exit_status


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "perplexity",
        help="print the perplexity of sentences",
        description="Print the perplexity of each sentence given (or of each line of stdin).",
        add_options=_perplexity_options,
    ).set_defaults(handler=_cmd_perplexity)
    add_command(
        "strip-tags",
        help="print the text of HTML pages, no filtering",
        description="Print the text of each page, one block per line, without any filtering.",
        add_options=_strip_tags_options,
    ).set_defaults(handler=_cmd_strip_tags)


def _perplexity_options(p: CommandParser) -> None:
    p.add_argument("sentences", nargs="*", metavar="SENTENCE", help="sentences; none or - = stdin")
    add_model_option(p)


def _strip_tags_options(p: CommandParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="HTML files, directories, WARC, -")
    p.add_argument("--parser", choices=PARSERS, default=CleanerSettings().parser)


def _cmd_perplexity(args: argparse.Namespace) -> int:
    from ..lm import load_model

    model = load_model(args.model)
    sentences: Sequence[str] | Iterator[str] = args.sentences
    if not sentences or list(sentences) == ["-"]:
        # bytes that are not UTF-8 become U+FFFD: one bad line must not end the run
        sentences = (line.decode("utf-8", "replace").rstrip("\r\n") for line in sys.stdin.buffer)
    for sentence in sentences:
        # (arguments reach Python with such bytes as lone surrogates)
        text = sentence.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        ppl = model.compute_sentence(text)
        print("nan" if ppl is None else f"{ppl:.2f}")
    return 0


def _cmd_strip_tags(args: argparse.Namespace) -> int:
    from ..decode import BinaryContent, decode_body
    from ..io import iter_documents
    from ..parse import extract_text

    failed = total = 0
    for source in iter_documents(args.paths, stdin=sys.stdin.buffer):
        doc = source.doc
        try:
            if doc.error:
                raise ValueError(doc.error)
            body = doc.body
            html = (
                body
                if isinstance(body, str)
                else decode_body(body, content_type=doc.content_type, headers=doc.headers).text
            )
            sys.stdout.write(extract_text(html, parser=args.parser) + "\n")
        except (BinaryContent, ValueError) as exc:
            failed += 1
            print(f"{source.origin}: skipped: {exc}", file=sys.stderr)
        total += 1
    return exit_status(failed=failed, total=total)
