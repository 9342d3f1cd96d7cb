"""bench/multilingual_pipeline.py's character F1: every system's output text read alike."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from multilingual import Page
from multilingual_pipeline import character_f1


def _page() -> Page:
    return Page(
        name="zh/1",
        paths=["html body div a", "html body div p", "html body div p"],
        texts=["首页", "今天 天气很好。", "我们去公园。"],
        depths=None,
        labels=np.array([0, 1, 1]),
    )


def test_character_f1_counts_characters_with_white_space_removed():
    page = _page()
    # the content rows' 13 characters, however the output spaces or splits them
    assert character_f1(page, "今天天气很好。\n我们去 公园。") == 1.0
    # a menu's 2 characters kept too: precision 13 / 15, recall 1
    kept = "首页\n今天天气很好。我们去公园。"
    assert character_f1(page, kept) == pytest.approx(2 * 13 / (15 + 13))
    # the first paragraph only: precision 1, recall 7 / 13
    assert character_f1(page, "今天天气很好。") == pytest.approx(2 * 7 / (7 + 13))
    assert character_f1(page, "") == 0.0


def test_character_f1_of_a_page_without_content_rows():
    page = _page()
    page.labels = np.array([0, 0, 0])
    assert character_f1(page, "") == 1.0
    assert character_f1(page, "首页") == 0.0
