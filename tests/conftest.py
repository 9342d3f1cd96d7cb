"""Shared fixtures: the tiny test model, the bundled samples, the benchmark data if unpacked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stream_cleaner.lm import DEFAULT_MODEL_PATH, LanguageModel

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
SAMPLES = REPO / "stream_cleaner" / "samples"
BENCH_DATA = REPO / ".cache" / "data"


@pytest.fixture(scope="session")
def tiny_model() -> LanguageModel:
    """A bigram trained by `stream-cleaner train-lm` on tests/data/tiny-corpus.txt (ARPA)."""
    return LanguageModel(DATA / "tiny.arpa")


@pytest.fixture(scope="session")
def default_model() -> LanguageModel:
    """The bundled English Wikipedia bigram."""
    if not DEFAULT_MODEL_PATH.is_file():
        pytest.fail(f"the default model is missing: {DEFAULT_MODEL_PATH}")
    return LanguageModel(DEFAULT_MODEL_PATH)


def cleaneval_dir(split: str) -> Path:
    """The unpacked CleanEval split: skipped without it, but a failure in CI (CI=true)."""
    path = BENCH_DATA / "cleaneval" / split / "html"
    if not path.is_dir():
        message = f"{path} not unpacked: run bash bench/setup-data.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
