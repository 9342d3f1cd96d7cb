"""Labelled pages: what a person said about each block of a page, one JSON file per page.

The annotation view of the web demo writes these files and the block labeller's training
reads them (`read_annotations`). A file looks like this::

    {
      "format": "stream-cleaner.annotations",
      "version": 1,
      "source": "news/2024-05-01.html",
      "html_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "parser": "lexbor",
      "blocks": [
        {"index": 0, "text": "Home News Sport", "tag_path": "html body nav ul li a",
         "label": "boilerplate", "kind": "list"},
        {"index": 1, "text": "The council approved the budget.", "tag_path": "html body p",
         "label": "content", "kind": "paragraph"}
      ]
    }

- ``source``: the page's name: its path under the annotation folder, or an uploaded file's name.
- ``html_sha256``: SHA-256 (hex) of the page file's bytes, so labels can be matched to the page
  they were made on, and a changed page is noticed.
- ``parser``: the `parse.parse_blocks` backend whose blocks were labelled; parsing the page
  again with it gives the same blocks, in the same order, with the same ``index``.
- ``blocks``: every block of the page in reading order (`parse.parse_blocks`): its ``index``,
  ``text`` and ``tag_path`` as the parser made them, its ``label`` (one of `LABELS`) and its
  ``kind`` (one of `KINDS`).

Files are named ``<source stem>-<first 12 hex digits of html_sha256>.json`` (`annotation_filename`)
and written atomically. `predict_page` pre-fills the labels from the cleaner's decisions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .document import Block, CleanedDocument
    from .lm import LanguageModel
    from .settings import CleanerSettings

FORMAT = "stream-cleaner.annotations"
VERSION = 1
CONTENT = "content"
BOILERPLATE = "boilerplate"
LABELS = (CONTENT, BOILERPLATE)
PARAGRAPH = "paragraph"
HEADING = "heading"
LIST = "list"
KINDS = (PARAGRAPH, HEADING, LIST)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class AnnotationError(ValueError):
    """A file or a mapping that is not a valid page annotation."""


@dataclass(frozen=True, slots=True)
class BlockAnnotation:
    """The label of one block.

    Attributes:
        index: the block's position in reading order (`Block.index`).
        text: the block's text as the parser made it.
        tag_path: the block's tag path (`Block.tag_path`).
        label: ``content`` or ``boilerplate``.
        kind: ``paragraph``, ``heading`` or ``list``.
    """

    index: int
    text: str
    tag_path: str
    label: str
    kind: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "tag_path": self.tag_path,
            "label": self.label,
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, value: Any) -> BlockAnnotation:
        """A block from its JSON mapping.

        Raises:
            AnnotationError: a field is missing, of the wrong type or not an allowed value.
        """
        if not isinstance(value, dict):
            raise AnnotationError("a block must be a JSON object")
        index = value.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise AnnotationError("a block's index must be a non-negative integer")
        for name in ("text", "tag_path", "label", "kind"):
            if not isinstance(value.get(name), str):
                raise AnnotationError(f"block {index}: {name} must be a string")
        if value["label"] not in LABELS:
            raise AnnotationError(f"block {index}: label must be one of {LABELS}")
        if value["kind"] not in KINDS:
            raise AnnotationError(f"block {index}: kind must be one of {KINDS}")
        return cls(index, value["text"], value["tag_path"], value["label"], value["kind"])


@dataclass(frozen=True, slots=True)
class PageAnnotation:
    """The labels of one page (the whole file)."""

    source: str
    html_sha256: str
    blocks: tuple[BlockAnnotation, ...]
    parser: str = "lexbor"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "source": self.source,
            "html_sha256": self.html_sha256,
            "parser": self.parser,
            "blocks": [block.to_dict() for block in self.blocks],
        }

    @classmethod
    def from_dict(cls, value: Any) -> PageAnnotation:
        """A page annotation from its JSON mapping (``format`` and ``version`` optional).

        Raises:
            AnnotationError: the mapping is not a valid annotation.
        """
        if not isinstance(value, dict):
            raise AnnotationError("an annotation must be a JSON object")
        if value.get("format", FORMAT) != FORMAT:
            raise AnnotationError(f"format must be {FORMAT!r}")
        if value.get("version", VERSION) != VERSION:
            raise AnnotationError(f"unsupported version {value.get('version')!r}")
        source, digest = value.get("source"), value.get("html_sha256")
        if not isinstance(source, str) or not source:
            raise AnnotationError("source must be a non-empty string")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise AnnotationError("html_sha256 must be 64 lower-case hex digits")
        parser = value.get("parser", "lexbor")
        if not isinstance(parser, str):
            raise AnnotationError("parser must be a string")
        raw_blocks = value.get("blocks")
        if not isinstance(raw_blocks, list):
            raise AnnotationError("blocks must be a list")
        blocks = tuple(BlockAnnotation.from_dict(block) for block in raw_blocks)
        indexes = [block.index for block in blocks]
        if len(set(indexes)) != len(indexes):
            raise AnnotationError("two blocks have the same index")
        return cls(source, digest, blocks, parser)


def html_sha256(body: bytes) -> str:
    """The ``html_sha256`` of a page file's bytes."""
    return hashlib.sha256(body).hexdigest()


def annotation_filename(source: str, digest: str) -> str:
    """The file name of a page's annotation: ``<source stem>-<digest[:12]>.json``."""
    stem = _UNSAFE_NAME.sub("_", Path(source).stem).strip("._") or "page"
    return f"{stem[:80]}-{digest[:12]}.json"


def write_annotation(directory: str | os.PathLike[str], page: PageAnnotation) -> Path:
    """Write ``page`` into ``directory`` (created if needed), replacing an earlier version.

    Returns:
        The path of the file written.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / annotation_filename(page.source, page.html_sha256)
    text = json.dumps(page.to_dict(), ensure_ascii=False, indent=1) + "\n"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".annotation-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_annotation(path: str | os.PathLike[str]) -> PageAnnotation:
    """Read one annotation file.

    Raises:
        AnnotationError: the file is not valid JSON or not a valid annotation.
        OSError: the file cannot be read.
    """
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise AnnotationError(f"{path}: not JSON: {exc}") from None
    return PageAnnotation.from_dict(value)


def read_annotations(directory: str | os.PathLike[str]) -> Iterator[PageAnnotation]:
    """Every annotation file (``*.json``) of ``directory``, in file-name order."""
    for path in sorted(Path(directory).glob("*.json")):
        yield read_annotation(path)


def find_annotation(
    directory: str | os.PathLike[str], source: str, digest: str
) -> PageAnnotation | None:
    """The saved annotation of this page, or ``None``."""
    path = Path(directory) / annotation_filename(source, digest)
    if not path.is_file():
        return None
    page = read_annotation(path)
    return page if page.source == source and page.html_sha256 == digest else None


def kind_of(block: Block) -> str:
    """The block's kind from its container: heading, list or paragraph."""
    if block.in_heading:
        return HEADING
    if block.in_list:
        return LIST
    return PARAGRAPH


def predict_labels(blocks: Sequence[Block], document: CleanedDocument) -> list[str]:
    """One label per block: ``content`` when most of its sentences were kept by the cleaner.

    A block without sentences (no words at all) is ``boilerplate``.
    """
    kept: dict[int, int] = {}
    total: dict[int, int] = {}
    for sentence in document.sentences:
        total[sentence.block_index] = total.get(sentence.block_index, 0) + 1
        if sentence.keep:
            kept[sentence.block_index] = kept.get(sentence.block_index, 0) + 1
    return [
        CONTENT if 2 * kept.get(block.index, 0) > total.get(block.index, 0) else BOILERPLATE
        for block in blocks
    ]


def predict_page(
    body: bytes,
    source: str,
    *,
    settings: CleanerSettings | None = None,
    model: LanguageModel | None = None,
) -> PageAnnotation:
    """A page's blocks labelled with the current prediction, ready to be corrected.

    Args:
        body: the page file's bytes.
        source: the page's name, recorded in the annotation.
        settings: the cleaner's settings (parser, threshold); the defaults when omitted.
        model: the language model; the settings' model when omitted.

    Raises:
        decode.BinaryContent: the bytes are not a text format.
        parse.PageTooLarge: the page has more blocks than ``settings.max_blocks``, or markup
            too heavy to parse (as `clean_document` refuses it).
        budget.TimeBudgetExceeded: parsing took more than ``settings.time_budget_seconds`` of
            CPU.
    """
    from .budget import deadline_after
    from .decode import decode_body
    from .document import RawDocument
    from .parse import parse_blocks
    from .pipeline import clean_document
    from .settings import CleanerSettings

    settings = settings or CleanerSettings()
    text = decode_body(body).text
    blocks = parse_blocks(
        text,
        parser=settings.parser,
        deadline=deadline_after(settings.time_budget_seconds),
        max_blocks=settings.max_blocks,
    )
    document = clean_document(
        RawDocument(body=text, id=source, content_type="text/html"),
        settings=settings,
        model=model,
    )
    labels = predict_labels(blocks, document)
    return PageAnnotation(
        source=source,
        html_sha256=html_sha256(body),
        blocks=tuple(
            BlockAnnotation(block.index, block.text, block.tag_path, label, kind_of(block))
            for block, label in zip(blocks, labels, strict=True)
        ),
        parser=settings.parser,
    )
