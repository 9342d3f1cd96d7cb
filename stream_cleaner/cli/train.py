"""``train-lm`` and ``train-labeller``: the language model and the block labellers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ..settings import LABELLER_MODES
from .options import CommandParser, add_model_option, load_lm


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "train-lm",
        help="train a KenLM model on a text corpus",
        description="Normalise a corpus with the cleaner's own normalisation, train a KenLM "
        "model with lmplz and write a binary (build_binary) plus a JSON sidecar. Any language "
        "works: give a corpus of that language, one paragraph or sentence per line (plain, "
        ".xz, .gz or .bz2; WikiExtractor <doc> lines are skipped).",
        add_options=_train_lm_options,
    ).set_defaults(handler=_cmd_train_lm)
    add_command(
        "train-labeller",
        help="train the block labeller of a mode on pages with gold text",
        description="Cut and score every page of the given page sets as `clean` does, label "
        "each block content or boilerplate by aligning its words with the gold text, fit a "
        "gradient-boosted tree ensemble (needs the 'train' extra: lightgbm) and write it as "
        "JSON with a .meta.json sidecar of what it was trained on. A page set is a directory "
        "with html/NAME.html and gold/NAME.txt (CleanEval's layout), or a folder of the web "
        "demo's annotation files (*.json), whose pages are read from --pages-dir.",
        add_options=_train_labeller_options,
    ).set_defaults(handler=_cmd_train_labeller)


def _train_lm_options(p: CommandParser) -> None:
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
    p.add_argument("--memory", default="40%", help="lmplz sort memory (default %(default)s)")


def _train_labeller_options(p: CommandParser) -> None:
    from ..labeller import UNSCORED_LOG_PPL
    from ..training import (
        BOILERPLATE_CONTAINERS_BY_MODE,
        UNSCORED_LOG_PPL_BY_MODE,
        WEIGHTS,
        WEIGHTS_BY_MODE,
    )

    def by_mode(values: dict[str, object], otherwise: str) -> str:
        return ", ".join(f"{value} for {mode}" for mode, value in values.items()) + otherwise

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
        + by_mode(
            {m: ",".join(tags) for m, tags in BOILERPLATE_CONTAINERS_BY_MODE.items()},
            ", none otherwise; '' = none)",
        ),
    )
    p.add_argument(
        "--unscored-log-ppl",
        type=float,
        metavar="X",
        help="the log10 perplexity the features get for sentences no model scores, a page in "
        "a language without a model (default: "
        + by_mode(UNSCORED_LOG_PPL_BY_MODE, f", {UNSCORED_LOG_PPL} otherwise)"),
    )
    p.add_argument(
        "--folds",
        type=int,
        default=5,
        help="page-grouped folds that choose the decision threshold (default %(default)s; 0 = "
        "none)",
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
    p.add_argument(
        "--weights",
        choices=WEIGHTS,
        help="how the blocks weigh: by their words (blocks), scaled so that each page set "
        "weighs the same (sets), each page (pages), or each page within its set and each set "
        "(sets+pages) (default: " + by_mode(WEIGHTS_BY_MODE, ", blocks otherwise)"),
    )
    add_model_option(p)


def _cmd_train_lm(args: argparse.Namespace) -> int:
    from ..lm import train_lm

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
    from ..labeller import labeller_path
    from ..training import train_labeller

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
        model=load_lm(args.model),
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
        weights=args.weights,
    )
    cv = meta["cv_macro_f1"]
    print(
        f"wrote {output} ({meta['pages']} pages, {meta['blocks']} blocks, "
        f"{meta['content_blocks']} content; threshold {meta['threshold']:g}"
        + (f", cross-validated macro F1 {cv:.4f}" if cv is not None else "")
        + f") and {output}.meta.json"
    )
    return 0
