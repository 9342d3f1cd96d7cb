"""The command line: ``stream-cleaner COMMAND ...``. Thin callers of the core, nothing more.

One module per command or group of commands (`text`: perplexity, strip-tags; `clean`: clean,
demo; `train`; `evaluate`; `topics`: topics, produce, tail; `worker`: worker, stack; `serve`),
each with a ``register`` that adds its commands and their handlers. The options that set the
cleaner's or the worker's settings are generated from the settings' fields (`options`).

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
import sys
from collections.abc import Sequence

from . import clean, evaluate, serve, text, topics, train, worker
from .options import CommandParser, add_global_options, global_options_after
from .options import cleaner_settings as _settings  # noqa: F401 - tests/test_languages.py
from .status import (
    EXIT_ERROR,
    EXIT_MOST_FAILED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    MOST_FAILED_SHARE,
    exit_status,
)

__all__ = [
    "EXIT_ERROR",
    "EXIT_MOST_FAILED",
    "EXIT_OK",
    "EXIT_SOME_FAILED",
    "EXIT_USAGE",
    "MOST_FAILED_SHARE",
    "build_parser",
    "exit_status",
    "main",
    "parse_args",
]

COMMAND_MODULES = (text, clean, train, evaluate, topics, worker, serve)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``argv`` without the program name)."""
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (each command's options are added on first use)."""
    parser = argparse.ArgumentParser(
        prog="stream-cleaner",
        description="Clean crawled web pages: strip tags, split sentences, score them with a "
        "KenLM language model, drop boilerplate.",
    )
    add_global_options(parser, default=False)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=CommandParser
    )
    add_command = functools.partial(commands.add_parser, parents=[global_options_after()])
    for module in COMMAND_MODULES:
        module.register(add_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (``EXIT_*``, see the module docstring)."""
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return args.handler(args)
    except BrokenPipeError:
        # the reader went away (`| head`): not an error; silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError, RuntimeError) as exc:  # a missing model, a full disk...
        print(f"stream-cleaner {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
