"""Run the image built by scripts/build-image-offline.sh against a real broker, once.

Starts a Tansu broker on 127.0.0.1, runs ``stream-cleaner topics create`` and then the worker
inside the image (``buildah run --isolation chroot``, which shares the host's network), feeds
the bundled sample pages with the host's ``stream-cleaner produce``, and prints /readyz and
the worker's counters once every page is cleaned. Everything it starts is stopped again.

Usage: .venv/bin/python scripts/smoke-image.py [TAG]     (as root, after the build)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from stream_cleaner.streaming.stack import free_port, tansu_broker

REPO = Path(__file__).resolve().parent.parent
STORE = REPO / ".cache" / "image-build"
BUILDAH = ["buildah", "--root", f"{STORE}/storage", "--runroot", f"{STORE}/run"]
BUILDAH += ["--storage-driver", "vfs"]
SAMPLES = REPO / "stream_cleaner" / "samples"


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=3) as response:
        return response.read().decode()


def _counters(text: str) -> dict[str, float]:
    wanted = ("stream_cleaner_documents_", "process_resident_memory_bytes")
    return {
        line.split()[0]: float(line.split()[1])
        for line in text.splitlines()
        if line.startswith(wanted) and not line.split()[0].endswith(("}", "_created"))
    }


def main(tag: str = "localhost/stream-cleaner:0.1.0") -> int:
    work = Path(tempfile.mkdtemp(prefix="smoke-image-"))
    with tansu_broker(work / "tansu.log", binary=str(REPO / ".cache/tansu/bin/tansu")) as broker:
        ctr = subprocess.run(
            [*BUILDAH, "from", tag], capture_output=True, text=True, check=True
        ).stdout.strip()
        port = free_port()
        env = [
            f"STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS={broker}",
            f"STREAM_CLEANER_WORKER_WEB_PORT={port}",
            "STREAM_CLEANER_WORKER_WEB_HOST=127.0.0.1",
        ]
        run = [*BUILDAH, "run", "--isolation", "chroot"]
        for variable in env:
            run += ["--env", variable]
        run += [ctr, "--", "stream-cleaner"]
        worker = None
        try:
            created = subprocess.run(
                [*run, "topics", "create", "--partitions", "2"],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            )
            print(created.stdout, end="")
            with (work / "worker.log").open("wb") as log:
                worker = subprocess.Popen(
                    [*run, "worker", "--no-create-topics"], stdout=log, stderr=subprocess.STDOUT
                )
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 90
            while True:
                try:
                    print("readyz:", _get(base + "/readyz"))
                    break
                except OSError:
                    if time.monotonic() > deadline or worker.poll() is not None:
                        print((work / "worker.log").read_text()[-3000:])
                        return 1
                    time.sleep(0.5)
            pages = len(list(SAMPLES.glob("*.html")))  # a directory walk passes over the README
            subprocess.run(
                [str(REPO / ".venv/bin/stream-cleaner"), "produce", str(SAMPLES),
                 "--bootstrap-servers", broker],
                check=True,
                timeout=60,
            )  # fmt: skip
            deadline = time.monotonic() + 60
            counters = _counters(_get(base + "/metrics"))
            while counters.get("stream_cleaner_documents_cleaned_total", 0) < pages:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.5)
                counters = _counters(_get(base + "/metrics"))
            for name, value in sorted(counters.items()):
                print(f"{name} {value:g}")
            return 0 if counters.get("stream_cleaner_documents_cleaned_total") == pages else 1
        finally:
            if worker is not None:
                # buildah run ends the process it runs with SIGKILL: no clean exit to check here
                worker.terminate()
                worker.wait(timeout=30)
            subprocess.run([*BUILDAH, "rm", ctr], capture_output=True, check=False)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
