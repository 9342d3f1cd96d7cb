"""The CLI's options: every one the command line had before it became a package is still
there with the same defaults and choices (tests/data/cli_options.json, dumped from the parser
of `main` at 0776253), and flags that set a settings field take their default from it."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).parent / "data" / "cli_options.json"
_ENV = re.compile(r"STREAM_CLEANER_[A-Z_]*[A-Z]")


def _value(value: Any) -> Any:
    if value is argparse.SUPPRESS or value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple | range):
        return [_value(v) for v in value]
    return repr(value)


def option_table(parser: argparse.ArgumentParser, name: str = "stream-cleaner") -> dict:
    """Every command's options (subcommands by their full name): option strings, dest,
    default, choices, type, nargs, const, required, action and the variables the help names."""
    table: dict[str, dict] = {}
    parser.format_help()  # a command's options may be added on first use
    options = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                table |= option_table(sub, f"{name} {command}")
            continue
        key = " ".join(action.option_strings) or action.dest
        options[key] = {
            "dest": action.dest,
            "default": _value(action.default),
            "choices": _value(action.choices),
            "type": getattr(action.type, "__name__", _value(action.type)),
            "nargs": _value(action.nargs),
            "const": _value(action.const),
            "required": action.required,
            "action": type(action).__name__,
            "env": sorted(set(_ENV.findall(action.help or ""))),
        }
    table[name] = options
    return table


def test_every_recorded_option_is_kept():
    from stream_cleaner.cli import build_parser

    recorded = json.loads(RECORDED.read_text())
    current = option_table(build_parser())
    assert set(recorded) <= set(current)
    for command, options in recorded.items():
        for key, was in options.items():
            assert key in current[command], f"{command} lost {key}"
            now = current[command][key]
            assert set(was["env"]) <= set(now["env"]), f"{command} {key}: {was['env']}"
            same = {k: v for k, v in now.items() if k != "env"}
            assert same == {k: v for k, v in was.items() if k != "env"}, f"{command} {key}"


def record() -> None:
    """Write the table of the current parser (run once, before the CLI changed)."""
    from stream_cleaner.cli import build_parser

    RECORDED.write_text(json.dumps(option_table(build_parser()), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record()
