"""The aiokafka and faust-streaming releases the worker allows: one range, in
`patches.versions.SUPPORTED`, that pyproject.toml repeats, that the worker enforces at start, and
whose both ends CI runs the broker tests at (the highest in this venv, the lowest in
.cache/venv-lowest-clients, built by scripts/install-lowest-clients.sh)."""

from __future__ import annotations

import logging
import os
import subprocess
import tomllib

import pytest
from packaging.requirements import Requirement

from stream_cleaner.cli import main
from stream_cleaner.streaming.patches import versions as gate
from stream_cleaner.streaming.patches.versions import (
    ALLOW_UNTESTED_ENV,
    ALLOW_UNTESTED_FLAG,
    SUPPORTED,
    UntestedClients,
    installed_versions,
    require_tested,
    untested,
)

from ..conftest import DATA, REPO

LOWEST_VENV = REPO / ".cache" / "venv-lowest-clients"
# the broker tests of the lowest end, run in a pytest of their own (about four minutes)
LOWEST_END_SECONDS = 1200


def test_pyproject_allows_exactly_the_tested_range() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = [
        Requirement(text)
        for group in [project["dependencies"], *project["optional-dependencies"].values()]
        for text in group
    ]
    for name, (lowest, highest) in SUPPORTED.items():
        [found] = [r for r in requirements if r.name == name]
        assert {(s.operator, s.version) for s in found.specifier} == {
            (">=", lowest),
            ("<=", highest),
        }, f"pyproject.toml's {found} is not versions.SUPPORTED's {lowest} to {highest}"


@pytest.mark.parametrize(
    ("installed", "outside"),
    [
        ({"aiokafka": "0.13.0", "faust-streaming": "0.15.3"}, {}),
        ({"aiokafka": "0.14", "faust-streaming": "0.12.0"}, {}),
        ({"aiokafka": "0.13.1", "faust-streaming": "0.13.2"}, {}),
        ({"aiokafka": "0.12.0", "faust-streaming": "0.15.3"}, {"aiokafka": "0.12.0"}),
        ({"aiokafka": "0.14.1", "faust-streaming": "0.11.3"},
         {"aiokafka": "0.14.1", "faust-streaming": "0.11.3"}),
        ({"aiokafka": "0.15.0rc1", "faust-streaming": "0.15.3"}, {"aiokafka": "0.15.0rc1"}),
        ({"aiokafka": "0.14.0.post1", "faust-streaming": "0.15.3"},
         {"aiokafka": "0.14.0.post1"}),
        ({"aiokafka": "0.14.0+local", "faust-streaming": None},
         {"aiokafka": "0.14.0+local", "faust-streaming": None}),
    ],
)  # fmt: skip
def test_releases_outside_the_range_are_untested(installed: dict, outside: dict) -> None:
    assert untested(installed) == outside


def _installed(monkeypatch: pytest.MonkeyPatch, **versions: str) -> None:
    found = {name: highest for name, (_, highest) in SUPPORTED.items()}
    found.update({name.replace("_", "-"): version for name, version in versions.items()})
    monkeypatch.setattr(gate, "installed_versions", lambda: found)


def test_the_gate_names_the_releases_and_the_way_to_accept_the_risk(monkeypatch, caplog) -> None:
    _installed(monkeypatch, aiokafka="0.12.0", faust_streaming="0.16.0")
    with pytest.raises(UntestedClients) as refused:
        require_tested()
    message = str(refused.value)
    assert "aiokafka 0.12.0 (tested: 0.13.0 to 0.14.0)" in message
    assert "faust-streaming 0.16.0 (tested: 0.12.0 to 0.15.3)" in message
    assert ALLOW_UNTESTED_FLAG in message and ALLOW_UNTESTED_ENV in message
    monkeypatch.setattr(gate, "_WARNED", [])
    with caplog.at_level(logging.WARNING):
        require_tested(allow_untested=True)
        require_tested(allow_untested=True)
    assert [r.getMessage().count("aiokafka 0.12.0") for r in caplog.records] == [1]  # once


def test_a_worker_with_untested_clients_refuses_to_start(monkeypatch, capsys) -> None:
    """Before it loads a model or asks for a broker (nothing listens at port 9)."""
    _installed(monkeypatch, aiokafka="0.12.0")
    loaded = []
    monkeypatch.setattr("stream_cleaner.streaming.agents.load_models_now", loaded.append)
    argv = ["worker", "--bootstrap-servers", "127.0.0.1:9", "--model", str(DATA / "tiny.arpa"),
            "--broker-wait", "0", "--timeout", "1", "--no-create-topics"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "aiokafka 0.12.0 (tested: 0.13.0 to 0.14.0)" in err
    assert loaded == []

    # accepted, by flag or by environment: the worker goes on (to the broker that is not there)
    monkeypatch.setattr(gate, "_WARNED", [])
    assert main([*argv, ALLOW_UNTESTED_FLAG]) == 1
    assert "tested: 0.13.0" not in capsys.readouterr().err
    assert len(loaded) == 1
    monkeypatch.setenv(ALLOW_UNTESTED_ENV, "true")
    assert main(argv) == 1
    assert "tested: 0.13.0" not in capsys.readouterr().err
    assert len(loaded) == 2


def test_the_app_refuses_untested_clients_too(monkeypatch) -> None:
    """``faust -A stream_cleaner.streaming.app worker`` builds the app without the CLI."""
    from stream_cleaner.streaming.app import WorkerSettings, create_app

    _installed(monkeypatch, faust_streaming="0.11.3")
    with pytest.raises(UntestedClients, match=r"faust-streaming 0\.11\.3"):
        create_app(WorkerSettings())


def test_this_venv_runs_the_highest_releases_allowed() -> None:
    """CI's highest end: a fresh scripts/setup.sh installs the newest release under each
    ceiling, and the ceilings are releases (so the broker tests here run at them)."""
    highest = {name: top for name, (_, top) in SUPPORTED.items()}
    assert installed_versions() == highest, (
        "this venv is not at the highest releases allowed: pip install -e '.[stream]' "
        f"--upgrade, or run scripts/setup.sh in a fresh clone ({installed_versions()})"
    )


@pytest.mark.broker
@pytest.mark.slow
def test_the_broker_tests_pass_at_the_lowest_releases_allowed() -> None:
    """The broker tests marked ``kafka_clients`` (no page lost with a worker killed, workers
    churning, the broker losing its data, every outcome with both record readers) run again
    in the lowest-end venv, at the floors of `SUPPORTED`."""
    python = LOWEST_VENV / "bin" / "python"
    if not python.exists():
        message = f"{LOWEST_VENV} is missing: run bash scripts/install-lowest-clients.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    code = "from stream_cleaner.streaming.patches.versions import installed_versions; " \
        "print(installed_versions())"  # fmt: skip
    found = subprocess.run([python, "-c", code], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.strip()  # fmt: skip
    lowest = {name: low for name, (low, _) in SUPPORTED.items()}
    assert found == str(lowest), f"{LOWEST_VENV} holds {found}: run its install script again"
    command = [str(python), "-m", "pytest", "-m", "kafka_clients", "-p", "no:cacheprovider", "-q",
               "tests/streaming/test_worker_broker.py"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=LOWEST_END_SECONDS, check=False)  # fmt: skip
    assert done.returncode == 0, f"at {lowest}:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    assert " passed" in done.stdout and " deselected" in done.stdout, done.stdout[-2000:]
