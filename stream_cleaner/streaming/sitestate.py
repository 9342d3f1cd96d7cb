"""Site-template statistics in the stream: a changelog-backed Faust table keyed by site.

The cleaning thread works on an in-memory `SiteTemplates` (fast, bounded). The table mirrors
it: after each batch the sites it changed are written to the table (their remembered pages,
`sites.encode_pages`, a few kilobytes) and the sites it forgot are deleted, so the table's
changelog topic always holds the state of every tracked site. A restarted or rebalanced
worker recovers the table from that topic, as Faust does for every table, and rebuilds its
in-memory statistics from it before its first batch (and again whenever its partitions
change).

Keys and partitions: the table writes a site's state to the changelog partition that the
producer's default partitioner (murmur2) gives the site's name. A crawler that keys its
messages by site (`sites.site_of` of the URL: the host without ``www.``) with Kafka's default
partitioner puts a site's pages on that same partition, so one worker owns both. Messages
keyed otherwise still work: the worker keeps statistics for every site it sees, but a site
spread over several workers is learnt by each of them separately, and a worker recovers only
the sites whose partition it owns.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ..sites import SiteSettings, SiteTemplates, decode_pages, encode_pages

log = logging.getLogger(__name__)

TABLE_NAME = "site-templates"


def changelog_topic(group_id: str) -> str:
    """The name of the table's changelog topic (Faust's ``<app id>-<table>-changelog``)."""
    return f"{group_id}-{TABLE_NAME}-changelog"


class SiteState:
    """The worker's site statistics and the table that persists them.

    Args:
        settings: window, thresholds and caps.
        table: the Faust table (``bytes`` keys and values).
    """

    def __init__(self, settings: SiteSettings, table: Any) -> None:
        self.templates = SiteTemplates(settings)
        self.table = table
        self._assignment: frozenset[Any] | None = None

    def sync(self, assignment: Iterable[Any]) -> None:
        """Rebuild the statistics from the table when the worker's partitions changed."""
        assignment = frozenset(assignment)
        if assignment == self._assignment:
            return
        self._assignment = assignment
        self.templates.clear()
        loaded = 0
        for key, value in list(self.table.items()):
            try:
                self.templates.restore(key.decode("utf-8"), decode_pages(value))
                loaded += 1
            except (ValueError, UnicodeDecodeError):
                log.warning("dropping unreadable site state %r from the table", key)
        log.info("site templates: %d sites loaded from the table", loaded)
        self.save()  # sites over the cap were forgotten while loading: delete them

    def save(self) -> int:
        """Write the sites changed since the last call to the table; delete forgotten ones.

        Returns:
            How many table entries were written or deleted.
        """
        changed, forgotten = self.templates.take_changes()
        for site in forgotten:
            self.table.pop(site.encode("utf-8"), None)
        for site in changed:
            self.table[site.encode("utf-8")] = encode_pages(self.templates.pages(site))
        return len(changed) + len(forgotten)
