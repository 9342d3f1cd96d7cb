"""The exit codes of the command line (`stream_cleaner.cli`'s docstring says what each means)."""

from __future__ import annotations

from typing import Final

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
