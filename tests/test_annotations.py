"""The annotation file format: round trip, validation, prediction."""

from __future__ import annotations

import json

import pytest

from stream_cleaner.annotations import (
    AnnotationError,
    BlockAnnotation,
    PageAnnotation,
    annotation_filename,
    find_annotation,
    html_sha256,
    predict_page,
    read_annotation,
    read_annotations,
    write_annotation,
)

PAGE = (
    b"<html><body><nav><ul><li><a href='/'>Menu</a></li></ul></nav><h2>Budget</h2>"
    b"<p>The city council approved the new budget for public schools on Tuesday evening.</p>"
    b"</body></html>"
)


def test_round_trip(tmp_path):
    page = PageAnnotation(
        source="news/a b.html",
        html_sha256=html_sha256(b"<p>x</p>"),
        blocks=(
            BlockAnnotation(0, "Menu", "html body nav ul li a", "boilerplate", "list"),
            BlockAnnotation(1, "Text « ü »", "html body p", "content", "paragraph"),
        ),
    )
    path = write_annotation(tmp_path / "labels", page)
    assert path.name == annotation_filename(page.source, page.html_sha256)
    assert path.name.startswith("a_b-") and path.suffix == ".json"
    assert read_annotation(path) == page
    assert list(read_annotations(tmp_path / "labels")) == [page]
    assert find_annotation(tmp_path / "labels", page.source, page.html_sha256) == page
    assert find_annotation(tmp_path / "labels", page.source, "0" * 64) is None
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "stream-cleaner.annotations" and data["version"] == 1
    # written again (a relabelled page) it replaces the file, no temporary left behind
    write_annotation(tmp_path / "labels", page)
    assert [p.name for p in (tmp_path / "labels").iterdir()] == [path.name]


@pytest.mark.parametrize(
    "change",
    [
        {"format": "other"},
        {"version": 2},
        {"source": ""},
        {"html_sha256": "ABC"},
        {"blocks": {}},
        {"blocks": [{"index": -1, "text": "", "tag_path": "", "label": "content", "kind": "list"}]},
        {"blocks": [{"index": 0, "text": "", "tag_path": "", "label": "ad", "kind": "list"}]},
        {"blocks": [{"index": 0, "text": "", "tag_path": "", "label": "content", "kind": "x"}]},
        {"blocks": [{"index": 0, "text": 1, "tag_path": "", "label": "content", "kind": "list"}]},
        {
            "blocks": [{"index": 0, "text": "", "tag_path": "", "label": "content", "kind": "list"}]
            * 2
        },
    ],
)
def test_invalid_annotations_are_refused(change):
    good = {"source": "a.html", "html_sha256": "0" * 64, "blocks": []}
    assert PageAnnotation.from_dict(good).blocks == ()
    with pytest.raises(AnnotationError):
        PageAnnotation.from_dict({**good, **change})


def test_read_refuses_a_broken_file(tmp_path):
    (tmp_path / "a.json").write_text("{")
    with pytest.raises(AnnotationError, match="not JSON"):
        read_annotation(tmp_path / "a.json")


def test_predict_page_labels_blocks_from_the_cleaners_decisions(default_model):
    from stream_cleaner.settings import CleanerSettings

    corpus = predict_page(PAGE, "p.html", model=default_model)  # the default mode's labeller
    assert [b.label for b in corpus.blocks][0::2] == ["boilerplate", "content"]
    perplexity_mode = CleanerSettings(mode="perplexity")
    page = predict_page(PAGE, "p.html", model=default_model, settings=perplexity_mode)
    assert page.html_sha256 == html_sha256(PAGE)
    assert [(b.index, b.text, b.label, b.kind) for b in page.blocks] == [
        (0, "Menu", "boilerplate", "list"),
        (1, "Budget", "boilerplate", "heading"),
        (
            2,
            "The city council approved the new budget for public schools on Tuesday evening.",
            "content",
            "paragraph",
        ),
    ]


def test_training_reads_annotations_and_refuses_a_changed_page(default_model, tmp_path):
    from stream_cleaner.training import load_annotated_pages

    (tmp_path / "p.html").write_bytes(PAGE)
    page = predict_page(PAGE, "p.html", model=default_model)
    blocks = [
        {**b.to_dict(), "label": "content" if i == 0 else "boilerplate"}
        for i, b in enumerate(page.blocks)
    ]
    flipped = PageAnnotation.from_dict({**page.to_dict(), "blocks": blocks})
    write_annotation(tmp_path / "labels", flipped)
    (loaded,) = load_annotated_pages(tmp_path / "labels", pages_dir=tmp_path, model=default_model)
    assert loaded.labels.tolist() == [True] + [False] * (len(page.blocks) - 1)
    assert loaded.gold == page.blocks[0].text
    (tmp_path / "p.html").write_bytes(PAGE + b"<p>an edit</p>")
    with pytest.raises(ValueError, match="changed since it was labelled"):
        load_annotated_pages(tmp_path / "labels", pages_dir=tmp_path, model=default_model)
    with pytest.raises(ValueError, match="no annotation files"):
        load_annotated_pages(tmp_path, pages_dir=tmp_path, model=default_model)
