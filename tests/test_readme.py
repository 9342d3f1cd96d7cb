"""Every example of the README runs as written.

Each line of its ``sh`` blocks and each ``python`` block is either run here, in a folder
that holds what the examples name (``pages/``, ``page.html``, ``crawl.warc.gz``,
``more.jsonl``, ``corpus.txt.xz``...) made from the bundled samples and the test data, or
listed in `ELSEWHERE` with the test that runs it or why nothing here can. A new example that
is neither fails `test_every_readme_example_is_run_or_accounted_for`.
"""

from __future__ import annotations

import base64
import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import DATA, REPO
from .streaming.conftest import tansu_binary

README = REPO / "README.md"
SAMPLES = REPO / "stream_cleaner" / "samples"
BIN = Path(sys.executable).parent

# Example lines not run by this file, by their start: where they are run, or why they cannot be.
ELSEWHERE = {
    "bash scripts/setup.sh": "CI runs both commands on a fresh clone (.ci/run)",
    "python -m pip install build": "tests/test_wheel.py builds the wheel this way",
    "python -m venv ~/sc": "tests/test_wheel.py installs it in a fresh venv outside the repo",
    "~/sc/bin/": "tests/test_wheel.py loads the native modules and cleans the samples",
    ".cache/bench-venv/bin/python bench/quality.py": "the benchmark venv and data (bench/)",
    "PYTHONPATH=$PWD .venv/bin/python bench/googletrends_pages.py": "the benchmark data",
    "stream-cleaner train-labeller .cache/data/": (
        "rewrites a shipped labeller from the benchmark data (minutes each); "
        "tests/test_labeller.py trains and cleans with train-labeller on a small page set"
    ),
    "STREAM_CLEANER_MODELS=de=/m/de.klm": "the worker with the models of the line before",
    "docker ": "no container runtime here; tests/deploy checks the Dockerfile",
    "helm ": "no Kubernetes here; tests/deploy/test_chart.py renders the chart with its values",
    "kubectl ": "no Kubernetes here",
}
# The lines test_the_worker_examples_run_against_a_broker runs (they need a broker).
BROKER_COMMANDS = ("topics create", "worker", "produce", "tail")


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def _commands() -> list[str]:
    """Every command of the README's sh blocks: comments cut, continuation lines joined."""
    commands = []
    for block in _blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command:
                commands.append(re.sub(r"\s+", " ", command))
    return commands


def _elsewhere(command: str) -> bool:
    return any(command.startswith(start) for start in ELSEWHERE)


def _serves(command: str) -> bool:
    """The web demo's lines: the server, then the requests to it."""
    return command.startswith(("stream-cleaner serve", "curl "))


def _needs_broker(command: str) -> bool:
    words = command.replace(".venv/bin/", "").split()
    return words[0] == "stream-cleaner" and any(
        " ".join(words[1:]).startswith(c) for c in BROKER_COMMANDS
    )


def _world(root: Path) -> Path:
    """A folder holding what the examples name, made from the samples and the test data."""
    pages = sorted(SAMPLES.glob("*.html"))
    (root / "pages").mkdir(parents=True)
    for page in pages:
        shutil.copy(page, root / "pages" / page.name)
    shutil.copytree(SAMPLES, root / "stream_cleaner" / "samples")
    shutil.copy(SAMPLES / "news-article.html", root / "page.html")
    with (root / "more.jsonl").open("w", encoding="utf-8") as out:
        for page in pages:
            record = {"id": page.stem, "url": f"https://example.org/{page.name}"}
            body = base64.b64encode(page.read_bytes()).decode()
            out.write(json.dumps({**record, "body_base64": body}) + "\n")
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with (root / "crawl.warc.gz").open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for page in pages:
            http = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            with page.open("rb") as body:
                writer.write_record(
                    writer.create_warc_record(
                        f"https://example.org/{page.name}",
                        "response",
                        payload=body,
                        http_headers=http,
                    )
                )
    corpus = (DATA / "tiny-corpus.txt").read_bytes()
    for name in ("corpus.txt.xz", "dewiki.txt.xz"):
        (root / name).write_bytes(lzma.compress(corpus))
    shutil.copytree(DATA / "eval" / "cleaneval", root / "cleaneval" / "dev")
    shutil.copytree(DATA / "eval" / "cleaneval", root / ".cache" / "data" / "cleaneval" / "test")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "stream-cleaner").symlink_to(BIN / "stream-cleaner")
    return root


def _environment() -> dict[str, str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    return env


def test_every_readme_example_is_run_or_accounted_for():
    commands = _commands()
    assert len(commands) > 25 and len(_blocks("python")) == 3
    for command in commands:
        assert (
            _elsewhere(command)
            or _needs_broker(command)
            or _serves(command)
            or command.split()[0] in ("stream-cleaner", ".venv/bin/stream-cleaner")
        ), f"a README example nothing runs: {command!r} (run it here or say where in ELSEWHERE)"
    for start in ELSEWHERE:  # no stale entry
        assert any(c.startswith(start) for c in commands), f"no README line starts {start!r}"


@pytest.mark.lmplz
def test_the_readmes_command_lines_run_as_written(tmp_path):
    world = _world(tmp_path / "world")
    commands = [c for c in _commands() if not _elsewhere(c) and not _needs_broker(c)]
    local = [c for c in commands if not _serves(c)]
    # models are trained before the lines that use them; the French one is a copy
    local.sort(key=lambda c: "train-lm" not in c)
    env = _environment()
    for command in local:
        _run(command, world, env, timeout=600)
        if command.startswith("stream-cleaner train-lm corpus.txt.xz"):
            shutil.copy(world / "my.klm", world / "fr.klm")
    records = [json.loads(x) for x in (world / "out.jsonl").read_text().splitlines()]
    pages = len(list(SAMPLES.glob("*.html")))
    assert len(records) == 3 * pages and all(not r.get("error") for r in records)
    assert len((world / "cleaned.jsonl").read_text().splitlines()) == pages
    assert len(list((world / "cleaned").rglob("*.txt"))) == pages
    assert (world / "cleaned.warc.gz").stat().st_size > 1000
    assert any("<p>" in p.read_text() for p in (world / "out").rglob("*.txt"))
    assert (world / "de.klm").is_file() and (world / "labeller-corpus.json").is_file()
    # the web demo's lines: the server on a free port, then each request to it
    from stream_cleaner.streaming.stack import free_port

    (server, *requests) = [c for c in commands if _serves(c)]
    (world / "models").mkdir()
    shutil.copy(world / "de.klm", world / "models" / "de.klm")
    port = str(free_port())
    serve = subprocess.Popen(
        server.replace("--port 8080", f"--port {port}"),
        shell=True,
        cwd=world,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", "", serve)
        answers = []
        for command in requests:
            answers.append(json.loads(_run(command.replace(":8080", f":{port}"), world, env)))
    finally:
        _stop(serve)
    assert answers[0]["text"] == "The council met." and answers[1]["perplexity"] > 0


def test_the_readmes_python_examples_run_as_written(tmp_path):
    world = _world(tmp_path / "world")
    first, api, pyplexity = _blocks("python")
    # what the examples take as given: a page's bytes, a page's text
    given = {
        api: 'html_bytes = open("page.html", "rb").read()\n',
        pyplexity: 'text_or_html = open("page.html", encoding="utf-8").read()\n',
    }
    printed = []
    for block in (first, api, pyplexity):
        # -P: the copied samples' folder is named stream_cleaner too: it must not shadow it
        run = subprocess.run(
            [sys.executable, "-P", "-c", given.get(block, "") + block],
            cwd=world,
            env=_environment(),
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert run.returncode == 0, f"{block}\n{run.stderr[-3000:]}"
        printed.append(run.stdout)
    assert len(printed[0]) > 200 and "article" in printed[0]  # the text, the page type
    assert printed[1:] == ["", ""]


def _run(command: str, world: Path, env: dict[str, str], timeout: float = 120) -> str:
    """Run a README line in ``world`` as a shell would; its stdout, once it exited 0."""
    run = subprocess.run(
        command, shell=True, cwd=world, env=env, capture_output=True, text=True, check=False,
        timeout=timeout,
    )  # fmt: skip
    assert run.returncode == 0, f"{command}\n{run.stderr[-3000:]}"
    return run.stdout


def _wait_for(url: str, text: str, worker: subprocess.Popen, seconds: float = 180) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert worker.poll() is None, "the worker exited"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if text in answer.read().decode():
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} did not show {text!r} within {seconds} s")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process group a test started, then SIGKILL after 30 s."""
    os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.broker
def test_the_worker_examples_run_against_a_broker(tmp_path):
    """The worker's lines of "In three lines each" and of "Streaming worker", against a
    broker of their own (the examples use the default topic names), ``kafka:9092`` and
    ``127.0.0.1:9092`` read as its address and the web port as a free one."""
    from stream_cleaner.streaming.stack import free_port, tansu_broker

    tansu = tansu_binary()
    world = _world(tmp_path / "world")
    commands = [c for c in _commands() if _needs_broker(c) and not _elsewhere(c)]
    assert len(commands) == 7
    env = {**_environment(), "STREAM_CLEANER_WORKER_WEB_HOST": "127.0.0.1"}
    with tansu_broker(tmp_path / "broker.log", binary=tansu) as address:
        port = str(free_port())

        def as_here(command: str) -> str:
            command = command.replace("kafka:9092", address).replace("127.0.0.1:9092", address)
            return command.replace("--web-port 6066", f"--web-port {port}")

        workers = [c for c in commands if " worker " in f" {c} "]
        others = [c for c in commands if c not in workers]
        creates = [c for c in others if "topics create" in c]
        for command in creates:  # the second finds them there: nothing to do, exit 0
            _run(as_here(command), world, env)
        log = (tmp_path / "worker.log").open("w")
        worker = subprocess.Popen(
            as_here(workers[-1]),
            shell=True,
            cwd=world,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            # as a user would, in a second shell: until the worker holds its partitions
            _wait_for(f"http://127.0.0.1:{port}/metrics", "stream_cleaner_consumer_lag{", worker)
            for command in others:
                if command in creates:
                    continue
                out = _run(as_here(command), world, env, timeout=240)
                if " tail " in f" {command} ":
                    tailed = [json.loads(x) for x in out.splitlines() if x.strip()]
                    assert len(tailed) == 5 and all(d["value"]["text"] for d in tailed)
        finally:
            _stop(worker)
            log.close()
    assert "Traceback" not in (tmp_path / "worker.log").read_text()
