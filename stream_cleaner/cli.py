"""The command line: ``stream-cleaner COMMAND ...``. Thin callers of the core, nothing more.

Exit codes (as trafilatura's, which exits 0, 1 when some inputs failed and 126 when more
than 99% did; 1 and 2 keep their usual meaning here):

- 0 (`EXIT_OK`): every input was read and cleaned;
- 1 (`EXIT_ERROR`): the run could not be done (missing model, output not writable, tool
  failure, broker not answering);
- 2 (`EXIT_USAGE`): bad usage (argparse);
- 3 (`EXIT_SOME_FAILED`): the run went through, but some inputs could not be read or cleaned:
  their records carry the error (``clean``), or they are listed on stderr (``strip-tags``,
  ``produce``);
- 4 (`EXIT_MOST_FAILED`): more than `MOST_FAILED_SHARE` (99%) of the inputs failed, a run of
  one input that failed too: most likely the wrong inputs or settings.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import __version__
from .evaluate import LAYOUTS, SPLITS
from .settings import (
    LABELLER_MODES,
    MODE_DEFAULT,
    MODES,
    MULTILINGUAL_LABELLERS,
    PARSERS,
    SENTENCE_FILTERS,
    CleanerSettings,
    format_models,
    parse_models,
)
from .sites import SITE_KEYS, SiteSettings, SiteTemplates

if TYPE_CHECKING:
    from .document import CleanedDocument
    from .evaluate import LostContent, Page, PageScore
    from .io import Source

log = logging.getLogger("stream_cleaner")
SAMPLES_DIR = Path(__file__).parent / "samples"

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_SOME_FAILED: Final = 3
EXIT_MOST_FAILED: Final = 4
MOST_FAILED_SHARE: Final = 0.99  # trafilatura's: above it, the run as a whole failed


def exit_status(*, failed: int, total: int) -> int:
    """The exit code of a command that read ``total`` inputs, ``failed`` of which could not be
    read or cleaned (see the module's docstring)."""
    if not failed:
        return EXIT_OK
    return EXIT_MOST_FAILED if failed > MOST_FAILED_SHARE * total else EXIT_SOME_FAILED


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``argv`` without the program name)."""
    return build_parser().parse_args(argv)


def _global_options(parser: argparse.ArgumentParser, *, default: Any) -> None:
    """The options every command takes, before its name or after it (``clean -v``)."""
    parser.add_argument("--version", action="version", version=f"stream-cleaner {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="log progress details"
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command."""
    parser = argparse.ArgumentParser(
        prog="stream-cleaner",
        description="Clean crawled web pages: strip tags, split sentences, score them with a "
        "KenLM language model, drop boilerplate.",
    )
    _global_options(parser, default=False)
    # given after the command, the subparser sets them; not given, it must leave the value
    # that the main parser set (or its default) alone: hence SUPPRESS
    after = argparse.ArgumentParser(add_help=False)
    _global_options(after, default=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command = functools.partial(commands.add_parser, parents=[after])

    p = add_command(
        "perplexity",
        help="print the perplexity of sentences",
        description="Print the perplexity of each sentence given (or of each line of stdin).",
    )
    p.add_argument("sentences", nargs="*", metavar="SENTENCE", help="sentences; none or - = stdin")
    _add_model_option(p)

    p = add_command(
        "strip-tags",
        help="print the text of HTML pages, no filtering",
        description="Print the text of each page, one block per line, without any filtering.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="HTML files, directories, WARC, -")
    p.add_argument("--parser", choices=PARSERS, default="lexbor")

    p = add_command(
        "clean",
        help="clean pages from files, directories, WARC, JSON Lines or stdin",
        description="Run the full pipeline over every page found in PATHs (HTML files, "
        "directory trees, WARC/WARC.gz, JSON Lines, or - for stdin). Every input page gives "
        "one output record; pages that cannot be cleaned carry an error.",
    )
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
    _add_cleaner_options(p)
    p.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
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

    p = add_command(
        "train-lm",
        help="train a KenLM model on a text corpus",
        description="Normalise a corpus with the cleaner's own normalisation, train a KenLM "
        "model with lmplz and write a binary (build_binary) plus a JSON sidecar. Any language "
        "works: give a corpus of that language, one paragraph or sentence per line (plain, "
        ".xz, .gz or .bz2; WikiExtractor <doc> lines are skipped).",
    )
    p.add_argument("corpora", nargs="+", metavar="CORPUS")
    p.add_argument("-o", "--output", required=True, help="the model file to write")
    p.add_argument("--order", type=int, choices=(2, 3, 4, 5), default=2)
    p.add_argument(
        "--prune",
        type=int,
        nargs="+",
        default=[],
        help="lmplz --prune thresholds per order, e.g. 0 1",
    )
    p.add_argument(
        "--max-vocab",
        type=int,
        metavar="N",
        help="keep only the N most frequent words; others score as <unk>",
    )
    p.add_argument(
        "--binary-type",
        choices=("trie", "probing"),
        default="trie",
        help="trie: compact, 8-bit quantised; probing: larger, faster to query",
    )
    p.add_argument("--id", dest="model_id", help="model id recorded in the sidecar")
    p.add_argument("--arpa", action="store_true", help="write ARPA text instead of a binary")
    p.add_argument("--memory", default="40%", help="lmplz sort memory (default 40%%)")

    p = add_command(
        "train-labeller",
        help="train the block labeller of a mode on pages with gold text",
        description="Cut and score every page of the given page sets as `clean` does, label "
        "each block content or boilerplate by aligning its words with the gold text, fit a "
        "gradient-boosted tree ensemble (needs the 'train' extra: lightgbm) and write it as "
        "JSON with a .meta.json sidecar of what it was trained on. A page set is a directory "
        "with html/NAME.html and gold/NAME.txt (CleanEval's layout), or a folder of the web "
        "demo's annotation files (*.json), whose pages are read from --pages-dir.",
    )
    p.add_argument(
        "pagesets",
        nargs="+",
        metavar="DIR[:train]",
        help="page set directories; DIR:train keeps only the train side of the fixed hash "
        "split (as for Dragnet)",
    )
    p.add_argument("--mode", choices=LABELLER_MODES, required=True)
    p.add_argument(
        "--pages-dir",
        help="where the pages of annotation folders are (their 'source' is relative to it; "
        "default: the annotation folder itself)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="the model file (default: the package's models/labeller-MODE.json)",
    )
    p.add_argument("--trees", type=int, default=None, help="boosting rounds (default: per mode)")
    p.add_argument(
        "--boilerplate-containers",
        metavar="TAG,TAG",
        help="HTML tags whose blocks are boilerplate whatever the trees say (default: "
        "aside,footer,nav for corpus, none for article; '' = none)",
    )
    p.add_argument(
        "--unscored-log-ppl",
        type=float,
        metavar="X",
        help="the log10 perplexity the features get for sentences no model scores, a page in "
        "a language without a model (default: 2.5 for article, 2.0 otherwise)",
    )
    p.add_argument(
        "--folds",
        type=int,
        default=5,
        help="page-grouped folds that choose the decision threshold (default 5; 0 = none)",
    )
    p.add_argument(
        "--max-perplexity",
        type=float,
        dest="max_sentence_perplexity",
        help="sentence filter inside kept blocks that the model records (default: none)",
    )
    p.add_argument(
        "--site-features",
        action="store_true",
        help="also learn from site evidence: how many of the other training pages of a "
        "page's site (the site it declares) carry each block; the labeller then reads it "
        "wherever the cleaner keeps site statistics (clean --site-aware, the worker's site "
        "templates)",
    )
    p.add_argument(
        "--class-features",
        action="store_true",
        help="also learn from the words of the class and id attributes on each block's tag "
        "path (comment, related, share, nav, sidebar, ad...)",
    )
    p.add_argument(
        "--structure-features",
        action="store_true",
        help="also learn from where each block stands in the page: the elements around it "
        "and the page's main element (the one holding most of its running text)",
    )
    p.add_argument(
        "--stacked",
        action="store_true",
        help="fit a second ensemble on how the first one's out-of-fold scores spread over "
        "each page (its elements, its neighbours, its best blocks)",
    )
    p.add_argument(
        "--folds-by-site",
        action="store_true",
        help="keep each site's pages in one fold, and choose the threshold on the mean of "
        "each page set's F1 (for training on several page sets)",
    )
    _add_model_option(p)

    p = add_command(
        "demo",
        help="clean the bundled sample pages and show what was kept",
        description="Clean the sample pages shipped with the package (or PATHs) and print a "
        "summary and one cleaned page.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH")
    _add_cleaner_options(p)

    p = add_command(
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
    )
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
        "the reverse; repeatable (e.g. bench/quality.py --save-outputs's trafilatura folder)",
    )
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--per-page", metavar="PATH", help="also write per-page scores (TSV)")
    _add_cleaner_options(p)

    p = add_command(
        "topics",
        help="create or list the worker's Kafka topics",
        description="Create the worker's four Kafka topics (input, cleaned documents, sentence "
        "scores, dead letters) through the broker's admin API, or list them with their "
        "partitions. Nothing relies on the broker's auto-creation. Connection settings come "
        "from STREAM_CLEANER_KAFKA_* variables (BOOTSTRAP_SERVERS, SECURITY_PROTOCOL, "
        "SASL_MECHANISM, SASL_USERNAME, SASL_PASSWORD, SSL_CAFILE); topic names from the "
        "worker's STREAM_CLEANER_WORKER_*_TOPIC variables (INPUT, DOCUMENTS, SENTENCE_SCORES, "
        "DEAD_LETTER), else the defaults.",
    )
    topic_commands = p.add_subparsers(dest="topics_command", required=True, metavar="ACTION")
    create = topic_commands.add_parser(
        "create",
        parents=[after],
        help="create the topics that do not exist yet",
        description="Create the topics that do not exist yet; existing ones are left as they "
        "are and reported as 'exists'. Prints one line per topic.",
    )
    listing = topic_commands.add_parser(
        "list",
        parents=[after],
        help="list the topics and their partitions",
        description="Print each of the worker's topics with its partition count, or "
        "'missing'. Creates nothing.",
    )
    for sub in (create, listing):
        _add_kafka_options(sub)
        sub.add_argument(
            "--input-topic", help="name of the raw HTML input topic (default crawl.raw-html.v1)"
        )
    listing.add_argument(
        "--all", action="store_true", help="list every topic on the cluster instead"
    )
    create.add_argument("--partitions", type=int, help="partitions of every topic (default 12)")
    create.add_argument(
        "--replication-factor",
        type=int,
        help="copies of each partition (default: 3, or the number of brokers when fewer)",
    )
    create.add_argument(
        "--retention-ms",
        type=int,
        help="retention of the input and output topics in ms (default 604800000, 7 days)",
    )
    create.add_argument(
        "--max-message-bytes",
        type=int,
        help="max.message.bytes of every topic (default 14680064, 14 MiB: a 10 MiB page as "
        "base64 in a JSON envelope)",
    )
    create.add_argument(
        "--dead-letter-retention-ms",
        type=int,
        help="retention of the dead-letter topic in ms (default 2592000000, 30 days)",
    )

    p = add_command(
        "produce",
        help="send pages to the input topic",
        description="Send every page found in PATHs (HTML files, directory trees, WARC, JSON "
        "Lines, - for stdin) to the input topic, as JSON envelopes (default) or as raw HTML "
        "with the id and url in headers. Waits until the broker has them all. Inputs a reader "
        "could not read (a broken WARC record) are listed on stderr, not sent.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    _add_kafka_options(p)
    p.add_argument("--topic", default=None, help="input topic (default crawl.raw-html.v1)")
    p.add_argument("--form", choices=("envelope", "raw"), default="envelope")
    p.add_argument(
        "--compression",
        default="none",
        help="the codec of the record batches sent: none (default), gzip, snappy, lz4 or zstd",
    )

    p = add_command(
        "tail",
        help="print the records of a topic",
        description="Print a topic's records as JSON Lines (partition, offset, key, headers, "
        "value), from the beginning, without joining a consumer group; stops after --max "
        "records or --idle seconds without one.",
    )
    p.add_argument("topic", metavar="TOPIC")
    _add_kafka_options(p)
    p.add_argument("--max", type=int, dest="max_records", help="stop after N records")
    p.add_argument(
        "--idle",
        type=float,
        default=5.0,
        help="stop after this many seconds without a record (default 5; 0: never)",
    )
    p.add_argument("--latest", action="store_true", help="only records that arrive from now")

    p = add_command(
        "stack",
        help="run everything locally: broker, topics, worker, pages in, summary out",
        description="Start a Kafka-protocol broker on 127.0.0.1 (Tansu; or use "
        "--bootstrap-servers), create the topics, start a worker, produce the pages in PATHs "
        "(default: the bundled samples), wait until each has a cleaned document or a dead "
        "letter, print a summary and a few cleaned documents, then stop everything it "
        "started (Ctrl-C too).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--bootstrap-servers", help="use this running Kafka instead of Tansu")
    p.add_argument(
        "--keep-running",
        action="store_true",
        help="keep the broker and worker up after the summary, until Ctrl-C",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds to wait for all outcomes (default %(default)g)",
    )
    p.add_argument("--model", help="KenLM model for the worker (default: the bundled bigram)")
    p.add_argument(
        "--max-perplexity",
        type=float,
        dest="max_sentence_perplexity",
        help="the worker's sentence perplexity limit",
    )
    p.add_argument("--mode", choices=MODES, help=f"the worker's mode (default {MODE_DEFAULT})")

    p = add_command(
        "worker",
        help="run the streaming worker (Faust) on the Kafka topics",
        description="Clean the pages of the input topic and publish cleaned documents, "
        "sentence scores and dead letters, with at-least-once delivery. Creates the topics "
        "first unless --no-create-topics. Serves /metrics, /healthz and /readyz (and with "
        "--web-demo the web demo and API). Settings come "
        "from flags, else STREAM_CLEANER_WORKER_* (GROUP_ID, BATCH_SIZE, WEB_PORT, "
        "INPUT_TOPIC...), STREAM_CLEANER_KAFKA_* and STREAM_CLEANER_* variables. SIGTERM or "
        "SIGINT stop it: acknowledged work is committed, the rest is cleaned again later.",
    )
    _add_kafka_options(p)
    p.add_argument("--group", dest="group_id", help="consumer group (default stream-cleaner)")
    p.add_argument("--input-topic", help="raw HTML input topic (default crawl.raw-html.v1)")
    p.add_argument("--documents-topic", help="cleaned documents (default clean.documents.v1)")
    p.add_argument(
        "--sentence-scores-topic", help="sentence scores (default clean.sentence-scores.v1)"
    )
    p.add_argument("--dead-letter-topic", help="dead letters (default clean.dead-letter.v1)")
    p.add_argument("--web-host", help="bind address of the web pages (default 0.0.0.0)")
    p.add_argument("--web-port", type=int, help="port of the web pages (default 6066)")
    p.add_argument(
        "--web-demo",
        action="store_true",
        default=None,
        help="also serve the web demo and HTTP API (/demo, /api/...) on the web port, cleaning "
        "in a process of their own at the lowest CPU priority, never on the stream's thread "
        "(default off; STREAM_CLEANER_WEB_ENABLED; the other STREAM_CLEANER_WEB_* variables "
        "set their limits)",
    )
    p.add_argument("--batch-size", type=int, help="pages cleaned and published together (32)")
    p.add_argument(
        "--batch-within",
        type=float,
        dest="batch_within_seconds",
        help="seconds a batch may wait to fill after its first page (default 0: clean what has "
        "arrived as soon as the cleaning thread is free)",
    )
    p.add_argument(
        "--batch-max-bytes",
        type=int,
        help="a batch also ends once its messages reach this many bytes (default 16 MiB)",
    )
    p.add_argument(
        "--max-page-bytes",
        type=int,
        help="larger pages become too_large dead letters (default 10485760, 10 MiB)",
    )
    p.add_argument(
        "--max-message-bytes",
        type=int,
        help="largest record produced or fetched per partition (default 14680064, 14 MiB); "
        "the brokers' and topics' limits must allow it",
    )
    p.add_argument(
        "--session-timeout",
        type=float,
        dest="session_timeout_seconds",
        help="seconds the group waits for a silent worker (default 30)",
    )
    p.add_argument(
        "--heartbeat-interval",
        type=float,
        dest="heartbeat_interval_seconds",
        help="seconds between heartbeats (default 3)",
    )
    p.add_argument(
        "--fetch-max-wait",
        type=float,
        dest="fetch_max_wait_seconds",
        help="seconds a fetch waits at most for records to come (default 0.1)",
    )
    p.add_argument(
        "--compression",
        help="the codec of the output record batches: none (default), gzip, snappy, lz4 or zstd",
    )
    p.add_argument(
        "--broker-wait",
        type=float,
        dest="broker_wait_seconds",
        help="seconds to wait at start for a broker to answer (default 60; 0: no wait); "
        "--timeout then bounds creating the topics",
    )
    p.add_argument(
        "--lag-interval",
        type=float,
        dest="lag_interval_seconds",
        help="seconds between measures of the consumer lag (default 5)",
    )
    p.add_argument(
        "--no-create-topics",
        action="store_true",
        help="do not create missing topics at start-up (they must exist)",
    )
    p.add_argument(
        "--offset-reset",
        choices=("earliest", "latest"),  # offsets.OFFSET_RESET_POLICIES (not imported here)
        help="where a partition whose log no longer holds its committed offset (records lost "
        "or deleted by retention) is read again: earliest (default: its log start, at least "
        "once) or latest (its end, skipping what it holds)",
    )
    p.add_argument(
        "--allow-untested-clients",
        action="store_true",
        default=None,
        help="start even when the installed aiokafka or faust-streaming is outside the releases "
        "the worker is tested with (it patches their internals: pages may be lost silently)",
    )
    p.add_argument("--loglevel", default="info", help="Faust log level (default info)")
    _add_cleaner_options(p)

    p = add_command(
        "serve",
        help="serve the web demo and HTTP API",
        description="Serve the web demo (GET /demo) and the HTTP API (POST /api/clean, GET "
        "/api/perplexity, the annotation routes; described at GET /api/openapi.json). Options "
        "default to STREAM_CLEANER_WEB_* variables (MAX_BODY_BYTES, MODELS, FETCH_URLS...). "
        "Ctrl-C stops it.",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default %(default)s)")
    p.add_argument("--port", type=int, default=8080, help="port (default %(default)s)")
    p.add_argument(
        "--add-model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="offer another KenLM model under NAME (repeatable); 'default' is --model",
    )
    p.add_argument(
        "--fetch-urls",
        action="store_true",
        default=None,
        help="allow /api/clean to fetch a url (http/https, public addresses only)",
    )
    p.add_argument(
        "--fetch-private",
        action="store_true",
        default=None,
        help="with --fetch-urls, also fetch loopback, private and link-local addresses",
    )
    p.add_argument("--fetch-timeout", type=float, help="seconds one fetch may take (default 10)")
    p.add_argument("--max-fetch-bytes", type=int, help="largest fetched page (default 2 MiB)")
    p.add_argument("--max-body-bytes", type=int, help="largest request body (default 2 MiB)")
    p.add_argument(
        "--max-request-seconds", type=float, help="cleaning time per request (default 10)"
    )
    p.add_argument("--pages-dir", help="folder of HTML pages the annotation view may open")
    p.add_argument("--annotations-dir", help="folder where the annotation view saves labels")
    _add_cleaner_options(p)

    return parser


def _add_model_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="KenLM model file (default: the bundled English bigram)")


def _add_cleaner_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        action="append",
        metavar="[LANG=]PATH",
        help="KenLM model file: PATH is the default (English) model (default: the bundled "
        "English bigram); LANG=PATH (repeatable, de=de.klm) scores the blocks of that language "
        "(ISO 639-1 code); blocks of a language without a model get no perplexity",
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        help="what counts as content: auto (the labeller trained on every kind of page: "
        "articles, forums, documentation, products, listings), perplexity (the paper's "
        "sentence filter alone), corpus (all good running text) or article (main content "
        f"only) (default {CleanerSettings().mode})",
    )
    p.add_argument(
        "--no-content-guard",
        dest="content_guard",
        action="store_const",
        const=False,
        help="in the labeller's modes, do not keep a page's longest run of running text when "
        "the labeller drops most of it (the content-loss guard; on by default)",
    )
    p.add_argument(
        "--sentence-filter",
        choices=SENTENCE_FILTERS,
        help="in the labeller's modes, also drop sentences of kept blocks above the perplexity "
        "limit: auto (as the labeller was trained; default), on, off",
    )
    p.add_argument("--labeller", dest="labeller_path", help="a train-labeller model file")
    p.add_argument(
        "--multilingual-labeller",
        choices=MULTILINGUAL_LABELLERS,
        help="in corpus/article mode, on which pages the language-independent multilingual "
        "labeller must also call a block content: auto (corpus-mode pages in a language "
        "without a model; default), on (every page), off",
    )
    p.add_argument(
        "--multilingual-labeller-file",
        dest="multilingual_labeller_path",
        help="a multilingual labeller model file (default: the bundled one)",
    )
    p.add_argument(
        "--max-perplexity",
        type=float,
        dest="max_sentence_perplexity",
        help="drop sentences above this perplexity "
        f"(default {CleanerSettings().max_sentence_perplexity:g})",
    )
    p.add_argument("--parser", choices=PARSERS, help="HTML parser backend (default lexbor)")
    p.add_argument(
        "--time-budget",
        type=float,
        dest="time_budget_seconds",
        help="CPU seconds one page may take (default "
        f"{CleanerSettings().time_budget_seconds:g}; 0 = no limit)",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        dest="max_document_bytes",
        help="larger pages are refused as too_large",
    )
    p.add_argument(
        "--max-blocks",
        type=int,
        dest="max_blocks",
        help="pages with more text blocks are refused as too_large (default "
        f"{CleanerSettings().max_blocks})",
    )


def _add_kafka_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT,...",
        help="Kafka brokers, comma-separated (default: $STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS "
        "or 127.0.0.1:9092)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to wait for the broker before giving up (default %(default)g)",
    )


def _settings(args: argparse.Namespace) -> CleanerSettings:
    return _settings_from(CleanerSettings.from_env(), args)


def _settings_from(base: CleanerSettings, args: argparse.Namespace) -> CleanerSettings:
    model_path, models = _model_options(base, args.model or [])
    return base.with_options(
        max_sentence_perplexity=args.max_sentence_perplexity,
        parser=args.parser,
        model_path=model_path,
        models=models,
        time_budget_seconds=args.time_budget_seconds,
        max_document_bytes=args.max_document_bytes,
        max_blocks=args.max_blocks,
        mode=args.mode,
        sentence_filter=args.sentence_filter,
        labeller_path=args.labeller_path,
        multilingual_labeller=args.multilingual_labeller,
        multilingual_labeller_path=args.multilingual_labeller_path,
        content_guard=getattr(args, "content_guard", None),
    )


_LANGUAGE_ENTRY = re.compile(r"[a-z]{2,3}=")


def _model_options(base: CleanerSettings, given: Sequence[str]) -> tuple[str | None, str | None]:
    """``model_path`` and ``models`` from ``--model`` options over the base settings' (env):
    a plain PATH (at most one) or ``en=PATH`` is the default model, ``LANG=PATH`` adds or
    replaces that language's model."""
    if not given:
        return None, None
    plain = [value for value in given if not _LANGUAGE_ENTRY.match(value)]
    if len(plain) > 1:
        raise ValueError(f"one default model, not {len(plain)}: give others as LANG=PATH")
    entries = parse_models([value for value in given if _LANGUAGE_ENTRY.match(value)])
    english = plain[0] if plain else entries.get("en")
    if plain and "en" in entries and entries["en"] != plain[0]:
        raise ValueError(f"two English models: {plain[0]} and en={entries['en']}")
    models = {**base.model_paths(), **entries}
    models.pop("en", None)
    return english or base.model_path, format_models(models)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (``EXIT_*``, see the module docstring)."""
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler = {
        "perplexity": _cmd_perplexity,
        "strip-tags": _cmd_strip_tags,
        "clean": _cmd_clean,
        "train-lm": _cmd_train_lm,
        "train-labeller": _cmd_train_labeller,
        "demo": _cmd_demo,
        "evaluate": _cmd_evaluate,
        "topics": _cmd_topics,
        "worker": _cmd_worker,
        "produce": _cmd_produce,
        "tail": _cmd_tail,
        "stack": _cmd_stack,
        "serve": _cmd_serve,
    }[args.command]
    try:
        return handler(args)
    except BrokenPipeError:
        # the reader went away (`| head`): not an error; silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError, RuntimeError) as exc:  # a missing model, a full disk...
        print(f"stream-cleaner {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _cmd_perplexity(args: argparse.Namespace) -> int:
    from .lm import load_model

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
    from .decode import BinaryContent, decode_body
    from .io import iter_documents
    from .parse import extract_text

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


def _cmd_clean(args: argparse.Namespace) -> int:
    from .io import (
        CleanEvalWriter,
        JsonlWriter,
        ReadStats,
        TextTreeWriter,
        WarcWriter,
        count_documents,
        iter_documents,
    )

    settings = _settings(args)
    if args.format == "text" and not args.output:
        raise ValueError("--format text writes a directory tree: give it with -o DIR")
    _load_models(settings)  # fail now, before reading any input
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
        f"{_skipped_records(read)}",
        file=sys.stderr,
    )
    return exit_status(failed=errors.total(), total=counts["documents"])


def _errors(errors: Counter[str]) -> str:
    """The summary's count of the documents with an error, by error."""
    if not errors:
        return "0 with an error"
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(errors.items()))
    return f"{errors.total()} with an error: {reasons}"


def _skipped_records(read: Any) -> str:
    """What the summary line says of the input records that were no page (a `ReadStats`):
    WARC requests and metadata, redirects and error responses, style sheets and scripts..."""
    skipped = {reason: n for reason, n in read.skipped.items() if reason != "blank_line"}
    if not skipped:
        return ""
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(skipped.items()))
    return f"; {sum(skipped.values())} inputs were no page to clean ({reasons})"


def _learn_sites(args: argparse.Namespace, settings: CleanerSettings) -> SiteTemplates:
    """The first pass of ``clean --site-aware``: every page of every site, in a window that
    holds them all, so that the second pass sees the same statistics whatever the order."""
    from .io import iter_documents
    from .pipeline import observe_site

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
    from .pipeline import clean_document

    if jobs <= 1:
        for source in sources:
            yield (
                source,
                clean_document(source.doc, settings=settings, sites=sites, learn_site=False),
            )
        return
    from .parallel import clean_in_processes

    yield from clean_in_processes(sources, settings, jobs, sites)


def _cmd_train_lm(args: argparse.Namespace) -> int:
    from .lm import train_lm

    def progress(n: int) -> None:
        print(f"  {n:,} sentences", file=sys.stderr)

    trained = train_lm(
        args.corpora,
        args.output,
        order=args.order,
        prune=args.prune,
        max_vocab=args.max_vocab,
        memory=args.memory,
        binary_type=args.binary_type,
        arpa=args.arpa,
        model_id=args.model_id,
        progress=progress if args.verbose else None,
    )
    info = trained.info
    print(
        f"wrote {trained.path} ({info['size_bytes'] / 1e6:.1f} MB, order {info['order']}, "
        f"{info['vocabulary_size']} words, {info['training_sentences']:,} sentences) "
        f"and {trained.path}.json"
    )
    return 0


def _cmd_train_labeller(args: argparse.Namespace) -> int:
    from .labeller import labeller_path
    from .training import train_labeller

    try:
        import lightgbm  # noqa: F401 - only to fail early with the way out
    except ImportError:
        raise RuntimeError(
            "train-labeller needs LightGBM: pip install 'stream-cleaner[train]'"
        ) from None

    sources: list[tuple[str, str | None]] = []
    for spec in args.pagesets:
        directory, _, split = spec.rpartition(":")
        if split == "train" and directory:
            sources.append((directory, "train"))
        elif not Path(spec, "html").is_dir() and any(Path(spec).glob("*.json")):
            sources.append((spec, "annotations"))  # the annotation view's files
        else:
            sources.append((spec, None))

    def progress(directory: str, n: int) -> None:
        if n % 100 == 0:
            print(f"  {directory}: {n} pages", file=sys.stderr)

    output = args.output or labeller_path(args.mode)
    meta = train_labeller(
        sources,
        mode=args.mode,
        output=output,
        model=_load_lm(args.model),
        num_trees=args.trees,
        folds=args.folds,
        max_sentence_perplexity=args.max_sentence_perplexity,
        progress=progress if args.verbose else None,
        pages_dir=args.pages_dir,
        site_features=args.site_features,
        class_features=args.class_features,
        structure_features=args.structure_features,
        stacked=args.stacked,
        folds_by_site=args.folds_by_site,
        boilerplate_containers=None
        if args.boilerplate_containers is None
        else [t.strip().lower() for t in args.boilerplate_containers.split(",") if t.strip()],
        unscored_log_ppl=args.unscored_log_ppl,
    )
    cv = meta["cv_macro_f1"]
    print(
        f"wrote {output} ({meta['pages']} pages, {meta['blocks']} blocks, "
        f"{meta['content_blocks']} content; threshold {meta['threshold']:g}"
        + (f", cross-validated macro F1 {cv:.4f}" if cv is not None else "")
        + f") and {output}.meta.json"
    )
    return 0


def _load_models(settings: CleanerSettings) -> None:
    """Load the default model and every language's now: a missing file is an error at once."""
    from .pipeline import language_models

    for model in language_models(settings).values():
        model.model  # noqa: B018 - the property loads the file


def _load_lm(path: str | None) -> Any:
    from .lm import load_model

    return load_model(path)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .io import iter_documents
    from .pipeline import clean_document

    settings = _settings(args)
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
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from . import evaluate

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
        settings = _settings(args)
        _load_models(settings)  # fail now, before any page
        system = f"stream-cleaner {_describe_settings(settings)}"
        started = time.perf_counter()
        outputs = evaluate.clean_pages(with_gold, settings)
        elapsed = time.perf_counter() - started
        speed = f"; cleaned in {elapsed:.1f} s, {len(with_gold) / elapsed:.1f} pages/s"
    summary, scores = evaluate.score_outputs(with_gold, outputs, missing=args.missing)
    by_type = evaluate.summarize_by_type(scores)
    lost = {
        folder: _lost_against(with_gold, scores, folder, missing=args.missing)
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
    for folder, counts in lost.items():
        print(
            f"\nlost main content against {folder}: {len(counts.lost)} pages lost here and "
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
        if lost:
            figures["lost_main_content"] = {k: v.to_dict() for k, v in lost.items()}
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


def _lost_against(
    pages: list[Page], scores: list[PageScore], folder: str, *, missing: str
) -> LostContent:
    """The pages lost against another system's outputs in ``folder``, and the reverse."""
    from . import evaluate

    theirs = evaluate.read_outputs(folder, [page.name for page in pages])
    _, their_scores = evaluate.score_outputs(pages, theirs, missing=missing)
    return evaluate.compare_lost(scores, their_scores)


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


def _cmd_topics(args: argparse.Namespace) -> int:
    _require_stream_extra()
    from dataclasses import replace

    from .streaming import topics
    from .streaming.app import WorkerSettings

    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    kafka = topics.KafkaSettings.from_env()
    if args.bootstrap_servers:
        kafka = replace(kafka, bootstrap_servers=args.bootstrap_servers)
    # the worker's own topics (STREAM_CLEANER_WORKER_*: names, site templates, re-keying), so
    # that a deployment that renames them creates the topics its workers read and write
    worker = WorkerSettings.from_env().with_options(input_topic=args.input_topic)
    options = {
        "partitions": getattr(args, "partitions", None),
        "replication_factor": getattr(args, "replication_factor", None),
        "retention_ms": getattr(args, "retention_ms", None),
        "dead_letter_retention_ms": getattr(args, "dead_letter_retention_ms", None),
        "max_message_bytes": getattr(args, "max_message_bytes", None),
    }
    specs = worker.topic_specs(**{k: v for k, v in options.items() if v is not None})
    aiokafka_log = logging.getLogger("aiokafka")
    level = aiokafka_log.level
    if not args.verbose:
        # aiokafka logs every failed connection attempt; the one-line error main() prints
        # says the same once
        aiokafka_log.setLevel(logging.CRITICAL)
    try:
        if args.topics_command == "create":
            outcomes = topics.create_topics(kafka, specs, timeout=args.timeout)
            existing = [name for name, outcome in outcomes.items() if outcome == "exists"]
            # a topic that was there already keeps its own partition count: show it
            actual = topics.describe_topics(kafka, existing, timeout=args.timeout)
            for spec in specs:
                count = actual.get(spec.name, spec.partitions)
                note = "" if count == spec.partitions else f" (not {spec.partitions}: left as is)"
                print(f"{spec.name:<32} {outcomes[spec.name]:<8} {_partitions(count)}{note}")
            return 0
        names = None if args.all else [spec.name for spec in specs]
        partitions = topics.describe_topics(kafka, names, timeout=args.timeout)
        for name in partitions if names is None else names:
            print(f"{name:<32} {_partitions(partitions.get(name))}")
        return 0
    finally:
        aiokafka_log.setLevel(level)


def _kafka_from(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from .streaming.topics import KafkaSettings

    kafka = KafkaSettings.from_env()
    if args.bootstrap_servers:
        kafka = replace(kafka, bootstrap_servers=args.bootstrap_servers)
    return kafka


def _cmd_produce(args: argparse.Namespace) -> int:
    _require_stream_extra()
    from .io import ReadStats, iter_documents
    from .streaming.client import produce
    from .streaming.topics import RAW_HTML_TOPIC

    read = ReadStats()
    sources = iter_documents(args.paths, stdin=sys.stdin.buffer, stats=read)
    stats = produce(sources, _kafka_from(args), args.topic or RAW_HTML_TOPIC, form=args.form,
                    compression=args.compression)  # fmt: skip
    for skipped in stats.skipped:
        print(f"not sent: {skipped}", file=sys.stderr)
    print(
        f"stream-cleaner produce: {stats.sent} pages ({stats.bytes / 1e6:.1f} MB) sent to "
        f"{args.topic or RAW_HTML_TOPIC}, {len(stats.skipped)} not sent{_skipped_records(read)}",
        file=sys.stderr,
    )
    return exit_status(failed=len(stats.skipped), total=stats.sent + len(stats.skipped))


def _cmd_tail(args: argparse.Namespace) -> int:
    _require_stream_extra()
    import asyncio

    import orjson

    from .streaming.client import tail_async

    def emit(record: dict[str, Any]) -> None:
        sys.stdout.buffer.write(orjson.dumps(record) + b"\n")
        sys.stdout.buffer.flush()

    asyncio.run(
        tail_async(
            _kafka_from(args),
            args.topic,
            emit,
            from_beginning=not args.latest,
            max_records=args.max_records,
            idle_seconds=args.idle or None,
        )
    )
    return 0


def _cmd_stack(args: argparse.Namespace) -> int:
    _require_stream_extra()
    from .io import iter_documents
    from .streaming.stack import run_stack

    sources = list(iter_documents(args.paths or [str(SAMPLES_DIR)]))
    worker_args = []
    if args.model:
        worker_args += ["--model", args.model]
    if args.max_sentence_perplexity is not None:
        worker_args += ["--max-perplexity", str(args.max_sentence_perplexity)]
    if args.mode:
        worker_args += ["--mode", args.mode]
    result = run_stack(
        sources,
        bootstrap_servers=args.bootstrap_servers,
        worker_args=worker_args,
        timeout=args.timeout,
        keep_running=args.keep_running,
    )
    return 0 if result.missing == 0 else 1


def _cmd_worker(args: argparse.Namespace) -> int:
    _require_stream_extra()
    from dataclasses import replace

    from .streaming import patches, topics
    from .streaming.agents import load_models_now
    from .streaming.app import WorkerSettings, create_app, run_worker

    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    settings = WorkerSettings.from_env()
    kafka = settings.kafka
    if args.bootstrap_servers:
        kafka = replace(kafka, bootstrap_servers=args.bootstrap_servers)
    settings = settings.with_options(
        kafka=kafka,
        cleaner=_settings_from(settings.cleaner, args),
        group_id=args.group_id,
        input_topic=args.input_topic,
        documents_topic=args.documents_topic,
        sentence_scores_topic=args.sentence_scores_topic,
        dead_letter_topic=args.dead_letter_topic,
        web_host=args.web_host,
        web_port=args.web_port,
        web=settings.web.with_options(enabled=args.web_demo),
        batch_size=args.batch_size,
        batch_within_seconds=args.batch_within_seconds,
        batch_max_bytes=args.batch_max_bytes,
        max_page_bytes=args.max_page_bytes,
        max_message_bytes=args.max_message_bytes,
        session_timeout_seconds=args.session_timeout_seconds,
        heartbeat_interval_seconds=args.heartbeat_interval_seconds,
        lag_interval_seconds=args.lag_interval_seconds,
        fetch_max_wait_seconds=args.fetch_max_wait_seconds,
        compression=args.compression,
        broker_wait_seconds=args.broker_wait_seconds,
        allow_untested_clients=args.allow_untested_clients,
        offset_reset=args.offset_reset,
    )
    # first: refused releases of aiokafka or faust-streaming stop the worker before it loads
    # its models or waits for brokers
    patches.require_tested(allow_untested=settings.allow_untested_clients)
    settings.check_timeouts()
    load_models_now(settings.cleaner)  # fail now, before joining the group
    if settings.broker_wait_seconds > 0:  # a worker started before its cluster answers waits
        topics.wait_for_brokers(settings.kafka, settings.broker_wait_seconds)
    specs = settings.topic_specs()
    if not args.no_create_topics:
        outcomes = topics.create_topics(kafka, specs, timeout=args.timeout)
        created = [name for name, outcome in outcomes.items() if outcome == "created"]
        if created:
            log.warning("created the topics %s", ", ".join(created))
    else:  # nothing relies on auto-creation: a missing topic stops the worker now, named
        found = topics.describe_topics(kafka, [spec.name for spec in specs], timeout=args.timeout)
        missing = [spec.name for spec in specs if spec.name not in found]
        if missing:
            raise RuntimeError(
                f"the topics {', '.join(missing)} do not exist: create them with `stream-cleaner "
                "topics create` under the worker's STREAM_CLEANER_WORKER_* settings, or start "
                "the worker without --no-create-topics"
            )
    return run_worker(create_app(settings), loglevel=args.loglevel)


def _cmd_serve(args: argparse.Namespace) -> int:
    from .lm import DEFAULT_MODEL_PATH
    from .web.config import WebSettings, parse_model_specs
    from .web.server import create_web_app, run_server

    web = WebSettings.from_env()
    web = web.with_options(
        models=web.models + parse_model_specs(args.add_model) or None,
        fetch_urls=args.fetch_urls,
        fetch_private=args.fetch_private,
        fetch_timeout_seconds=args.fetch_timeout,
        max_fetch_bytes=args.max_fetch_bytes,
        max_body_bytes=args.max_body_bytes,
        max_request_seconds=args.max_request_seconds,
        pages_dir=args.pages_dir,
        annotations_dir=args.annotations_dir,
    )
    cleaner = _settings(args)
    languages = cleaner.model_paths().values()
    for path in [cleaner.model_path, *languages, *(path for _, path in web.models)]:
        if not Path(path or DEFAULT_MODEL_PATH).is_file():
            raise FileNotFoundError(f"no model file {path}")
    run_server(create_web_app(web, cleaner), host=args.host, port=args.port, settings=web)
    return 0


def _partitions(count: int | None) -> str:
    if count is None:
        return "missing"
    return f"{count} partition{'' if count == 1 else 's'}"


def _require_stream_extra() -> None:
    """Fail with the install command when the ``stream`` extra (aiokafka, faust) is missing."""
    import importlib.util

    if importlib.util.find_spec("aiokafka") is None:
        raise RuntimeError(
            "this command needs the stream extra: pip install 'stream-cleaner[stream]'"
        )


if __name__ == "__main__":
    raise SystemExit(main())
