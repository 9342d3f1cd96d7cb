"""Rules 53 and 54 (bench/auto_training.py): the blocks of elements that are modal dialogs by
their ARIA attributes (`parse.aria_dialog`) never content, on and off in one process; the
columns of `table_figures.compare`, on the training sets (the 2026 pages in `auto` out of
fold) or, with ``--test``, the test sets.

Rule 54 (shipped): the parse keeps their blocks and the decision drops them
(`guard.drop_dialogs`). Rule 53 (``--rule 53``, turned down): the parse walks past them as a
closed ``<dialog>``; the walk is then the Python one (``STREAM_CLEANER_NATIVE=0``, set here),
whose `parse.hidden_element` can be swapped, and the native walk gives the same blocks.

    PYTHONPATH=$PWD .venv/bin/python bench/dialog_roles.py [--rule 53] [--test]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rule", choices=("53", "54"), default="54")
    parser.add_argument("--test", action="store_true", help="the test sets, read once")
    parser.add_argument("--sets", help="only these sets, comma separated")
    args = parser.parse_args()
    if args.rule == "53":
        os.environ["STREAM_CLEANER_NATIVE"] = "0"
    from table_figures import TEST, TRAINING, compare

    from stream_cleaner import parse, pipeline

    def without() -> Callable[[], None]:
        """No dialog dropped: `pipeline.drop_dialogs` keeps the decision as it is."""
        shipped = pipeline.drop_dialogs
        pipeline.drop_dialogs = lambda content, dialogs: list(content)

        def undo() -> None:
            pipeline.drop_dialogs = shipped

        return undo

    def hidden() -> Callable[[], None]:
        """Rule 53: dialogs walked past as hidden elements (and so none to drop)."""
        undo_drop = without()
        shipped = parse.hidden_element
        parse.hidden_element = lambda tag, attributes: (
            shipped(tag, attributes) or parse.aria_dialog(attributes)
        )

        def undo() -> None:
            parse.hidden_element = shipped
            undo_drop()

        return undo

    sets = TEST if args.test else TRAINING
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    candidate = hidden if args.rule == "53" else (lambda: lambda: None)
    compare(sets, {"without": without, "with": candidate})


if __name__ == "__main__":
    main()
