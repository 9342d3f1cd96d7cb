"""Rules 52 and 55 (bench/auto_training.py): the content-loss guard's run of prose with 2
(shipped), 4 or 8 other blocks allowed between two of its blocks (`guard.MAX_RUN_GAP`); with
``--code`` (rule 55), blocks of code counted among them or not (`guard.GAP_FREE_COLUMNS`);
with ``--lead-ins`` (rule 56), the block before a block of code (`guard.GAP_FREE_LEAD_INS`);
with ``--unlinked`` (rules 57 and 58), unlinked headings and list items counted or not
(`guard.GAP_FREE_UNLINKED_COLUMNS`), in every mode (rule 57: ``--modes auto,corpus,article``)
or in the shipped `guard.GAP_FREE_UNLINKED_MODES` (rule 58); with ``--colons`` (rule 59), a block
ending with a colon joining the run or not, in every mode (`guard.RUN_ENDS_WITH_COLON`); with
``--corpus-join`` (rule 61), `guard.join_corpus` in `auto` alone or in `article` too; with
``--corpus-join-empty`` (rule 62), in `article` where its decision keeps no word, or not.
Each variant in one process, on the training sets (the 2026 pages in `auto` out of fold) or,
with ``--test``, the test sets; the columns of `table_figures.compare`.

    PYTHONPATH=$PWD .venv/bin/python bench/run_gap.py [--test] [--gaps 2,4,8 | --code | --lead-ins]
    PYTHONPATH=$PWD .venv/bin/python bench/run_gap.py [--test] --unlinked [--modes MODES] | --colons
    PYTHONPATH=$PWD .venv/bin/python bench/run_gap.py [--test] --corpus-join | --corpus-join-empty
"""

from __future__ import annotations

import argparse

from table_figures import TEST, TRAINING, compare, guard_setting

from stream_cleaner import guard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test", action="store_true", help="the test sets, read once")
    parser.add_argument("--gaps", default="2,4,8", help="the gaps, the shipped one first")
    parser.add_argument("--code", action="store_true", help="rule 55: code counted or not")
    parser.add_argument("--lead-ins", action="store_true", help="rule 56: lead-ins to code")
    parser.add_argument("--unlinked", action="store_true", help="rules 57, 58: headings, lists")
    parser.add_argument("--colons", action="store_true", help="rule 59: colons end a run's block")
    parser.add_argument("--modes", help="with --unlinked, the modes it applies in")
    parser.add_argument("--corpus-join", action="store_true", help="rule 61: join in article")
    parser.add_argument(
        "--corpus-join-empty", action="store_true", help="rule 62: join an empty article"
    )
    args = parser.parse_args()
    sets = TEST if args.test else TRAINING
    if args.corpus_join_empty:
        compare(sets, {"no": guard_setting("CORPUS_JOIN_EMPTY_MODES", ()),
                       "yes": guard_setting("CORPUS_JOIN_EMPTY_MODES", ("article",))})  # fmt: skip
    elif args.corpus_join:
        both = ("auto", "article")
        compare(sets, {"auto": guard_setting("CORPUS_JOIN_MODES", ("auto",)),
                       "article": guard_setting("CORPUS_JOIN_MODES", both)})  # fmt: skip
    elif args.colons:
        compare(sets, {"no": guard_setting("RUN_ENDS_WITH_COLON", False),
                       "yes": guard_setting("RUN_ENDS_WITH_COLON", True)})  # fmt: skip
    elif args.unlinked:
        modes = tuple(args.modes.split(",")) if args.modes else guard.GAP_FREE_UNLINKED_MODES
        compare(sets, {"counted": guard_setting("GAP_FREE_UNLINKED_MODES", ()),
                       "not": guard_setting("GAP_FREE_UNLINKED_MODES", modes)})  # fmt: skip
    elif args.lead_ins:
        compare(sets, {"counted": guard_setting("GAP_FREE_LEAD_INS", False),
                       "not": guard_setting("GAP_FREE_LEAD_INS", True)})  # fmt: skip
    elif args.code:
        shipped = guard.GAP_FREE_COLUMNS
        compare(sets, {"counted": guard_setting("GAP_FREE_COLUMNS", ()),
                       "not": guard_setting("GAP_FREE_COLUMNS", shipped)})  # fmt: skip
    else:
        compare(sets, {g: guard_setting("MAX_RUN_GAP", int(g)) for g in args.gaps.split(",")})


if __name__ == "__main__":
    main()
