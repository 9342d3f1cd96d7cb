"""stream-cleaner: clean crawled web pages by language-model perplexity.

The core is plain synchronous Python: `clean_document` takes a page and returns a
`CleanedDocument`. Streaming, web and CLI layers are thin callers of it.
"""

from __future__ import annotations

import logging

__version__ = "0.1.0"

from .decide import DropReason, ErrorReason
from .document import Block, CleanedDocument, RawDocument, ScoredSentence
from .lm import LanguageModel, PerplexityModel, load_model, normalize
from .parse import extract_text, parse_blocks
from .pipeline import PerplexityProcessor, clean_document, clean_documents
from .segment import split_sentences
from .settings import CleanerSettings

__all__ = [
    "Block",
    "CleanedDocument",
    "CleanerSettings",
    "DropReason",
    "ErrorReason",
    "LanguageModel",
    "PerplexityModel",
    "PerplexityProcessor",
    "RawDocument",
    "ScoredSentence",
    "__version__",
    "clean_document",
    "clean_documents",
    "extract_text",
    "load_model",
    "normalize",
    "parse_blocks",
    "split_sentences",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
