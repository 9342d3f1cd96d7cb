"""Rule 52 (bench/auto_training.py): the content-loss guard's run of prose with 2 (shipped),
4 or 8 other blocks allowed between two of its blocks (`guard.MAX_RUN_GAP`), each in one
process, on the training sets (the 2026 pages in `auto` out of fold) or, with ``--test``, the
test sets; the columns of `table_figures.compare`.

    PYTHONPATH=$PWD .venv/bin/python bench/run_gap.py [--test] [--gaps 2,4,8]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from table_figures import TEST, TRAINING, Patch, compare

from stream_cleaner import guard


def gap(blocks: int) -> Patch:
    """The variant whose run of prose allows ``blocks`` blocks between two of its blocks."""

    def apply() -> Callable[[], None]:
        shipped = guard.MAX_RUN_GAP
        guard.MAX_RUN_GAP = blocks

        def undo() -> None:
            guard.MAX_RUN_GAP = shipped

        return undo

    return apply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test", action="store_true", help="the test sets, read once")
    parser.add_argument("--gaps", default="2,4,8", help="the gaps, the shipped one first")
    args = parser.parse_args()
    compare(TEST if args.test else TRAINING, {g: gap(int(g)) for g in args.gaps.split(",")})


if __name__ == "__main__":
    main()
