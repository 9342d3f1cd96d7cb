"""The Dockerfile: hadolint finds nothing, and the image is built the way the chart expects
(non-root UID, the worker's web port, the worker as the command, nothing but the package in
the build context). No Docker daemon runs here, so the image itself is not built by the tests.
"""

from __future__ import annotations

import re
import subprocess

from stream_cleaner.streaming.settings import WEB_PORT_DEFAULT

from ..conftest import REPO
from .conftest import need_tool

DOCKERFILE = REPO / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_hadolint_finds_nothing() -> None:
    hadolint = need_tool("hadolint")
    # style is the lowest level: any finding at all fails; each ignore is justified inline
    result = subprocess.run(
        [hadolint, "--failure-threshold", "style", "--no-color", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_two_stages_and_a_runtime_without_compilers() -> None:
    steps = _instructions()
    stages = [i for i, (word, _) in enumerate(steps) if word == "FROM"]
    assert [steps[i][1] for i in stages] == [
        "${PYTHON_IMAGE} AS build",
        "${PYTHON_IMAGE} AS runtime",
    ]
    runtime = steps[stages[1] :]
    runtime_runs = " ".join(args for word, args in runtime if word == "RUN")
    assert "apt-get" not in runtime_runs and "pip" not in runtime_runs
    assert ("COPY", "--from=build /opt/stream-cleaner /opt/stream-cleaner") in runtime
    build_runs = " ".join(args for word, args in steps[: stages[1]] if word == "RUN")
    assert (
        "build-essential" in build_runs
        and 'pip wheel --wheel-dir /wheels ".[stream]"' in build_runs
        # every native module loads in the venv the runtime stage gets, or the build fails
        and build_runs.endswith("/opt/stream-cleaner/bin/python -m stream_cleaner._native")
    )


def test_runtime_user_port_healthcheck_and_command() -> None:
    runtime = _instructions()
    runtime = runtime[[w for w, _ in runtime].index("FROM", 1) :]
    words = dict(runtime)
    assert words["USER"] == "10001:10001"  # numeric: runAsNonRoot can check it
    assert words["EXPOSE"] == str(WEB_PORT_DEFAULT)
    assert "/healthz" in words["HEALTHCHECK"]
    assert words["ENTRYPOINT"] == '["stream-cleaner"]'
    assert words["CMD"] == '["worker"]'
    assert "PYTHONDONTWRITEBYTECODE=1" in words["ENV"]  # the root filesystem is read-only
    labels = words["LABEL"]
    for key in ("title", "description", "version", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels


def test_build_context_is_the_package_only() -> None:
    lines = [
        line
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines[0] == "*"  # everything out (caches, data, .venv, tests, bench, helm)...
    included = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    # ...but what the wheel is built from (it compiles the native speed-ups in the build stage)
    assert included == {
        "pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "stream_cleaner",
        "scripts/build_native.py",
    }  # fmt: skip
    # every COPY from the context is of an included path
    for word, args in _instructions():
        if word == "COPY" and not args.startswith("--from"):
            sources = args.split()[:-1]
            assert {s.rstrip("/") for s in sources} <= included, args
    # the default model ships inside the package, so inside the image
    assert (REPO / "stream_cleaner" / "models" / "en-wiki-bigram.klm").is_file()
