"""Reading documents from files, trees, WARC, JSON Lines and stdin; writing cleaned ones."""

from stream_cleaner.io.readers import (
    ReaderError,
    ReadStats,
    Source,
    count_documents,
    iter_documents,
)
from stream_cleaner.io.writers import (
    CleanEvalWriter,
    DocumentWriter,
    JsonlWriter,
    TextTreeWriter,
    WarcWriter,
)

__all__ = [
    "CleanEvalWriter",
    "DocumentWriter",
    "JsonlWriter",
    "ReadStats",
    "ReaderError",
    "Source",
    "TextTreeWriter",
    "WarcWriter",
    "count_documents",
    "iter_documents",
]
