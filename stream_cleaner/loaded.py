"""Models a process loads once and its threads share: `LoadedOnce`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class LoadedOnce(Generic[V]):
    """Objects by key, each loaded by the first caller that asks for it; the others wait for
    that load instead of doing it again (a worker's cleaning thread and its web requests ask
    at once). Asking for a loaded key takes no lock."""

    def __init__(self) -> None:
        self._items: dict[Hashable, V] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, load: Callable[..., V], *args: Any) -> V:
        """The object of ``key``, made by ``load(*args)`` the first time."""
        item = self._items.get(key)
        if item is None:
            with self._lock:
                item = self._items.get(key)
                if item is None:
                    item = self._items[key] = load(*args)
        return item

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
