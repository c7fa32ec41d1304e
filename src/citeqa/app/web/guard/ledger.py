"""Which files this server's upload route wrote, for which page session.

Gradio takes a file argument of any event as a ``FileData`` dict whose ``path`` the
client names. Mounted with ``gr.mount_gradio_app`` its own check of that path is off
(``blocks.has_launched`` stays False), so a crafted ``/gradio_api/queue/join`` could
name any file of the server. :class:`UploadLedger` records every path the upload route
answered with, under the page session that uploaded it; the guard
(:mod:`citeqa.app.web.server`) refuses any request whose body names a file that is not in
the ledger for the request's own session (:func:`file_paths` finds them), before Gradio
reads it. The ledger also sizes the upload quota: Gradio's copies of the page's own
outputs (conversation downloads, charts) lie in the same folder but are not uploads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

#: Most entries kept; the oldest are forgotten first (their files are swept by age anyway).
MAX_ENTRIES = 10_000


@dataclass(frozen=True, slots=True)
class Entry:
    """One uploaded file: its real path, size in bytes, the session that uploaded it and when."""

    path: str
    size: int
    session: str
    at: float


def real(path: str) -> str:
    """``path`` with links and ``..`` resolved, so one file has one name."""
    return os.path.realpath(path)


class UploadLedger:
    """Uploaded files by (session, real path); thread-safe, bounded."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: dict[tuple[str, str], Entry] = {}
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def record(self, session: str, paths: Iterable[str]) -> None:
        """The upload route wrote ``paths`` for ``session``."""
        now = time.time()
        with self._lock:
            for path in paths:
                name = real(str(path))
                try:
                    size = os.lstat(name).st_size
                except OSError:
                    continue
                self._entries.pop((session, name), None)
                self._entries[(session, name)] = Entry(name, size, session, now)
            while len(self._entries) > self.max_entries:
                self._entries.pop(next(iter(self._entries)))

    def owns(self, session: str | None, path: str) -> bool:
        """Whether ``session`` uploaded the file at ``path`` and it is still there."""
        if not session:
            return False
        name = real(path)
        with self._lock:
            known = (session, name) in self._entries
        return known and os.path.isfile(name)

    def owners(self, path: str) -> frozenset[str]:
        """The sessions that uploaded the file at ``path`` (none: it is not a pending upload)."""
        name = real(path)
        with self._lock:
            return frozenset(session for session, known in self._entries if known == name)

    def forget(self, paths: Iterable[str]) -> None:
        """The files at ``paths`` were consumed or removed: no session owns them any more."""
        names = {real(str(p)) for p in paths}
        with self._lock:
            for key in [k for k in self._entries if k[1] in names]:
                del self._entries[key]

    def used_bytes(self) -> int:
        """Bytes of the uploads still waiting in the cache (each file counted once)."""
        self.prune()
        with self._lock:
            sizes = {e.path: e.size for e in self._entries.values()}
        return sum(sizes.values())

    def prune(self, max_age_s: float | None = None) -> None:
        """Forget entries whose file is gone, and (with ``max_age_s``) those older than that."""
        now = time.time()
        with self._lock:
            entries = list(self._entries.items())
        gone = [
            k for k, e in entries if not os.path.isfile(e.path) or (max_age_s is not None and now - e.at > max_age_s)
        ]
        with self._lock:
            for key in gone:
                self._entries.pop(key, None)


def file_paths(data: Any) -> Iterator[str]:
    """Every file path a request body names: the ``path`` of each dict that has a string one.

    Any such dict counts, with or without Gradio's ``meta`` marker, so that no spelling
    of a file argument slips past; a URL as ``path`` (which Gradio would fetch) is one too.
    """
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            value = item.get("path")
            if isinstance(value, str):
                yield value
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
