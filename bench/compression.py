"""What each Kafka codec makes of the worker's output batches, and what it costs the worker.

Cleans the CleanEval test pages once, as the worker does (`record_batches.worker_outcomes`),
then writes every page's sentence records into 1 MiB record batches, as `patches.batches.BatchSend`
does, once per codec (``--compression`` of the worker): with the native builder, which the
worker uses for every codec, and with aiokafka's own builder for the same codec beside it.
aiokafka's reader must find the same records in every batch. Prints, per codec, the KiB a
page the batches take and the milliseconds a page of building them (the best of
``--repeat`` rounds), with the core's own time per page beside them: the worker builds its
batches on the event loop, which shares the GIL with the cleaning thread. The codecs run at
aiokafka's levels (gzip 9, lz4 9, zstd 3: Kafka's defaults for the last two).

    .venv/bin/python bench/compression.py [--limit N] [--repeat 3]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from record_batches import _records, bench_setup, with_aiokafka, with_native

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def main(argv: list[str] | None = None) -> int:
    setup = bench_setup(argv, __doc__.splitlines()[0], repeat=3)
    if setup is None:
        return 1
    args, module, outcomes, core = setup
    n = len(outcomes)
    core_ms = sum(core) / len(core) * 1000
    reference = _records(with_native(outcomes, module))
    print(f"CleanEval test, {n} documents, the sentence records in 1 MiB batches")
    print(
        "| codec | KiB a page | of uncompressed | native builder, ms a page "
        "| share of the core's time | aiokafka's builder, ms a page | the same records |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    plain_kib = None
    same_everywhere = True
    for name, codec in CODECS.items():
        best = {"native": float("inf"), "aiokafka": float("inf")}
        for _ in range(args.repeat):
            started = time.perf_counter()
            ours = with_native(outcomes, module, codec)
            best["native"] = min(best["native"], time.perf_counter() - started)
            started = time.perf_counter()
            theirs = with_aiokafka(outcomes, codec)
            best["aiokafka"] = min(best["aiokafka"], time.perf_counter() - started)
        same = _records(ours) == reference == _records(theirs)
        same_everywhere &= same
        kib = sum(map(len, ours)) / n / 1024
        plain_kib = plain_kib or kib
        native_ms, aiokafka_ms = (best[k] / n * 1000 for k in ("native", "aiokafka"))
        print(f"| {name} | {kib:.1f} | {kib / plain_kib:.0%} | {native_ms:.3f} "
              f"| {native_ms / core_ms:.1%} | {aiokafka_ms:.3f} | {same} |")  # fmt: skip
    print(f"the core (`clean_document`): {core_ms:.3f} ms a page")
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.exit(main())
