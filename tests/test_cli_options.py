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


# --- flags generated from the settings' fields -----------------------------------------------


def _help_of(command: list[str]) -> str:
    from stream_cleaner.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices[command[0]]
            return " ".join(sub.format_help().split())
    raise AssertionError(command)


def test_a_settings_default_and_its_variable_show_in_help():
    from stream_cleaner.settings import CleanerSettings
    from stream_cleaner.streaming.settings import BATCH_SIZE_DEFAULT

    defaults = CleanerSettings()
    text = _help_of(["clean"])
    assert (
        f"drop sentences above this perplexity (default {defaults.max_sentence_perplexity:g}; "
        "env STREAM_CLEANER_MAX_SENTENCE_PERPLEXITY)" in text
    )
    assert f"(default {defaults.mode}; env STREAM_CLEANER_MODE)" in text
    assert "(on by default; env STREAM_CLEANER_CONTENT_GUARD)" in text
    worker = _help_of(["worker"])
    assert (
        "pages cleaned and published together "
        f"(default {BATCH_SIZE_DEFAULT}; env STREAM_CLEANER_WORKER_BATCH_SIZE)" in worker
    )


def test_changing_a_field_default_changes_the_help_and_the_parsed_settings(monkeypatch):
    from dataclasses import dataclass

    from stream_cleaner.cli import _settings, options, parse_args
    from stream_cleaner.settings import CleanerSettings, option

    @dataclass(frozen=True, slots=True)
    class Changed(CleanerSettings):
        max_sentence_perplexity: float = option(
            1234.5, "drop sentences above this perplexity", flag="--max-perplexity"
        )
        max_blocks: int = option(77, "pages with more text blocks are refused as too_large")

    monkeypatch.setattr(options, "CleanerSettings", Changed)
    assert "(default 1234.5; env STREAM_CLEANER_MAX_SENTENCE_PERPLEXITY)" in _help_of(["demo"])
    assert "(default 77; env STREAM_CLEANER_MAX_BLOCKS)" in _help_of(["demo"])
    settings = _settings(parse_args(["demo"]))
    assert (settings.max_sentence_perplexity, settings.max_blocks) == (1234.5, 77)
    assert _settings(parse_args(["demo", "--max-blocks", "5"])).max_blocks == 5


def test_a_new_option_field_is_a_flag_without_more_code(monkeypatch):
    from dataclasses import dataclass

    from stream_cleaner.cli import _settings, options, parse_args
    from stream_cleaner.settings import CleanerSettings, option

    @dataclass(frozen=True, slots=True)
    class WithNew(CleanerSettings):
        min_toy_words: int = option(3, "toy: blocks of fewer words go", flag="--min-toy")
        toy_rule: bool = option(True, "toy: a rule on by default")
        toy_level: str = option("page", "toy: where it acts", choices=("sentence", "page"))

    monkeypatch.setattr(options, "CleanerSettings", WithNew)
    text = _help_of(["clean"])
    assert "--min-toy MIN_TOY_WORDS toy: blocks of fewer words go (default 3;" in text
    assert "--no-toy-rule toy: a rule on by default (on by default;" in text
    assert "(default page; env STREAM_CLEANER_TOY_LEVEL)" in text
    settings = _settings(parse_args(["clean", "x", "--min-toy", "9", "--no-toy-rule"]))
    assert (settings.min_toy_words, settings.toy_rule, settings.toy_level) == (9, False, "page")
    assert _settings(parse_args(["clean", "x"])).min_toy_words == 3


def _changed_values(cls: type) -> dict[str, Any]:
    """A value other than its default for each option field of ``cls``."""
    from stream_cleaner.cli.options import option_fields

    special = {"compression": "gzip", "web_host": "127.0.0.1", "models": None}
    values: dict[str, Any] = {}
    for field in option_fields(cls):
        default = field.default
        if field.name in special:
            values[field.name] = special[field.name]
        elif "choices" in field.metadata:
            values[field.name] = next(c for c in field.metadata["choices"] if c != default)
        elif isinstance(default, bool):
            values[field.name] = not default
        elif isinstance(default, int | float):
            values[field.name] = type(default)(default + 1)
        else:
            values[field.name] = f"{default or 'x'}-changed"
    return values


def _argv(cls: type, values: dict[str, Any]) -> list[str]:
    from dataclasses import fields

    from stream_cleaner.cli.options import flag_of

    argv = []
    for field in fields(cls):
        if field.name in values:
            value = values[field.name]
            argv += [flag_of(field)] if isinstance(value, bool) else [flag_of(field), str(value)]
    return argv


def test_every_option_field_goes_back_into_its_settings():
    from stream_cleaner.cli import _settings, parse_args
    from stream_cleaner.cli.options import option_values
    from stream_cleaner.settings import CleanerSettings
    from stream_cleaner.streaming.settings import WorkerSettings

    cleaner = _changed_values(CleanerSettings)
    assert len(cleaner) >= 11
    settings = _settings(parse_args(["clean", "x", *_argv(CleanerSettings, cleaner)]))
    assert {name: getattr(settings, name) for name in cleaner} == cleaner
    worker = _changed_values(WorkerSettings)
    assert len(worker) >= 20
    args = parse_args(["worker", *_argv(WorkerSettings, worker)])
    settings = WorkerSettings().with_options(**option_values(WorkerSettings, args))
    assert {name: getattr(settings, name) for name in worker} == worker
