"""The wheel: built from the sdist with ``python -m build`` (the native modules compile at build
time), installed with its ``stream`` extra into a fresh virtualenv outside the repository, its
native modules load there, and it cleans the bundled samples as the source tree does.

It builds and installs for real (PyPI for the dependencies and the pinned sdists), a few
minutes: marked slow, and run by CI with the rest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from stream_cleaner._native import MODULES, native_module

from .conftest import REPO, SAMPLES

pytestmark = pytest.mark.slow

# Run in the fresh venv, from outside the repository: where the package comes from, which
# native modules load, and what the log says.
PROBE = """
import json, logging, sys
logging.basicConfig(level=logging.WARNING)
import stream_cleaner
from stream_cleaner._native import MODULES, native_module
print(json.dumps({"file": stream_cleaner.__file__,
                  "loaded": [name for name in MODULES if native_module(name) is not None]}))
"""


def _pins() -> dict[str, str]:
    """selectolax's and kenlm's versions as pyproject.toml pins them (==)."""
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pairs = [d.split(" ")[0].split("==") for d in dependencies]
    return {p[0]: p[1] for p in pairs if p[0] in ("selectolax", "kenlm") and len(p) == 2}


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """Run ``command``; a failure shows the end of its output."""
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    return done


def _records(jsonl: Path) -> dict[str, dict]:
    """Records by page file name, without what depends on where the page is or the clock."""
    records = {}
    for line in jsonl.read_text().splitlines():
        record = json.loads(line)
        for key in ("seconds", "id", "origin"):
            record.pop(key, None)
        records[Path(json.loads(line)["id"]).name] = record
    return records


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory) -> tuple[Path, Path]:
    """(wheel, venv): the wheel built from this tree, installed into a new venv."""
    work = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(REPO)], work, 1800)
    (wheel,) = (work / "dist").glob("stream_cleaner-*.whl")
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], work, 300)
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "--disable-pip-version-check"]
    _run([*pip, f"{wheel}[stream]"], work, 1800)
    return wheel, venv


def test_the_wheel_carries_native_modules_for_the_pinned_versions(installed_wheel):
    wheel, _ = installed_wheel
    pins = _pins()
    assert set(pins) == {"selectolax", "kenlm"}
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        built_for = json.loads(archive.read("stream_cleaner/_native/built_for.json"))
        metadata = archive.read(f"stream_cleaner-{wheel.name.split('-')[1]}.dist-info/METADATA")
    compiled = {Path(n).name.split(".")[0] for n in names if n.endswith(".so")}
    assert compiled == set(MODULES)
    from stream_cleaner._native import SOURCES_KEY, source_digest

    assert built_for == pins | {SOURCES_KEY: source_digest()}  # built from this tree's sources
    requires = [line for line in metadata.decode().splitlines() if line.startswith("Requires")]
    for package, version in pins.items():
        assert f"Requires-Dist: {package}=={version}" in requires  # exactly, nothing else


def test_the_installed_wheel_loads_every_native_module_outside_the_repo(installed_wheel):
    _, venv = installed_wheel
    probe = _run([str(venv / "bin/python"), "-c", PROBE], venv.parent, 300)
    found = json.loads(probe.stdout)
    assert Path(found["file"]).is_relative_to(venv), found  # the wheel's, not the source tree
    assert found["loaded"] == list(MODULES)
    assert "native speed-up" not in probe.stderr, probe.stderr  # no warning either


def test_the_installed_wheel_cleans_the_samples_as_the_source_tree_does(installed_wheel, tmp_path):
    _, venv = installed_wheel
    # the source tree's side runs native too (test_native.py compares it with pure Python)
    assert [name for name in MODULES if native_module(name) is None] == []
    pages = sorted(SAMPLES.glob("*.html"))
    source = tmp_path / "source.jsonl"
    _run([sys.executable, "-m", "stream_cleaner", "clean", "--no-progress", "-o", str(source),
          *map(str, pages)], REPO, 600)  # fmt: skip
    site = Path(json.loads(_run([str(venv / "bin/python"), "-c", PROBE], tmp_path, 300).stdout)
                ["file"]).parent  # fmt: skip
    bundled = sorted((site / "samples").glob("*.html"))
    assert [p.name for p in bundled] == [p.name for p in pages]
    out = tmp_path / "wheel.jsonl"
    cleaned = _run([str(venv / "bin/stream-cleaner"), "clean", "--no-progress", "-o", str(out),
                    *map(str, bundled)], tmp_path, 600)  # fmt: skip
    assert "native speed-up" not in cleaned.stderr, cleaned.stderr
    wheel_records, source_records = _records(out), _records(source)
    assert len(wheel_records) == len(pages)
    assert wheel_records == source_records
