"""``clean -j N``'s processes: a process that dies loses no page and hangs nothing."""

import faulthandler
import multiprocessing
import os
import signal

import pytest

from stream_cleaner import pipeline
from stream_cleaner.document import RawDocument
from stream_cleaner.io.readers import Source
from stream_cleaner.parallel import clean_in_processes
from stream_cleaner.settings import CleanerSettings

from .conftest import SAMPLES

BODY = (SAMPLES / "blog-post.html").read_bytes()


@pytest.fixture(autouse=True)
def no_hang():
    """A hang is the bug these tests look for: end the run with every thread's stack."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def pages(n: int) -> list[Source]:
    return [Source(RawDocument(body=BODY, id=f"p{i}"), f"p{i}") for i in range(n)]


def test_pages_come_back_in_order_with_the_same_text_as_in_one_process():
    sources = pages(30)
    alone = pipeline.clean_document(sources[0].doc, learn_site=False)
    out = list(clean_in_processes(iter(sources), CleanerSettings(), jobs=2))
    assert [source.origin for source, _ in out] == [s.origin for s in sources]
    assert [doc.id for _, doc in out] == [f"p{i}" for i in range(30)]
    assert {doc.text for _, doc in out} == {alone.text}
    assert multiprocessing.active_children() == []  # none left behind


def test_every_process_killed_mid_run_loses_no_page():
    sources = pages(80)
    out, killed = [], []
    for source, doc in clean_in_processes(iter(sources), CleanerSettings(), jobs=2):
        out.append((source.origin, doc.id, doc.error, doc.error_detail))
        if len(out) == 1:  # the processes hold the next pages: kill both
            killed = [child.pid for child in multiprocessing.active_children()]
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
        if len(out) == 60:
            now = [child.pid for child in multiprocessing.active_children()]
            assert len(now) == 2 and not set(now) & set(killed)  # replaced
    assert len(killed) == 2
    assert [origin for origin, *_ in out] == [s.origin for s in sources]
    assert [doc_id for _, doc_id, *_ in out] == [f"p{i}" for i in range(80)]
    assert [e for e in out if e[2]] == []  # cleaned again, in new processes


def test_a_page_that_kills_its_process_twice_is_an_error_record_and_the_rest_are_cleaned(
    monkeypatch,
):
    clean, parent = pipeline.clean_document, os.getpid()

    def dies_on_poison(raw, **kwargs):  # forked processes inherit this
        if raw.id == "poison" and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return clean(raw, **kwargs)

    monkeypatch.setattr(pipeline, "clean_document", dies_on_poison)
    sources = pages(20)
    sources[5] = Source(RawDocument(body=BODY, id="poison"), "poison")
    out = list(clean_in_processes(iter(sources), CleanerSettings(), jobs=2))
    assert [source.origin for source, _ in out] == [s.origin for s in sources]
    errors = {doc.id: doc.error for _, doc in out if doc.error}
    assert list(errors) == ["poison"]
    assert errors["poison"] == "internal_error"
    poisoned = next(doc for _, doc in out if doc.id == "poison")
    assert "died twice (last killed by signal 9" in poisoned.error_detail
    assert all(doc.sentences for _, doc in out if doc.id != "poison")  # its batch, cleaned again


def test_a_process_that_cannot_clean_at_all_ends_the_run(tmp_path):
    settings = CleanerSettings(model_path=str(tmp_path / "missing.klm"))
    with pytest.raises(RuntimeError, match="a cleaning process failed"):
        list(clean_in_processes(iter(pages(3)), settings, jobs=2))
    assert multiprocessing.active_children() == []
