"""Two code trees' `clean_document`, side by side: the same outputs? how much CPU a page?

One process per tree (its own checkout, its own native modules), all pinned to one core; the
pages go to them in small chunks, alternately, the order swapped every chunk, so the host's
speed swings (+-35 % minute to minute here) fall on both alike. Each process reports the CPU
time (``time.process_time``) of its chunk and a digest of every page's output: the kept text,
the language, the block kinds, the error, every sentence's fields and decision, the page's
perplexities and drop counts (their ``repr``, so 0 and 0.0, or -0.0, differ). Typical use, the
commit before a change against the checkout:

    git worktree add /tmp/before HEAD~3     # build its native modules: scripts/build_native.py
    .venv/bin/python bench/core_ab.py --tree /tmp/before --tree . --mode article --mode corpus

A tree listed second measures about 1.5 % faster than the same tree listed first (two copies
of one tree: 0.986), so a gain of a few percent is read from runs both ways round.

Two builds of the same native sources can differ by a few percent too (2026-11-30: the same
`_native` sources built in two worktrees, 1.028 and 1.031 both ways round, all stages alike,
parse and KenLM's scoring among them; with one tree's modules copied into the other, 1.000
and 1.003). When a change leaves ``stream_cleaner/_native`` alone, copy one tree's ``*.so``
into the other before reading a few percent.

A tree can name its own mode, ``--tree PATH@MODE``: one default against another, say the tree
where `corpus` was the default against today's `auto` (their outputs then differ, of course):

    .venv/bin/python bench/core_ab.py --tree /tmp/then@corpus --tree .@auto --sets modern2026

Prints, per mode, each tree's CPU ms per page (pages after a warm-up of --warm pages, which
are still compared), the ratio to the first tree, and how many pages' outputs differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = str(Path(__file__).resolve().parent)
CHILD = r"""
import hashlib, json, sys, time
MULTIBOILERNET = {"zh": "cleaneval/zh", "jp": "jp", "thai": "thai"}
from stream_cleaner import CleanerSettings, RawDocument, clean_document
from stream_cleaner.evaluate import read_cleaneval, read_pages

root, mode, sets, bench = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
raws = []
for name in sets:
    if name in ("dragnet", "modern2026"):
        pages = read_pages(f"{root}/{name}", layout="generic")
    elif name in MULTIBOILERNET:  # rebuilt from rows by this script's bench/, for every tree
        sys.path.insert(0, bench)
        from multilingual import load_set
        from multilingual_pipeline import page_html
        raws += [RawDocument(body=page_html(p)) for p in load_set(MULTIBOILERNET[name])]
        continue
    else:
        pages = read_cleaneval(f"{root}/cleaneval/{name.removeprefix('cleaneval-')}")
    raws += [RawDocument(body=p.raw) for p in pages]
settings = CleanerSettings().with_options(mode=mode)
print(len(raws), flush=True)


def digest(d):
    out = (d.text, d.language.code if d.language else None, d.block_kinds, d.error,
           tuple(tuple(s.to_dict().values()) for s in d.sentences), d.perplexity, d.dropped)
    return hashlib.sha1(repr(out).encode()).hexdigest()[:16]


for line in sys.stdin:
    start, end = map(int, line.split())
    cpu = time.process_time()
    docs = [clean_document(raw, settings=settings) for raw in raws[start:end]]
    cpu = time.process_time() - cpu
    print(json.dumps([cpu, [digest(d) for d in docs]]), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", action="append", required=True,
        help="a checkout (twice+), PATH@MODE for one run in MODE whatever --mode says",
    )  # fmt: skip
    parser.add_argument(
        "--mode", action="append", help="auto, corpus, article... (default: all three)"
    )
    parser.add_argument(
        "--sets", default="dragnet",
        help="dragnet,modern2026,cleaneval-dev,cleaneval-test; zh,jp,thai: MultiBoilerNet's "
        "pages rebuilt from their rows (bench/multilingual_pipeline.py)",
    )  # fmt: skip
    parser.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / ".cache"
                                              / "data"))  # fmt: skip
    parser.add_argument("--core", type=int, default=0, help="the core every process runs on")
    parser.add_argument("--chunk", type=int, default=10, help="pages a turn")
    parser.add_argument("--warm", type=int, default=200, help="pages not timed, first")
    parser.add_argument("--passes", type=int, default=1, help="timed passes over the pages")
    args = parser.parse_args()
    if len(args.tree) < 2:
        parser.error("give two trees or more")
    os.sched_setaffinity(0, {args.core})  # the children inherit it
    trees: list[Path] = []
    own: list[str | None] = []  # each tree's own mode, if it names one
    for spec in args.tree:
        path, at, tree_mode = spec.rpartition("@")
        trees.append(Path(path if at else spec).resolve())
        own.append(tree_mode if at else None)
    modes = args.mode or ["auto", "article", "corpus"]
    for mode in modes if None in own else ["/".join(m or "" for m in own)]:
        children = []
        for tree, tree_mode in zip(trees, own, strict=True):
            env = {**os.environ, "PYTHONPATH": str(tree)}
            children.append(subprocess.Popen(
                [sys.executable, "-c", CHILD, args.data, tree_mode or mode, args.sets, BENCH],
                cwd=tree, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            ))  # fmt: skip
        counts = {int(child.stdout.readline()) for child in children}  # type: ignore[union-attr]
        if len(counts) != 1:
            sys.exit(f"the trees read different page sets: {counts}")
        n = counts.pop()
        cpu = [0.0] * len(trees)
        differ: set[int] = set()
        chunks = [(i, min(i + args.chunk, n)) for i in range(0, n, args.chunk)]
        timed = [c for c in chunks if c[0] >= args.warm] * args.passes
        for turn, (start, end) in enumerate([c for c in chunks if c[0] < args.warm] + timed):
            order = list(range(len(trees)))
            if turn % 2:
                order.reverse()
            digests = {}
            for k in order:
                child = children[k]
                child.stdin.write(f"{start} {end}\n")  # type: ignore[union-attr]
                child.stdin.flush()  # type: ignore[union-attr]
                seconds, digests[k] = json.loads(child.stdout.readline())  # type: ignore[union-attr]
                if start >= args.warm:
                    cpu[k] += seconds
            for i in range(end - start):
                if len({digests[k][i] for k in digests}) > 1:
                    differ.add(start + i)
        for child in children:
            child.stdin.close()  # type: ignore[union-attr]
            child.wait()
        timed_pages = sum(end - start for start, end in timed)
        print(f"## {mode}: {n} pages ({args.sets}), {timed_pages} timed, core {args.core}")
        for tree, seconds in zip(trees, cpu, strict=True):
            print(f"{tree}: {seconds / timed_pages * 1e3:.3f} ms CPU a page "
                  f"({seconds / cpu[0]:.4f} of the first)")  # fmt: skip
        print(f"pages whose outputs differ: {len(differ)}", flush=True)


if __name__ == "__main__":
    main()
