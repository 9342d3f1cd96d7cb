"""Compile stream-cleaner's optional native speed-ups (stream_cleaner/_native/*.so).

Cython modules for the hot loops: ``sentences`` splits blocks into sentences, ``signatures``
hashes blocks for site templates, ``trees`` walks the labeller's trees, ``sequence`` runs the
multilingual labeller's GRUs, ``text_features`` scans block texts for it, ``page_structure``
reads the elements around blocks for it, ``decoding`` reads pages of mixed UTF-8 and
windows-1252, ``record_batch`` writes the worker's Kafka record
batches and ``langid`` predicts a text's language as fastText does, from lid.176's file.
Two read the C structures of extensions the package already uses: ``lexbor_walk`` walks
selectolax's lexbor tree, and ``kenlm_score`` normalises and scores through the C++ model a
``kenlm.Model`` holds.
Those compile against the headers (and selectolax's ``.pxd``) of exactly one version of each,
taken from its sdist on PyPI, and the versions are recorded in ``_native/built_for.json``: at
import the package uses the modules only while the installed versions still match, and falls
back to pure Python otherwise, with a warning.

This file is the one list of the modules and how each compiles, for both builds:
- here, in place, for a source tree (``setup.sh`` runs it after the editable install), against
  the selectolax and kenlm installed in the running environment;
- in the wheel (``setup.py``'s ``build_ext``), against the versions ``pyproject.toml`` pins
  with ``==``, which the wheel's metadata then requires.

Usage: python scripts/build_native.py   (needs a C/C++ compiler and Cython; run by setup.sh)
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NATIVE = REPO / "stream_cleaner" / "_native"
SOURCES = REPO / ".cache" / "native"
# the extensions whose C structures the native modules read: one exact version of each
PINNED = ("selectolax", "kenlm")


def fetch_sdist(package: str, version: str, cache: Path = SOURCES) -> Path:
    """The unpacked sdist of ``package==version`` under ``cache`` (downloaded once)."""
    unpacked = cache / f"{package}-{version}"
    if unpacked.is_dir():
        return unpacked
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{package}-{version}.tar.gz"
    if not archive.is_file():
        # --no-binary for this package only: its build requirements may come as wheels. pip
        # (not urllib) so that the index, proxy and certificate settings of the build apply.
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--disable-pip-version-check", "--no-binary", package, "-d", str(cache),
             f"{package}=={version}"],
            check=True,
        )  # fmt: skip
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4+; Debian 12's 3.11.2 lacks it
            tar.extractall(cache, filter="data")
        else:
            for member in tar.getmembers():  # what the data filter refuses, by hand
                if member.name.startswith("/") or ".." in Path(member.name).parts:
                    raise ValueError(f"unsafe path in {archive.name}: {member.name}")
                if not (member.isfile() or member.isdir()):
                    raise ValueError(f"unexpected member in {archive.name}: {member.name}")
            tar.extractall(cache)  # every member checked above
    return unpacked


def installed_versions() -> dict[str, str]:
    """The installed versions of `PINNED`: what an in-place build compiles against."""
    return {name: importlib.metadata.version(name) for name in PINNED}


def pinned_versions(pyproject: Path) -> dict[str, str]:
    """The versions of `PINNED` that ``pyproject.toml``'s dependencies pin with ``==``."""
    import tomllib

    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    versions = {}
    for requirement in dependencies:
        found = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([A-Za-z0-9_.+!-]+)\s*", requirement)
        if found and found[1].lower() in PINNED:
            versions[found[1].lower()] = found[2]
    missing = [name for name in PINNED if name not in versions]
    if missing:
        raise ValueError(f"{pyproject}: {missing} must be pinned with == (the native modules "
                         "read their C structures)")  # fmt: skip
    return versions


def sdist_dirs(versions: dict[str, str], cache: Path = SOURCES) -> dict[str, Path]:
    """Where `fetch_sdist` unpacks the sdist of each of `PINNED` at ``versions``."""
    return {name: cache / f"{name}-{versions[name]}" for name in PINNED}


def extensions(native: Path, sdists: dict[str, Path]) -> list:
    """Every native module as a setuptools ``Extension`` of its ``.pyx``, the two that read
    selectolax's and kenlm's structures pointed at their unpacked ``sdists`` (`sdist_dirs`)."""
    from setuptools import Extension

    selectolax, kenlm = sdists["selectolax"], sdists["kenlm"]

    def pyx(name: str) -> str:
        return str(native / f"{name}.pyx")

    return [
        Extension(
            "stream_cleaner._native.lexbor_walk",
            [pyx("lexbor_walk")],
            # the sdist's root: Cython's `cimport selectolax.lexbor` reads its .pxd there,
            # not whichever selectolax the build environment has
            include_dirs=[str(selectolax), str(selectolax / "lexbor" / "source"), str(native)],
            extra_compile_args=["-O2"],
        ),
        Extension("stream_cleaner._native.sentences", [pyx("sentences")],
                  extra_compile_args=["-O2"]),
        Extension("stream_cleaner._native.signatures", [pyx("signatures")], libraries=["z"],
                  extra_compile_args=["-O2"]),
        Extension("stream_cleaner._native.trees", [pyx("trees")], include_dirs=[str(native)],
                  extra_compile_args=["-O2"]),
        Extension(
            "stream_cleaner._native.sequence",
            [pyx("sequence")],
            # -O3: the recurrent products along contiguous rows may vectorise (the loop took
            # 1.3 ms for 240 rows and six directions, where numpy's took 2.9)
            extra_compile_args=["-O3"],
        ),
        Extension("stream_cleaner._native.text_features", [pyx("text_features")],
                  extra_compile_args=["-O2"]),
        Extension("stream_cleaner._native.page_structure", [pyx("page_structure")],
                  extra_compile_args=["-O2"]),
        Extension("stream_cleaner._native.decoding", [pyx("decoding")],
                  extra_compile_args=["-O2"]),
        # fastText's float sums, products and sigmoid as it rounds them: no fused multiply-add
        Extension("stream_cleaner._native.langid", [pyx("langid")], language="c++",
                  extra_compile_args=["-O2", "-ffp-contract=off"]),
        Extension("stream_cleaner._native.record_batch", [pyx("record_batch")],
                  include_dirs=[str(native)], extra_compile_args=["-O2"]),
        Extension(
            "stream_cleaner._native.kenlm_score",
            # MurmurHash64A: the hash KenLM's vocabularies store, for the vocabulary memo
            [pyx("kenlm_score"), str(kenlm / "util" / "murmur_hash.cc")],
            include_dirs=[str(kenlm)],
            language="c++",
            # KENLM_MAX_ORDER sizes lm::ngram::State: it must be the kenlm module's (6)
            extra_compile_args=["-O2", "-std=c++11", "-DNDEBUG", "-DKENLM_MAX_ORDER=6"],
        ),
    ]  # fmt: skip


def write_built_for(native: Path, versions: dict[str, str]) -> None:
    """Record what the modules in ``native`` were compiled against, and from which sources
    (``stream_cleaner._native``'s digest of this tree's; read at import)."""
    spec = importlib.util.spec_from_file_location("_sc_native", NATIVE / "__init__.py")
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)  # alone: the package needs numpy and more
    spec.loader.exec_module(package)
    built_for = {**versions, package.SOURCES_KEY: package.source_digest(NATIVE)}
    (native / "built_for.json").write_text(json.dumps(built_for, indent=1) + "\n")


def main() -> int:
    from setuptools import setup

    versions = installed_versions()
    sdists = {name: fetch_sdist(name, version) for name, version in versions.items()}
    build = SOURCES / "build"
    build.mkdir(parents=True, exist_ok=True)
    os.chdir(build)  # away from the repo: setuptools would read its pyproject.toml and setup.py
    setup(
        name="stream-cleaner-native",
        ext_modules=extensions(NATIVE, sdists),
        # setuptools' build_ext is Cython's when Cython is installed: it cythonizes the .pyx
        # files into the build directory (--cython-c-in-temp) and then compiles them;
        # --force: a change of selectolax or kenlm changes no source file here
        script_args=["build_ext", "--build-lib", str(REPO), "--build-temp", str(build / "temp"),
                     "--cython-c-in-temp", "--force"],
    )  # fmt: skip
    write_built_for(NATIVE, versions)
    print(f"native speed-ups built in {NATIVE} for {versions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
