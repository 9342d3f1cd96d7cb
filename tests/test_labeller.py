"""The block labeller: features, training, the modes, train-labeller and the CleanEval format."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stream_cleaner import CleanerSettings, clean_document
from stream_cleaner.cli import main
from stream_cleaner.decide import DropReason, depends_on_setting_limit
from stream_cleaner.evaluate import align_words
from stream_cleaner.io.writers import cleaneval_text
from stream_cleaner.labeller import (
    CLASS_FEATURE_NAMES,
    FEATURE_NAMES,
    SITE_FEATURE_NAMES,
    BlockLabeller,
    block_features,
    block_kinds,
    class_features,
    labeller_path,
)
from stream_cleaner.lm import normalize_many
from stream_cleaner.parse import parse_blocks
from stream_cleaner.segment import split_sentences
from stream_cleaner.settings import MODES

from .conftest import BENCH_DATA, DATA, SAMPLES, cleaneval_dir

TINY = str(DATA / "tiny.arpa")

ARTICLE = (
    "The river rises in the hills above the town and flows south for forty miles before it "
    "reaches the sea. In the last century its banks were lined with mills, and the water "
    "powered looms that employed most of the valley. Today the mills are gone, and the river "
    "is known for its trout and for the footpath that follows it from source to mouth."
)
ARTICLE_2 = (
    "Walkers who set out from the town bridge in the morning can reach the old stone quay by "
    "evening. The path is flat for most of the way, although a few stiles slow the going near "
    "the farms. Local volunteers keep the way marked and report fallen trees to the council."
)

PAGE = f"""<html><head><title>The river</title></head><body>
<div id="top"><nav><ul>
<li><a href="/">Home</a></li><li><a href="/news">News</a></li>
<li><a href="/sport">Sport</a></li><li><a href="/contact">Contact us</a></li>
</ul></nav></div>
<div class="main"><article>
<h1>A walk along the river</h1>
<p>{ARTICLE}</p>
<p>{ARTICLE_2}</p>
<ul><li>Length: forty miles</li><li>Start: the town bridge</li></ul>
</article></div>
<footer><p><a href="/privacy">Privacy</a> | <a href="/terms">Terms of use</a> |
<a href="/">Home</a></p><p>© 2024 The Valley Times. All rights reserved.</p></footer>
</body></html>"""


def _page(html: str, model) -> tuple[list, list[str], list[int], tuple[list, list, list]]:
    """A page's blocks, sentences, each sentence's block and scores (as three columns)."""
    blocks = parse_blocks(html)
    sentences: list[str] = []
    block_of: list[int] = []
    for block in blocks:
        split = split_sentences(block.text)
        sentences += split
        block_of += [block.index] * len(split)
    found = model.score_many(normalize_many(sentences))
    scores = ([s.log10_prob for s in found], [s.n_tokens for s in found],
              [s.n_oov for s in found])  # fmt: skip
    return blocks, sentences, block_of, scores


def _features(html: str, model) -> tuple[list, np.ndarray]:
    blocks, sentences, block_of, (log10_probs, n_tokens, n_oov) = _page(html, model)
    features = block_features(
        blocks, sentences, block_of, log10_probs=log10_probs, n_tokens=n_tokens, n_oov=n_oov
    )
    return blocks, features


def test_features_of_a_hand_written_page(tiny_model):
    blocks, x = _features(PAGE, tiny_model)
    col = {name: i for i, name in enumerate(FEATURE_NAMES)}
    texts = [b.text for b in blocks]
    assert x.shape == (len(blocks), len(FEATURE_NAMES))
    assert np.isfinite(x).all()
    home, heading, para = texts.index("Home"), texts.index("A walk along the river"), 0
    para = next(i for i, t in enumerate(texts) if t.startswith("The river rises"))
    # markup
    assert x[home, col["path_nav"]] == 1 and x[para, col["path_nav"]] == 0
    assert x[home, col["link_density"]] == 1.0 and x[para, col["link_density"]] == 0.0
    assert x[home, col["link_only"]] == 1
    assert x[heading, col["tag_h1"]] == 1 and x[heading, col["in_heading"]] == 1
    assert x[para, col["tag_p"]] == 1 and x[para, col["path_article"]] == 1
    assert x[home, col["tag_li"]] == 1 and x[home, col["in_list"]] == 1
    assert x[heading, col["tags_opened"]] >= 2  # div article h1 after the nav's li a
    # content
    assert x[para, col["n_sentences"]] == 3
    assert x[para, col["ends_sentence"]] == 1 and x[home, col["ends_sentence"]] == 0
    assert x[para, col["starts_upper"]] == 1
    assert x[para, col["log_words"]] == pytest.approx(np.log(len(ARTICLE.split())))
    assert x[para, col["duplicates"]] == 0
    _, twice = _features("<p>Share this</p><p>Text.</p><p>Share this</p>", tiny_model)
    assert list(twice[:, col["duplicates"]]) == [1, 0, 1]
    legal = texts.index("© 2024 The Valley Times. All rights reserved.")
    assert x[legal, col["legal"]] >= 2 and x[legal, col["dates"]] == 0
    assert x[texts.index("Privacy | Terms of use | Home"), col["separators"]] == 2
    assert 0.5 < x[para, col["ratio_lower"]] < 0.9
    # position and perplexity
    assert x[0, col["position"]] == 0 and x[-1, col["position"]] == 1
    assert x[para, col["log_ppl"]] > 0 and x[para, col["oov_rate"]] >= 0
    # neighbours: the paragraph's previous block is the heading
    assert x[para, col["log_chars@-1"]] == x[heading, col["log_chars"]]
    assert x[0, col["log_chars@-1"]] == -1  # nothing before the first block


def test_block_kinds_from_markup():
    blocks = parse_blocks("<h2>Title</h2><p>Text.</p><ul><li>One</li></ul><div>More</div>")
    assert block_kinds(blocks) == ["h", "p", "l", "p"]


def _page_set(root: Path, n: int = 12) -> Path:
    """A tiny page set in CleanEval's layout: html/NAME.html and gold/NAME.txt."""
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    for i in range(n):
        article = f"{ARTICLE} Page {i} has its own story." if i % 2 else ARTICLE_2
        html = PAGE.replace(ARTICLE, article).replace("<h1>A walk", f"<h1>Walk {i}")
        (root / "html" / f"{i}.html").write_text(html)
        gold = f"URL: http://example.org/{i}\n<h>Walk {i} along the river\n<p>{article}\n"
        gold += f"<p>{ARTICLE_2}\n<l>Length: forty miles\n<l>Start: the town bridge\n"
        (root / "gold" / f"{i}.txt").write_text(gold)
    return root


def test_training_on_a_tiny_page_set(tmp_path, tiny_model):
    pytest.importorskip("lightgbm")
    from stream_cleaner.training import load_training_pages, train_labeller

    pages_dir = _page_set(tmp_path / "pages")
    pages = load_training_pages(pages_dir, model=tiny_model)
    assert len(pages) == 12
    page = pages[0]
    labels = dict(zip([b.text for b in page.blocks], page.labels, strict=True))
    assert labels[ARTICLE_2] and labels["Length: forty miles"]
    assert not labels["Home"] and not labels["Sport"]
    assert page.gold_kinds[[b.text for b in page.blocks].index("Length: forty miles")] == "l"

    out = tmp_path / "model.json"
    meta = train_labeller(
        [(str(pages_dir), None)], mode="corpus", output=out, model=tiny_model, num_trees=20,
        folds=3,
    )  # fmt: skip
    assert meta["pages"] == 12 and meta["content_blocks"] > 0
    assert json.loads(Path(f"{out}.meta.json").read_text())["trained_on"][0]["split"] is None
    assert meta["boilerplate_containers"] == ["aside", "footer", "nav"]  # corpus mode's default
    assert meta["unscored_log_ppl"] == 2.0
    labeller = BlockLabeller.load(out)
    assert labeller.boilerplate_containers == ("aside", "footer", "nav")
    assert labeller.unscored_log_ppl == 2.0
    keep = labeller.predict(page.features)
    # the training pages are learned: article and list kept, navigation and footer dropped
    assert list(keep) == list(page.labels)
    assert out.stat().st_size < 200_000


def test_training_with_site_features(tmp_path, tiny_model):
    pytest.importorskip("lightgbm")
    from stream_cleaner.sites import SiteSettings, SiteTemplates
    from stream_cleaner.training import train_labeller

    pages_dir = _page_set(tmp_path / "pages")
    for i, html in enumerate(sorted((pages_dir / "html").iterdir())):  # one site declared
        canonical = f'<link rel="canonical" href="http://valley.example/{i}">'
        html.write_text(html.read_text().replace("<head>", "<head>" + canonical))
    out = tmp_path / "sites.json"
    meta = train_labeller(
        [(str(pages_dir), None)], mode="article", output=out, model=tiny_model, num_trees=20,
        folds=3, site_features=True,
    )  # fmt: skip
    assert meta["site_features"] and meta["site_pages"] == 12
    labeller = BlockLabeller.load(out)
    assert labeller.site_features
    assert json.loads(out.read_text())["features"][-5:] == list(SITE_FEATURE_NAMES)
    # a labeller trained with site features reads the evidence wherever the cleaner has it
    settings = CleanerSettings(mode="article", labeller_path=str(out), model_path=TINY)
    sites = SiteTemplates(SiteSettings(min_pages=3))
    docs = [
        clean_document(p.read_bytes(), settings=settings, sites=sites)
        for p in sorted((pages_dir / "html").iterdir())
    ]
    assert all(ARTICLE_2 in doc.text or ARTICLE in doc.text for doc in docs)
    assert all("All rights reserved" not in doc.text for doc in docs[4:])
    assert all(DropReason.SITE_TEMPLATE not in doc.dropped for doc in docs)


def test_tree_evaluation_matches_lightgbm(tmp_path, tiny_model):
    lightgbm = pytest.importorskip("lightgbm")
    from stream_cleaner.training import _spec, fit_trees, load_training_pages

    pages = load_training_pages(_page_set(tmp_path / "pages", 6), model=tiny_model)
    booster = fit_trees(pages, num_trees=15, params={"min_data_in_leaf": 2})
    labeller = BlockLabeller(_spec(booster, threshold=0.0, mode="test"))
    x = np.vstack([p.features for p in pages])
    assert isinstance(booster, lightgbm.Booster)
    np.testing.assert_allclose(labeller.scores(x), booster.predict(x, raw_score=True))


def test_class_features_say_where_a_block_stands_among_the_comment_marks():
    html = """<div class="post"><h1>Title</h1><p>Article text.</p></div>
    <h2 id="comments">Comments</h2><p>First!</p><div class="comment"><p>Second</p></div>
    <footer><p>Footer</p></footer>"""
    blocks = parse_blocks(html)
    x = class_features(blocks)
    assert x.shape == (6, len(CLASS_FEATURE_NAMES))
    column = {name: x[:, i] for i, name in enumerate(CLASS_FEATURE_NAMES)}
    assert column["class_comment"].tolist() == [16, 16, 1, 16, 2, 16]  # 16: none on the path
    assert column["class_content"].tolist() == [2, 2, 16, 16, 16, 16]  # div.post
    np.testing.assert_allclose(column["page_class_share"], 4 / 6)
    np.testing.assert_allclose(column["comment_marks_share"], [0, 0, 0.5, 0.5, 1, 1])
    np.testing.assert_allclose(column["comment_marks"], np.log1p([0, 0, 1, 1, 2, 2]))
    np.testing.assert_allclose(column["page_comment_marks"], np.log1p(2))
    # a page without any: every share 0
    plain = class_features(parse_blocks("<p>One.</p><p>Two.</p>"))
    assert plain[:, CLASS_FEATURE_NAMES.index("comment_marks_share")].tolist() == [0, 0]
    assert class_features([]).shape == (0, len(CLASS_FEATURE_NAMES))


def test_many_rows_are_scored_in_bounded_chunks_with_the_same_result(default_model):
    from stream_cleaner import labeller as module

    blocks, x = _features(PAGE, default_model)
    x = np.hstack((x, module.class_features(blocks)))  # the article labeller reads them too
    many = np.vstack([x] * 2000)  # 22,000 blocks
    labeller = module.load_labeller("article")
    expected = np.tile(labeller.scores(x), 2000)
    np.testing.assert_allclose(labeller.scores(many), expected)


def test_mode_setting_from_the_environment():
    assert MODES == ("perplexity", "corpus", "article", "auto")
    assert CleanerSettings.from_env({"STREAM_CLEANER_MODE": "article"}).mode == "article"
    assert CleanerSettings().mode == "auto"
    with pytest.raises(ValueError, match="mode"):
        CleanerSettings(mode="everything")
    with pytest.raises(ValueError, match="sentence_filter"):
        CleanerSettings(sentence_filter="maybe")


@pytest.mark.parametrize("mode", ["corpus", "article", "auto"])
def test_modes_drop_navigation_and_footer_but_keep_the_article(default_model, mode):
    doc = clean_document(PAGE, settings=CleanerSettings(mode=mode), model=default_model)
    assert ARTICLE in doc.text and ARTICLE_2 in doc.text
    lines = doc.text.split("\n")
    for boilerplate in ("Home", "Sport", "Contact us", "Privacy | Terms of use | Home"):
        assert boilerplate not in lines
    assert "All rights reserved" not in doc.text
    assert doc.dropped["boilerplate"] >= 6
    assert {s.reason for s in doc.sentences if not s.keep} <= {"boilerplate", "no_words"}


SIDEBAR = (
    "Our reporters have walked every mile of the river in all seasons, and their guide to the "
    "valley is sold in the bookshop on the market square. Readers who send in photographs of "
    "the footpath may see them printed in the weekend edition of the paper."
)


@pytest.mark.parametrize("container", ["aside", "footer", "nav"])
def test_corpus_mode_drops_prose_inside_html5_boilerplate_containers(
    tmp_path, default_model, container
):
    # CleanEval's 2007 pages have no nav, footer or aside, so the corpus trees keep such prose
    # anywhere; the shipped labeller's rule drops it inside those containers
    page = PAGE.replace("</article></div>", f"</article></div><{container}><p>{SIDEBAR}</p>"
                        f"</{container}>")  # fmt: skip
    corpus = CleanerSettings(mode="corpus")
    assert SIDEBAR not in clean_document(page, settings=corpus, model=default_model).text
    spec = json.loads(labeller_path("corpus").read_text())
    assert spec.pop("boilerplate_containers") == ["aside", "footer", "nav"]
    (tmp_path / "trees-alone.json").write_text(json.dumps(spec))
    alone = CleanerSettings(mode="corpus", labeller_path=str(tmp_path / "trees-alone.json"))
    assert SIDEBAR in clean_document(page, settings=alone, model=default_model).text
    div = page.replace(f"<{container}>", "<div>").replace(f"</{container}>", "</div>")
    doc = clean_document(div, settings=corpus, model=default_model)
    assert SIDEBAR in doc.text and ARTICLE in doc.text


def test_a_container_without_a_path_feature_is_read_from_the_tag_paths(tmp_path, default_model):
    page = PAGE.replace("</article></div>", f"</article></div><details><p>{SIDEBAR}</p></details>")
    spec = json.loads(labeller_path("corpus").read_text())
    spec["boilerplate_containers"] = ["details", "nav"]  # no path_details feature
    (tmp_path / "details.json").write_text(json.dumps(spec))
    ruled = CleanerSettings(mode="corpus", labeller_path=str(tmp_path / "details.json"))
    assert BlockLabeller.load(tmp_path / "details.json").reads_tag_paths
    assert SIDEBAR not in clean_document(page, settings=ruled, model=default_model).text
    corpus = CleanerSettings(mode="corpus")
    assert SIDEBAR in clean_document(page, settings=corpus, model=default_model).text


def test_perplexity_mode_keeps_what_the_labeller_drops(default_model):
    paper = clean_document(PAGE, settings=CleanerSettings(mode="perplexity"), model=default_model)
    corpus = clean_document(PAGE, settings=CleanerSettings(mode="corpus"), model=default_model)
    assert "boilerplate" not in paper.dropped
    assert "News" in paper.text.split("\n")
    assert "News" not in corpus.text.split("\n")
    assert len(corpus.text) < len(paper.text)


def test_sentence_filter_inside_kept_blocks(default_model):
    off = CleanerSettings(mode="corpus", sentence_filter="off")
    on = CleanerSettings(mode="corpus", sentence_filter="on", max_sentence_perplexity=1.0)
    assert ARTICLE in clean_document(PAGE, settings=off, model=default_model).text
    strict = clean_document(PAGE, settings=on, model=default_model)
    assert strict.text == ""
    assert strict.dropped["high_perplexity"] >= 3


@pytest.mark.parametrize(
    ("mode", "sentence_filter"),
    [("perplexity", "auto"), ("auto", "auto"), ("auto", "on"), ("corpus", "off"),
     ("article", "on")],
)  # fmt: skip
def test_another_limit_moves_only_the_sentences_it_decided(mode, sentence_filter, default_model):
    """`depends_on_setting_limit` names every sentence another max_sentence_perplexity
    changes, and a named one is kept exactly when its perplexity is at most that limit."""
    base = CleanerSettings(mode=mode, sentence_filter=sentence_filter)
    limited = mode == "perplexity" or sentence_filter == "on"
    moved_somewhere = False
    for page in sorted(SAMPLES.glob("*.html")):
        body = page.read_bytes()
        at_default = clean_document(body, settings=base, model=default_model)
        depends = depends_on_setting_limit(at_default.sentences, base)
        # the German page has no model, so no perplexity: no limit decides its sentences
        scored = any(s.perplexity is not None for s in at_default.sentences)
        assert any(depends) == (limited and scored), page.name
        for limit in (50.0, 300.0, 30_000.0):
            settings = base.with_options(max_sentence_perplexity=limit)
            other = clean_document(body, settings=settings, model=default_model)
            assert depends_on_setting_limit(other.sentences, settings) == depends, page.name
            for s, t, decided in zip(at_default.sentences, other.sentences, depends, strict=True):
                if decided:
                    assert t.keep == (t.perplexity <= limit), (page.name, limit, t.text)
                    assert t.reason == (None if t.keep else DropReason.HIGH_PERPLEXITY)
                    moved_somewhere |= s.keep != t.keep
                else:
                    assert (t.keep, t.reason) == (s.keep, s.reason), (page.name, limit, t.text)
    assert moved_somewhere == limited


def test_cleaneval_format_marks_headings_paragraphs_and_list_items(default_model):
    doc = clean_document(PAGE, settings=CleanerSettings(mode="corpus"), model=default_model)
    text = cleaneval_text(doc)
    assert f"<p>{ARTICLE}" in text.split("\n")
    assert "<h>A walk along the river" in text.split("\n")
    assert "<l>Length: forty miles" in text.split("\n")


def test_train_labeller_and_clean_with_it_end_to_end(tmp_path, capsys):
    pytest.importorskip("lightgbm")
    pages_dir = _page_set(tmp_path / "pages")
    out = tmp_path / "labeller.json"
    argv = ["train-labeller", str(pages_dir), "--mode", "article", "-o", str(out)]
    assert main([*argv, "--model", TINY, "--trees", "20", "--folds", "3"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert json.loads(Path(f"{out}.meta.json").read_text())["mode"] == "article"
    assert BlockLabeller.load(out).boilerplate_containers == ()  # article mode's default
    assert BlockLabeller.load(out).unscored_log_ppl == 2.5  # article mode's default
    assert json.loads(Path(f"{out}.meta.json").read_text())["weights"] == "blocks"
    ruled = tmp_path / "ruled.json"
    assert main([*argv[:-1], str(ruled), "--model", TINY, "--trees", "20", "--folds", "0",
                 "--boilerplate-containers", "Header, nav",
                 "--unscored-log-ppl", "3", "--weights", "pages"]) == 0  # fmt: skip
    assert BlockLabeller.load(ruled).boilerplate_containers == ("header", "nav")
    assert BlockLabeller.load(ruled).unscored_log_ppl == 3.0
    assert json.loads(Path(f"{ruled}.meta.json").read_text())["weights"] == "pages"
    assert ruled.read_text() != out.read_text()
    capsys.readouterr()
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    argv = ["clean", str(page), "--model", TINY, "--labeller", str(out), "-f", "cleaneval"]
    assert main([*argv, "--mode", "article"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[0].startswith("URL: ")
    assert f"<p>{ARTICLE}" in lines
    assert not any("Contact us" in line for line in lines)
    tree = tmp_path / "tree"
    assert main([*argv, "--mode", "article", "-o", str(tree)]) == 0
    assert f"<p>{ARTICLE}" in (tree / "page.html.txt").read_text().split("\n")


def test_page_weights_make_sets_or_pages_weigh_the_same():
    from stream_cleaner.training import TrainingPage, block_weights, set_page_weights

    def page(source: str, words: list[float]) -> TrainingPage:
        return TrainingPage("p", "", [], [], [], [], [], [], words=np.array(words), source=source)

    # one set of a long page and a short one, another of one page
    pages = [page("a", [100.0, 100.0, 16.0]), page("a", [9.0]), page("b", [16.0, 1.0])]
    before = [block_weights(p).sum() for p in pages]
    assert before == [24.0, 3.0, 5.0]

    def totals(how: str) -> list[float]:
        set_page_weights(pages, how)
        return [float(block_weights(p).sum()) for p in pages]

    assert totals("blocks") == before
    assert totals("pages") == pytest.approx([32 / 3] * 3)
    sets = totals("sets")
    assert sets[0] + sets[1] == pytest.approx(16.0) and sets[2] == pytest.approx(16.0)
    assert sets[0] / sets[1] == pytest.approx(8.0)  # the long page stays eight times the short
    assert totals("sets+pages") == pytest.approx([8.0, 8.0, 16.0])
    with pytest.raises(ValueError, match="unknown weights"):
        set_page_weights(pages, "sites")


def test_shipped_labellers_are_small_and_documented():
    for mode in ("corpus", "article"):
        path = labeller_path(mode)
        assert path.stat().st_size < 2_000_000
        meta = json.loads(Path(f"{path}.meta.json").read_text())
        assert meta["mode"] == mode and meta["pages"] > 50
        assert BlockLabeller.load(path).mode == mode
        assert not BlockLabeller.load(path).site_features
    sites = labeller_path("article-sites")  # the article labeller for pages with site evidence
    assert sites.stat().st_size < 2_000_000 and BlockLabeller.load(sites).site_features
    assert json.loads(Path(f"{sites}.meta.json").read_text())["site_pages"] > 500


@pytest.mark.slow
def test_shipped_corpus_labeller_on_cleaneval_dev(default_model):
    import sys

    cleaneval_dir("dev")
    sys.path.insert(0, str(BENCH_DATA.parent.parent / "bench"))
    from data import load_cleaneval

    settings = CleanerSettings(mode="corpus")
    f1s = [
        align_words(clean_document(p.raw, settings=settings, model=default_model).text, p.gold).f1
        for p in load_cleaneval("dev")
    ]
    # trained on these pages: the floor checks that the shipped model and the pipeline agree
    # with what was trained (cross-validated, out of sample, it scores about 0.90)
    assert sum(f1s) / len(f1s) > 0.93


@pytest.mark.parametrize("mode", ["auto", "article", "corpus"])
@pytest.mark.parametrize("native_features", [True, False])
def test_rows_written_in_place_are_the_rows_joined_by_copies(mode, native_features, monkeypatch):
    """`label_blocks` has `block_features` leave room for the columns its labeller reads next
    and writes them there: the rows, the scores and the decision are those of the features
    joined by copies, bit for bit, with the native features and without."""
    from stream_cleaner import labeller as module
    from stream_cleaner.lm import load_model

    if not native_features:
        monkeypatch.setattr(module, "native_module", lambda name: None)
    shipped = module.load_labeller(mode)
    model = load_model()
    for path in sorted(SAMPLES.glob("*.html"))[:4]:
        html = path.read_text(encoding="utf-8", errors="replace")
        blocks, sentences, block_of, scores = _page(html, model)
        keep, _, _, rows = module.label_blocks(blocks, sentences, block_of, scores, mode=mode)
        base = block_features(
            blocks, sentences, block_of, log10_probs=scores[0], n_tokens=scores[1],
            n_oov=scores[2],
        )  # fmt: skip
        wide = block_features(
            blocks, sentences, block_of, log10_probs=scores[0], n_tokens=scores[1],
            n_oov=scores[2], extra_columns=shipped.extra_columns,
        )  # fmt: skip
        assert wide.shape == (len(blocks), len(FEATURE_NAMES) + shipped.extra_columns)
        assert wide.flags.f_contiguous or not shipped.extra_columns  # the walk reads its transpose
        assert (wide[:, len(FEATURE_NAMES) :] == 0).all()
        assert wide[:, : len(FEATURE_NAMES)].tobytes() == base.tobytes()
        joined, main_in = module.page_features(shipped, blocks, base)
        expected_scores, expected_rows = shipped.page_scores(blocks, joined, main_in)
        assert rows.shape == expected_rows.shape
        assert rows.flags.f_contiguous or not native_features  # the walk reads its transpose
        assert rows.tobytes() == expected_rows.tobytes(), path.name
        assert keep == shipped.predict(expected_rows, scores=expected_scores).tolist()
    from stream_cleaner.page_structure import SCORE_CONTEXT_NAMES, STRUCTURE_FEATURE_NAMES

    assert (
        shipped.extra_columns
        == {
            "auto": len(CLASS_FEATURE_NAMES)
            + len(STRUCTURE_FEATURE_NAMES)
            + len(SCORE_CONTEXT_NAMES),
            "article": len(CLASS_FEATURE_NAMES),
            "corpus": 0,
        }[mode]
    )
