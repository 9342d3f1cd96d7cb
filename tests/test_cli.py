import json
import re
import subprocess
import sys

import orjson
import pytest
from warcio.archiveiterator import ArchiveIterator

from stream_cleaner.cli import main, parse_args

from .conftest import DATA, SAMPLES, cleaneval_dir

TINY = str(DATA / "tiny.arpa")
PAGE = "<html><body><ul><li>Home</li></ul><p>A river is a natural stream of water.</p></body>"


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "stream_cleaner", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command", [[], ["perplexity"], ["strip-tags"], ["clean"], ["train-lm"], ["demo"], ["evaluate"]]
)
def test_every_command_has_help(command):
    done = run(*command, "--help")
    assert done.returncode == 0
    assert b"usage: stream-cleaner" in done.stdout


def test_bad_usage_exits_2():
    assert run("clean").returncode == 2
    assert run("no-such-command").returncode == 2
    with pytest.raises(SystemExit) as exc:
        parse_args(["clean", "x", "--format", "pdf"])
    assert exc.value.code == 2


def test_perplexity_prints_one_number_per_sentence(capsys):
    assert (
        main(
            [
                "perplexity",
                "--model",
                TINY,
                "A river is a natural stream of water.",
                "Login | Register",
            ]
        )
        == 0
    )
    first, second = (float(x) for x in capsys.readouterr().out.split())
    assert first < second


def test_perplexity_reads_stdin():
    done = run("perplexity", "--model", TINY, stdin=b"Bread is a food.\nzz qq xx\n")
    assert done.returncode == 0
    assert len(done.stdout.split()) == 2
    # a line that is not UTF-8 is scored, with U+FFFD for its bad bytes, and the run goes on
    done = run("perplexity", "--model", TINY, stdin=b"Bread.\r\n\xff bad\nMore bread.\n")
    assert done.returncode == 0
    assert len(done.stdout.split()) == 3


def test_strip_tags_prints_text_only(tmp_path, capsys):
    (tmp_path / "p.html").write_text(PAGE)
    assert main(["strip-tags", str(tmp_path / "p.html")]) == 0
    assert capsys.readouterr().out == "Home\nA river is a natural stream of water.\n"


def test_clean_a_directory_to_json_lines(tmp_path, capsysbinary):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "a.html").write_text(PAGE)
    (tmp_path / "in" / "sub" / "b.html").write_text("<p>Bread is a food.</p>")
    (tmp_path / "in" / "empty.html").write_bytes(b"")
    assert (
        main(
            [
                "clean",
                str(tmp_path / "in"),
                "--model",
                TINY,
                "--max-perplexity",
                "1000000",
                "--mode",
                "perplexity",
            ]
        )
        == 3  # the empty page is an input that could not be cleaned
    )
    captured = capsysbinary.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert len(records) == 3
    by_name = {r["id"].rsplit("/", 1)[-1]: r for r in records}
    assert by_name["a.html"]["text"] == "Home\nA river is a natural stream of water."
    assert by_name["a.html"]["sentences"][1]["perplexity"] > 0
    assert by_name["empty.html"]["error"] == "empty"
    assert b"3 documents (1 with an error: empty 1)" in captured.err


def test_clean_to_a_text_tree_and_to_warc(tmp_path):
    out = tmp_path / "tree"
    assert main(["clean", str(SAMPLES), "-f", "text", "-o", str(out), "--model", TINY]) == 0
    assert (out / "news-article.html.txt").is_file()
    warc = tmp_path / "out.warc.gz"
    assert main(["clean", str(SAMPLES), "-f", "warc", "-o", str(warc), "--model", TINY]) == 0
    with open(warc, "rb") as stream:
        kinds = [r.rec_type for r in ArchiveIterator(stream)]
    assert kinds.count("conversion") == len(list(SAMPLES.glob("*.html")))


def test_clean_counts_the_warc_records_that_are_no_page(tmp_path, capsysbinary):
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    for status, content_type, body in [
        ("200 OK", "text/html", PAGE.encode()),
        ("200 OK", "text/css", b"body { color: red }"),
        ("404 Not Found", "text/html", b"<h1>Not Found</h1>"),
    ]:
        headers = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
        record = writer.create_warc_record(
            "http://example.com/", "response", payload=io.BytesIO(body), http_headers=headers
        )
        writer.write_record(record)
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(buf.getvalue())

    assert main(["clean", str(path), "--model", TINY, "--no-sentences", "--no-progress"]) == 0

    out, err = capsysbinary.readouterr()
    assert len(out.splitlines()) == 1
    assert b"natural stream of water" in out
    assert (b"2 inputs were no page to clean (response_not_page 1, "
            b"response_status_4xx 1)") in err  # fmt: skip


def test_json_lines_that_are_no_page_are_errors_with_their_reason(tmp_path, capsysbinary):
    lines = [
        {"id": "page", "status": 200, "content_type": "text/html", "body": PAGE},
        {"id": "gone", "status": 404, "body": "<h1>Not Found</h1>"},
        {"id": "style", "content_type": "text/css", "body": "body { color: red }"},
        {"id": "odd", "status": "teapot", "body": PAGE},
    ]
    path = tmp_path / "fetches.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert main(["clean", str(path), "--model", TINY, "--no-sentences", "--no-progress"]) == 3
    records = {r["id"]: r for r in map(orjson.loads, capsysbinary.readouterr().out.splitlines())}
    assert records["page"]["error"] is None and "natural stream" in records["page"]["text"]
    assert (records["gone"]["error"], records["style"]["error"]) == ("not_a_page", "not_a_page")
    assert "HTTP status 404" in records["gone"]["error_detail"]
    assert records["odd"]["error"] == "invalid_json"
    assert "status must be an integer" in records["odd"]["error_detail"]


def test_text_format_needs_an_output_directory(capsys):
    assert main(["clean", str(SAMPLES), "-f", "text", "--model", TINY]) == 1
    assert "-o DIR" in capsys.readouterr().err


def test_clean_stdin_html_and_jsonl():
    done = run("clean", "-", "--model", TINY, "--no-sentences", stdin=PAGE.encode())
    assert done.returncode == 0
    (record,) = [json.loads(x) for x in done.stdout.splitlines()]
    assert "sentences" not in record
    assert record["n_sentences"] == 2
    lines = (
        b"\n".join(
            json.dumps({"id": f"d{i}", "url": f"http://e.org/{i}", "body": PAGE}).encode()
            for i in range(3)
        )
        + b"\n{not json\n"
    )
    done = run("clean", "-", "--model", TINY, stdin=lines)
    records = [json.loads(x) for x in done.stdout.splitlines()]
    assert [r["id"] for r in records[:3]] == ["d0", "d1", "d2"]
    assert records[3]["error"] == "invalid_json"


def test_parallel_workers_give_the_same_records_in_the_same_order(tmp_path, capsysbinary):
    args = ["clean", str(SAMPLES), "--model", TINY, "--no-sentences"]
    assert main(args) == 0
    serial = [json.loads(x) for x in capsysbinary.readouterr().out.splitlines()]
    assert main([*args, "-j", "2"]) == 0
    parallel = [json.loads(x) for x in capsysbinary.readouterr().out.splitlines()]
    assert [(r["id"], r["text"]) for r in parallel] == [(r["id"], r["text"]) for r in serial]


def test_a_missing_model_exits_1(tmp_path, capsys):
    assert main(["clean", str(SAMPLES), "--model", str(tmp_path / "nope.klm")]) == 1
    assert "language model not found" in capsys.readouterr().err


def test_demo_cleans_the_samples(capsys):
    assert main(["demo", "--model", TINY]) == 0
    out = capsys.readouterr().out
    for name in ("news-article.html", "german-news.html", "recipe.html"):
        assert name in out
    assert "cleaned text of" in out


@pytest.mark.lmplz
def test_train_lm_command(tmp_path, capsys):
    model = tmp_path / "m.klm"
    assert (
        main(
            [
                "train-lm",
                str(DATA / "tiny-corpus.txt"),
                "-o",
                str(model),
                "--order",
                "2",
                "--prune",
                "0",
                "1",
                "--id",
                "cli-test",
            ]
        )
        == 0
    )
    assert "wrote" in capsys.readouterr().out
    assert json.loads((tmp_path / "m.klm.json").read_text())["prune"] == [0, 1]
    assert main(["perplexity", "--model", str(model), "Bread is a food."]) == 0


@pytest.mark.slow
def test_clean_every_cleaneval_page_gives_one_record_each(tmp_path):
    dev, test = cleaneval_dir("dev"), cleaneval_dir("test")
    out = tmp_path / "out.jsonl"
    assert main(["clean", str(dev), str(test), "-j", "2", "--no-sentences", "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    pages = sorted(dev.glob("*.html")) + sorted(test.glob("*.html"))
    assert len(records) == len(pages) == 742
    assert sorted(r["id"] for r in records) == sorted(str(p) for p in pages)
    assert [r for r in records if r["error"]] == []


def test_a_file_name_that_is_not_utf8_is_written_escaped_in_every_format(tmp_path, capsys):
    import os

    pages = tmp_path / "pages"
    pages.mkdir()
    page = b"<p>The river rises in the hills and flows to the sea.</p>"
    with open(os.path.join(os.fsencode(pages), b"caf\xe9.html"), "wb") as f:
        f.write(page)
    (pages / "z.html").write_bytes(page)
    assert main(["clean", "--no-progress", str(pages)]) == 0
    ids = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
    assert ids == [f"{pages}/caf\\xe9.html", f"{pages}/z.html"]
    warc = tmp_path / "out.warc"
    assert main(["clean", "--no-progress", "-f", "warc", "-o", str(warc), str(pages)]) == 0
    with open(warc, "rb") as f:
        types = [r.rec_headers.get_header("WARC-Type") for r in ArchiveIterator(f)]
    assert types.count("conversion") == 2
    text = tmp_path / "text"
    assert main(["clean", "--no-progress", "-f", "text", "-o", str(text), str(pages)]) == 0
    assert sorted(os.listdir(os.fsencode(text))) == [b"caf\xe9.html.txt", b"z.html.txt"]


def test_an_output_inside_the_input_tree_is_not_read_back(tmp_path, capsys):
    page = b"<p>The river rises in the hills and flows to the sea.</p>"
    for name in ("a.html", "b.html"):
        (tmp_path / name).write_bytes(page)
    out = tmp_path / "out.jsonl"
    assert main(["clean", "--no-progress", str(tmp_path), "-o", str(out)]) == 0
    assert len(out.read_bytes().splitlines()) == 2  # it read its own output as JSON Lines
    out.rename(tmp_path.parent / f"{tmp_path.name}.jsonl")  # else an input of the next run
    tree = tmp_path / "text"
    assert main(["clean", "--no-progress", "-f", "text", "-o", str(tree), str(tmp_path)]) == 0
    assert sorted(p.name for p in tree.iterdir()) == ["a.html.txt", "b.html.txt"]
    capsys.readouterr()
    out = tmp_path.parent / f"{tmp_path.name}.jsonl"
    assert main(["clean", "--no-progress", "-o", str(out), str(out)]) == 1
    assert "is where the output goes" in capsys.readouterr().err
    assert len(out.read_bytes().splitlines()) == 2  # not emptied before it was read
    linked = tmp_path.parent / f"{tmp_path.name}-link.jsonl"
    linked.hardlink_to(out)
    assert main(["clean", "--no-progress", "-o", str(linked), str(out)]) == 1
    assert len(out.read_bytes().splitlines()) == 2


# --- exit status: some inputs failed, nearly all failed ------------------------------------

ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8  # the start of an executable


def test_an_unreadable_input_is_an_error_record_and_the_run_goes_on(tmp_path, capsysbinary):
    missing = tmp_path / "nonexistent" / "path.html"
    recipe = SAMPLES / "recipe.html"
    args = ["clean", "--no-progress", "--no-sentences", "--model", TINY]
    assert main([*args, str(recipe), str(missing)]) == 3  # some inputs failed
    out, err = capsysbinary.readouterr()
    records = [orjson.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == [str(recipe), str(missing)]
    assert records[0]["error"] is None and records[0]["text"]
    assert (records[1]["error"], records[1]["origin"]) == ("read_error", str(missing))
    assert "No such file or directory" in records[1]["error_detail"]
    assert b"2 documents (1 with an error: read_error 1)" in err
    # the same input first: the run goes on to the page after it
    assert main([*args, str(missing), str(recipe)]) == 3
    assert len(capsysbinary.readouterr().out.splitlines()) == 2


def test_a_run_where_nearly_every_input_failed_exits_4(tmp_path, capsysbinary):
    (tmp_path / "bin.html").write_bytes(ELF)
    (tmp_path / "empty.html").write_bytes(b"")
    args = ["clean", "--no-progress", "--no-sentences", "--model", TINY]
    assert main([*args, str(tmp_path / "bin.html")]) == 4
    records = [orjson.loads(line) for line in capsysbinary.readouterr().out.splitlines()]
    assert [r["error"] for r in records] == ["binary_content"]
    assert main([*args, str(tmp_path)]) == 4  # every page failed
    assert main([*args, str(tmp_path), str(SAMPLES / "recipe.html")]) == 3
    assert main([*args, str(SAMPLES / "recipe.html")]) == 0


def test_demo_and_stack_exit_as_clean_does(tmp_path, capsys):
    from collections import Counter

    from stream_cleaner.cli.worker import stack_exit_status
    from stream_cleaner.streaming.stack import StackResult

    (tmp_path / "bin.html").write_bytes(ELF)
    assert main(["demo", "--model", TINY, str(tmp_path / "bin.html")]) == 4
    assert main(["demo", "--model", TINY, str(tmp_path), str(SAMPLES / "recipe.html")]) == 3
    assert "ERROR binary_content" in capsys.readouterr().out
    # stack: a page without an outcome is the stack's failure; dead letters are the pages'
    assert stack_exit_status(StackResult(produced=6)) == 0
    assert stack_exit_status(StackResult(produced=6, missing=1)) == 1
    assert stack_exit_status(StackResult(produced=6, dead_letters=Counter(empty=1))) == 3
    assert stack_exit_status(StackResult(produced=1, dead_letters=Counter(empty=1))) == 4


def test_the_exit_status_policy():
    from stream_cleaner.cli import EXIT_MOST_FAILED, EXIT_OK, EXIT_SOME_FAILED, exit_status

    assert (EXIT_OK, EXIT_SOME_FAILED, EXIT_MOST_FAILED) == (0, 3, 4)
    assert exit_status(failed=0, total=0) == EXIT_OK  # nothing to read is no failure
    assert exit_status(failed=0, total=10) == EXIT_OK
    assert exit_status(failed=1, total=10) == EXIT_SOME_FAILED
    assert exit_status(failed=99, total=100) == EXIT_SOME_FAILED
    assert exit_status(failed=991, total=1000) == EXIT_MOST_FAILED  # more than 99%
    assert exit_status(failed=1, total=1) == EXIT_MOST_FAILED


def test_strip_tags_and_produce_exit_with_the_same_policy(tmp_path, monkeypatch, capsys):
    from stream_cleaner.streaming import client

    missing = str(tmp_path / "missing.html")
    recipe = str(SAMPLES / "recipe.html")
    assert main(["strip-tags", recipe, missing]) == 3
    assert f"{missing}: skipped: read_error" in capsys.readouterr().err
    assert main(["strip-tags", missing]) == 4

    def produce(sources, settings, topic, **options):  # the real one, without a broker
        stats = client.ProduceStats()
        for source in sources:
            if source.doc.error:
                stats.skipped.append(f"{source.origin}: {source.doc.error}")
            else:
                stats.sent += 1
        return stats

    monkeypatch.setattr(client, "produce", produce)
    assert main(["produce", recipe]) == 0
    assert main(["produce", recipe, missing]) == 3
    assert f"not sent: {missing}: read_error" in capsys.readouterr().err
    assert main(["produce", missing]) == 4


# --- global options ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["-v", "clean", "x.html"],
        ["clean", "-v", "x.html"],
        ["clean", "x.html", "--verbose"],
        ["topics", "create", "-v"],
        ["-v", "topics", "list"],
        ["serve", "-v"],
    ],
)
def test_global_options_go_before_or_after_the_command(argv):
    assert parse_args(argv).verbose is True


def test_without_the_global_option_it_keeps_its_default():
    assert parse_args(["clean", "x.html"]).verbose is False
    assert parse_args(["topics", "list"]).verbose is False


def test_version_after_the_command():
    done = run("clean", "--version")
    assert done.returncode == 0
    assert done.stdout.startswith(b"stream-cleaner ")


def test_every_option_of_every_command_is_in_its_help():
    import argparse

    from stream_cleaner.cli import build_parser

    def parsers(parser, name):
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for command, sub in action.choices.items():
                    yield from parsers(sub, f"{name} {command}")

    found = 0
    for name, parser in parsers(build_parser(), "stream-cleaner"):
        text = parser.format_help()
        for action in parser._actions:
            for option in action.option_strings:
                assert option in text, f"{name} --help lacks {option}"
                found += 1
        assert "--verbose" in text, name  # the global options, after the command too
    assert found > 190


# --- what a directory walk reads -----------------------------------------------------------


def test_clean_and_stack_read_the_same_pages_of_a_folder(monkeypatch, capsysbinary):
    from stream_cleaner.streaming import stack

    assert main(["clean", "--no-progress", "--no-sentences", "--model", TINY, str(SAMPLES)]) == 0
    out, err = capsysbinary.readouterr()
    cleaned = [orjson.loads(line)["id"] for line in out.splitlines()]
    assert cleaned == sorted(str(path) for path in SAMPLES.glob("*.html"))  # not its README
    assert b"1 inputs were no page to clean (file_not_page 1)" in err
    produced = []

    def run_stack(sources, **options):
        produced.append([source.doc.id for source in sources])
        return stack.StackResult()

    monkeypatch.setattr(stack, "run_stack", run_stack)
    assert main(["stack"]) == 0  # the bundled samples
    assert main(["stack", str(SAMPLES)]) == 0
    assert produced == [cleaned, cleaned]


# --- the progress bar ----------------------------------------------------------------------


def test_the_progress_bar_shows_a_total_and_an_eta_for_files_and_trees(tmp_path, capsys):
    args = ["clean", "--progress", "--model", TINY, "-o", str(tmp_path / "out.jsonl")]
    assert main([*args, str(SAMPLES), str(SAMPLES / "recipe.html")]) == 0
    bar = capsys.readouterr().err
    assert "7/7 [" in bar
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d", bar)  # elapsed<remaining
    # a WARC holds an unknown number of pages: a count and a rate, no total
    (tmp_path / "crawl.warc").write_bytes(b"")
    assert main([*args, str(SAMPLES), str(tmp_path / "crawl.warc")]) == 0
    assert "6doc [" in capsys.readouterr().err


def test_the_progress_bar_shows_on_a_terminal_that_reports_no_size(tmp_path):
    import fcntl
    import os
    import struct
    import termios

    # a pseudo-terminal of 0 x 0 (a container's before it is sized): tqdm took 0 rows for no
    # room and printed nothing at all
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    command = [sys.executable, "-m", "stream_cleaner", "clean", str(SAMPLES), "--model", TINY,
               "-o", str(tmp_path / "out.jsonl")]  # fmt: skip
    with subprocess.Popen(command, stderr=follower, stdout=subprocess.DEVNULL, env=env) as done:
        os.close(follower)
        shown = b""
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO: the process and its terminal are gone
                break
            if not data:
                break
            shown += data
    os.close(leader)
    assert done.returncode == 0
    assert b"6/6 [" in shown
    assert b"stream-cleaner clean: 6 documents" in shown
