"""What the commands share: the parser of a command, the global options, and the options that
set the cleaner's or the worker's settings, generated from the settings' own fields.

A field declared with `stream_cleaner.settings.option` is a flag of every command that takes
those settings (`add_settings_options`), and parsed arguments go back into the settings by
the fields' names (`option_values`): a default is written once, on the field. Options that
are no setting (paths, output, a command's own switches) are written in the command's module.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..settings import ENV_PREFIX, CleanerSettings, format_models, parse_models

SAMPLES_DIR = Path(__file__).parent.parent / "samples"


class CommandParser(argparse.ArgumentParser):
    """A command's parser whose options are added when it is first used: when it parses its
    arguments or shows its help. Building the worker's options reads `WorkerSettings`, whose
    module the other commands must not import (nor ``worker`` the Kafka clients).

    Args:
        add_options: called with the parser, once, before its first use.
    """

    def __init__(
        self, *args: Any, add_options: Callable[[CommandParser], None] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._add_options = add_options

    def ensure_options(self) -> None:
        """Add the command's options now, if they are not there yet."""
        add, self._add_options = self._add_options, None
        if add is not None:
            add(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.ensure_options()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.ensure_options()
        return super().format_usage()

    def format_help(self) -> str:
        self.ensure_options()
        return super().format_help()


def global_options_after() -> argparse.ArgumentParser:
    """The global options as a parent of each command's parser (``clean -v``). Given after
    the command, the command's parser sets them; not given, it must leave the value that the
    main parser set (or its default) alone: hence SUPPRESS."""
    after = argparse.ArgumentParser(add_help=False)
    add_global_options(after, default=argparse.SUPPRESS)
    return after


def add_global_options(parser: argparse.ArgumentParser, *, default: Any) -> None:
    """The options every command takes, before its name or after it (``clean -v``)."""
    parser.add_argument("--version", action="version", version=f"stream-cleaner {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="log progress details"
    )


# --- options generated from settings fields ---------------------------------------------------


def option_fields(cls: type, names: Collection[str] | None = None) -> list[dataclasses.Field]:
    """The fields of the settings class ``cls`` that are options (declared with
    `stream_cleaner.settings.option`), all or those in ``names``."""
    return [
        f
        for f in dataclasses.fields(cls)
        if "help" in f.metadata and (names is None or f.name in names)
    ]


def flag_of(field: dataclasses.Field) -> str:
    """The command-line flag of an option field."""
    if "flag" in field.metadata:
        return field.metadata["flag"]
    dashed = field.name.replace("_", "-")
    return f"--no-{dashed}" if field.default is True else f"--{dashed}"


def add_settings_options(
    parser: argparse.ArgumentParser,
    cls: type,
    env_prefix: str,
    *,
    names: Collection[str] | None = None,
) -> None:
    """Add a flag for each option field of the settings class ``cls`` (or of those in
    ``names``): its help is the field's, then its default and its ``env_prefix`` variable.

    The flag's own default is ``None`` (not given: the environment's value or the field's
    default stands), its ``dest`` the field's name (`option_values` reads it back). A bool
    field defaulting to ``True`` gives ``--no-NAME``, one defaulting to ``False`` ``--NAME``.
    """
    for field in option_fields(cls, names):
        meta = field.metadata
        default = field.default
        env = f"env {env_prefix}{field.name.upper()}"
        text = meta["help"].replace("%", "%%")
        kwargs: dict[str, Any] = {"dest": field.name, "default": None}
        if isinstance(default, bool):  # argparse's store_true keeps the None default
            kwargs |= (
                {"action": "store_const", "const": False} if default else {"action": "store_true"}
            )
            text += f" ({'on' if default else 'off'} by default; {env})"
        else:
            if isinstance(default, int | float):
                kwargs["type"] = type(default)
            if "choices" in meta:
                kwargs["choices"] = meta["choices"]
            if "metavar" in meta:
                kwargs["metavar"] = meta["metavar"]
            shown = f"{default:g}" if isinstance(default, float) else default
            if default is None and text.endswith(")"):  # "(default: the bundled one)"
                text = f"{text[:-1]}; {env})"
            else:
                text += f" ({env})" if default is None else f" (default {shown}; {env})"
        parser.add_argument(flag_of(field), help=text, **kwargs)


def option_values(cls: type, args: argparse.Namespace) -> dict[str, Any]:
    """The option fields of ``cls`` that the command line gave, by name."""
    return {
        f.name: getattr(args, f.name)
        for f in option_fields(cls)
        if getattr(args, f.name, None) is not None
    }


# --- the cleaner's options --------------------------------------------------------------------


def add_model_option(p: argparse.ArgumentParser) -> None:
    """``--model PATH`` of the commands that score with one model."""
    p.add_argument("--model", help="KenLM model file (default: the bundled English bigram)")


def add_cleaner_options(p: argparse.ArgumentParser) -> None:
    """The options of `CleanerSettings`: its option fields, and ``--model [LANG=]PATH`` (which
    sets ``model_path`` and ``models``)."""
    p.add_argument(
        "--model",
        action="append",
        metavar="[LANG=]PATH",
        help="KenLM model file: PATH is the default (English) model (default: the bundled "
        "English bigram); LANG=PATH (repeatable, de=de.klm) scores the blocks of that language "
        "(ISO 639-1 code); blocks of a language without a model get no perplexity "
        f"(env {ENV_PREFIX}MODEL_PATH, {ENV_PREFIX}MODELS)",
    )
    add_settings_options(p, CleanerSettings, ENV_PREFIX)


def cleaner_settings(
    args: argparse.Namespace, base: CleanerSettings | None = None
) -> CleanerSettings:
    """The cleaner's settings: ``base`` (default: from the environment) with the options
    given on the command line (`add_cleaner_options`)."""
    base = CleanerSettings.from_env() if base is None else base
    model_path, models = _model_options(base, args.model or [])
    return base.with_options(
        model_path=model_path, models=models, **option_values(CleanerSettings, args)
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


def load_models(settings: CleanerSettings) -> None:
    """Load the default model and every language's now: a missing file is an error at once."""
    from ..pipeline import language_models

    for model in language_models(settings).values():
        model.model  # noqa: B018 - the property loads the file


def load_lm(path: str | None) -> Any:
    from ..lm import load_model

    return load_model(path)


# --- the Kafka commands' options --------------------------------------------------------------


def add_kafka_options(p: argparse.ArgumentParser) -> None:
    from ..streaming import topics  # no Kafka client: the defaults of the connection

    p.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT,...",
        help="Kafka brokers, comma-separated (default: $STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS "
        f"or {','.join(topics.BOOTSTRAP_SERVERS_DEFAULT)})",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=topics.ADMIN_TIMEOUT_SECONDS_DEFAULT,
        help="seconds to wait for the broker before giving up (default %(default)g)",
    )


def kafka_from(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from ..streaming.topics import KafkaSettings

    kafka = KafkaSettings.from_env()
    if args.bootstrap_servers:
        kafka = replace(kafka, bootstrap_servers=args.bootstrap_servers)
    return kafka


def require_stream_extra() -> None:
    """Fail with the install command when the ``stream`` extra (aiokafka, faust) is missing."""
    import importlib.util

    if importlib.util.find_spec("aiokafka") is None:
        raise RuntimeError(
            "this command needs the stream extra: pip install 'stream-cleaner[stream]'"
        )


def skipped_records(read: Any) -> str:
    """What the summary line says of the input records that were no page (a `ReadStats`):
    WARC requests and metadata, redirects and error responses, style sheets and scripts..."""
    skipped = {reason: n for reason, n in read.skipped.items() if reason != "blank_line"}
    if not skipped:
        return ""
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(skipped.items()))
    return f"; {sum(skipped.values())} inputs were no page to clean ({reasons})"
