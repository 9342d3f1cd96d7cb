"""The patches of the Kafka clients' internals: one package, behind the version gate, each
naming the tests that show it; and the worker's modules importing each other one way."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from graphlib import CycleError, TopologicalSorter
from importlib import import_module
from pathlib import Path

import pytest

from ..conftest import REPO

STREAMING = REPO / "stream_cleaner" / "streaming"
PATCHES = ("offsets", "header_names", "produce_requests", "batches")


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, root: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports anywhere: at the top, inside functions
    and under ``TYPE_CHECKING`` alike (a name imported from a package counts as its module
    when it is one)."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = node.module or ""
            if node.level:
                target = f"{base}.{node.module}" if node.module else base
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {module for module in found if module in modules and module != name}


def import_graph(package: Path, root: Path = REPO) -> dict[str, set[str]]:
    """Each module of ``package`` (a directory under ``root``) -> the modules of ``package``
    it imports."""
    paths = sorted(package.rglob("*.py"))
    modules = {_module_name(path, root) for path in paths}
    return {_module_name(path, root): _imported(path, root, modules) for path in paths}


def test_the_streaming_modules_import_each_other_one_way() -> None:
    graph = import_graph(STREAMING)
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"an import cycle: {' -> '.join(exc.args[1])}")
    agents, app, views, runtime = (
        f"stream_cleaner.streaming.{name}" for name in ("agents", "app", "views", "runtime")
    )
    assert runtime in graph[agents] and runtime in graph[views]
    assert {agents, views, runtime} <= graph[app]
    assert order.index(agents) < order.index(app) and order.index(views) < order.index(app)


def test_the_import_graph_shows_a_cycle_through_type_checking_and_functions(
    tmp_path: Path,
) -> None:
    """The check above reads what made the old circle: app importing agents inside a
    function, agents importing app's runtime only under TYPE_CHECKING."""
    package = tmp_path / "stream_cleaner" / "streaming"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "app.py").write_text("def create_app():\n    from . import agents\n")
    (package / "agents.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .app import Runtime\n"
    )
    graph = import_graph(package, tmp_path)
    assert "stream_cleaner.streaming.agents" in graph["stream_cleaner.streaming.app"]
    with pytest.raises(CycleError):
        list(TopologicalSorter(graph).static_order())


# what only a patch may touch: aiokafka's and Faust's private names the patches replace, wrap
# or read (not the public API, nor Faust's consumer state read by `app.measure_consumer_lag`
# and `views.readiness`, nor the Prometheus monitor of `sensors`)
_PATCH_ONLY = re.compile(
    r"_serialize\(|\._builder\b|_relative_offset|_message_accumulator|MemoryRecords|"
    r"ProduceRequest|AIOKafkaConnection|transport\.Consumer\s*=|_unpack_records|_new_offset"
)


def test_only_the_patches_touch_the_clients_internals_they_patch() -> None:
    outside = {
        str(path.relative_to(REPO)): sorted(set(_PATCH_ONLY.findall(path.read_text())))
        for path in STREAMING.rglob("*.py")
        if "patches" not in path.parts
    }
    assert {path: found for path, found in outside.items() if found} == {}


@pytest.mark.parametrize("name", PATCHES)
def test_each_patch_names_the_tests_that_show_it(name: str) -> None:
    """Its docstring names the upstream behaviour (the library), the private names and the
    tests; every test file it names exists and every test it names is in one of them."""
    doc = import_module(f"stream_cleaner.streaming.patches.{name}").__doc__ or ""
    flat = " ".join(doc.split())
    assert "Private names" in flat and "Tests:" in flat
    assert "aiokafka" in flat or "faust" in flat.lower()
    files = [REPO / path for path in re.findall(r"tests/[\w/]+\.py", flat)]
    assert files and all(path.exists() for path in files), files
    defined = "\n".join(path.read_text() for path in files)
    for test in re.findall(r"``(test_\w+)``", doc):
        assert re.search(rf"^def {test}\(", defined, re.MULTILINE), f"{name} names {test}"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter: the gate and the patches are per process."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


def test_no_patch_installs_before_the_gate_was_checked() -> None:
    done = _run(
        """
        from aiokafka import conn
        from aiokafka.consumer import fetcher
        from aiokafka.producer import sender
        from faust.transport.drivers.aiokafka import Consumer

        from stream_cleaner.streaming.patches import batches, header_names, offsets
        from stream_cleaner.streaming.patches import produce_requests

        before = (fetcher.MemoryRecords, sender.ProduceRequest, conn.AIOKafkaConnection.send)
        attempts = [
            header_names.install,
            produce_requests.install,
            lambda: offsets.guarded(Consumer),
            lambda: offsets.fetching_within(Consumer, 0.1),
            lambda: batches.BatchSend(None, {}),
        ]
        for attempt in attempts:
            try:
                attempt()
            except RuntimeError as exc:
                assert "were not checked" in str(exc), exc
            else:
                raise AssertionError(f"{attempt} ran without the gate")
        after = (fetcher.MemoryRecords, sender.ProduceRequest, conn.AIOKafkaConnection.send)
        assert after == before
        print("refused")
        """
    )
    assert done.returncode == 0 and done.stdout.strip() == "refused", done.stderr[-3000:]


def test_install_refuses_untested_clients_and_patches_nothing() -> None:
    done = _run(
        """
        from aiokafka import conn
        from aiokafka.consumer import fetcher
        from aiokafka.producer import sender

        from stream_cleaner.streaming import patches
        from stream_cleaner.streaming.patches import versions

        versions.installed_versions = lambda: {"aiokafka": "0.12.0", "faust-streaming": "0.15.3"}
        before = (fetcher.MemoryRecords, sender.ProduceRequest, conn.AIOKafkaConnection.send)
        try:
            patches.install()
        except patches.UntestedClients as exc:
            assert "aiokafka 0.12.0" in str(exc), exc
        else:
            raise AssertionError("installed with an untested aiokafka")
        after = (fetcher.MemoryRecords, sender.ProduceRequest, conn.AIOKafkaConnection.send)
        assert after == before
        patches.install(allow_untested=True)  # told to accept the risk: patched
        assert fetcher.MemoryRecords is not before[0]
        assert sender.ProduceRequest is not before[1]
        print("refused, then installed")
        """
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "refused, then installed"
