"""Compile stream-cleaner's optional native speed-ups in place (stream_cleaner/_native/*.so).

Cython modules for the hot loops: ``sentences`` splits blocks into sentences, ``signatures``
hashes blocks for site templates, ``trees`` walks the labeller's trees, ``sequence`` runs the
multilingual labeller's GRUs, ``text_features`` scans block texts for it, ``page_structure``
reads the elements around blocks for it, ``decoding`` reads pages of mixed UTF-8 and
windows-1252 and ``record_batch`` writes the worker's Kafka record
batches.
Two read the C structures of extensions the package already uses: ``lexbor_walk`` walks
selectolax's lexbor tree, and ``kenlm_score`` normalises and scores through the C++ model a
``kenlm.Model`` holds.
Those compile against the headers of exactly the installed versions, taken from their sdists on
PyPI (cached in .cache/native), and the versions are recorded in ``_native/built_for.json``: at
import the package uses the modules only while the installed versions still match, and falls
back to pure Python otherwise.

Usage: python scripts/build_native.py   (needs a C/C++ compiler and Cython; run by setup.sh)
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NATIVE = REPO / "stream_cleaner" / "_native"
SOURCES = REPO / ".cache" / "native"


def _sdist(package: str, version: str) -> Path:
    """The unpacked sdist of ``package==version`` under .cache/native (downloaded once)."""
    unpacked = SOURCES / f"{package}-{version}"
    if unpacked.is_dir():
        return unpacked
    SOURCES.mkdir(parents=True, exist_ok=True)
    archive = SOURCES / f"{package}-{version}.tar.gz"
    if not archive.is_file():
        # --no-binary for this package only: its build requirements may come as wheels
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", package, "-d", str(SOURCES), f"{package}=={version}"],
            check=True,
        )  # fmt: skip
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4+; Debian 12's 3.11.2 lacks it
            tar.extractall(SOURCES, filter="data")
        else:
            for member in tar.getmembers():  # what the data filter refuses, by hand
                if member.name.startswith("/") or ".." in Path(member.name).parts:
                    raise ValueError(f"unsafe path in {archive.name}: {member.name}")
                if not (member.isfile() or member.isdir()):
                    raise ValueError(f"unexpected member in {archive.name}: {member.name}")
            tar.extractall(SOURCES)  # every member checked above
    return unpacked


def main() -> int:
    from Cython.Build import cythonize
    from setuptools import Extension, setup

    versions = {name: importlib.metadata.version(name) for name in ("selectolax", "kenlm")}
    lexbor = _sdist("selectolax", versions["selectolax"]) / "lexbor" / "source"
    kenlm = _sdist("kenlm", versions["kenlm"])
    extensions = [
        Extension(
            "stream_cleaner._native.lexbor_walk",
            [str(NATIVE / "lexbor_walk.pyx")],
            include_dirs=[str(lexbor), str(NATIVE)],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.sentences",
            [str(NATIVE / "sentences.pyx")],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.signatures",
            [str(NATIVE / "signatures.pyx")],
            libraries=["z"],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.trees",
            [str(NATIVE / "trees.pyx")],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.sequence",
            [str(NATIVE / "sequence.pyx")],
            # -O3: the recurrent products along contiguous rows may vectorise (the loop took
            # 1.3 ms for 240 rows and six directions, where numpy's took 2.9)
            extra_compile_args=["-O3"],
        ),
        Extension(
            "stream_cleaner._native.text_features",
            [str(NATIVE / "text_features.pyx")],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.page_structure",
            [str(NATIVE / "page_structure.pyx")],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.decoding",
            [str(NATIVE / "decoding.pyx")],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.record_batch",
            [str(NATIVE / "record_batch.pyx")],
            include_dirs=[str(NATIVE)],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "stream_cleaner._native.kenlm_score",
            # MurmurHash64A: the hash KenLM's vocabularies store, for the vocabulary memo
            [str(NATIVE / "kenlm_score.pyx"), str(kenlm / "util" / "murmur_hash.cc")],
            include_dirs=[str(kenlm)],
            language="c++",
            # KENLM_MAX_ORDER sizes lm::ngram::State: it must be the kenlm module's (6)
            extra_compile_args=["-O2", "-std=c++11", "-DNDEBUG", "-DKENLM_MAX_ORDER=6"],
        ),
    ]
    build = SOURCES / "build"
    build.mkdir(parents=True, exist_ok=True)
    os.chdir(build)  # away from the repo: setuptools would read its pyproject.toml
    setup(
        name="stream-cleaner-native",
        ext_modules=cythonize(extensions, build_dir=str(build), quiet=True),
        script_args=["build_ext", "--build-lib", str(REPO), "--build-temp", str(build / "temp")],
    )
    (NATIVE / "built_for.json").write_text(json.dumps(versions, indent=1) + "\n")
    print(f"native speed-ups built in {NATIVE} for {versions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
