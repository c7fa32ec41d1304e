"""API calls keep no session state.

Gradio keeps a :class:`gradio.state_holder.SessionState` (a copy of the app's config,
about 180 KB here) for every ``session_hash`` it sees, up to 10,000 of them; each
``/gradio_api/call/ask`` brings a new hash, so memory grew from 443 to 1,314 MB over
~3,300 calls while the engine stayed flat. :func:`keep_no_api_sessions` drops the state
of a session once a public API event (``/ask``, ``/check``) of it has run, unless the
same session also ran an event of the page (a browser's chat keeps its history).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

#: Page sessions remembered (so that their state is kept); the oldest are forgotten first.
MAX_PAGE_SESSIONS = 10_000


def keep_no_api_sessions(blocks: Any) -> None:  # gradio.Blocks
    """Wrap ``blocks.process_api`` so that API-only sessions leave no state behind."""
    original = blocks.process_api
    pages: OrderedDict[str, None] = OrderedDict()
    lock = threading.Lock()

    async def process_api(*args: Any, **kwargs: Any) -> dict[str, Any]:
        block_fn = kwargs.get("block_fn", args[0] if args else None)
        session = kwargs.get("session_hash")
        fn = blocks.fns.get(block_fn) if isinstance(block_fn, int) else block_fn
        api = fn is not None and getattr(fn, "api_visibility", "private") == "public" and bool(fn.api_name)
        if session and not api:
            with lock:
                pages[session] = None
                pages.move_to_end(session)
                while len(pages) > MAX_PAGE_SESSIONS:
                    pages.popitem(last=False)
        try:
            result: dict[str, Any] = await original(*args, **kwargs)  # Gradio's Blocks.process_api
            return result
        finally:
            if session and api:
                with lock:
                    page = session in pages
                if not page:
                    forget_session(blocks, session)

    blocks.process_api = process_api


def forget_session(blocks: Any, session: str) -> None:
    """Drop one session's state from Gradio's state holder."""
    holder = blocks.state_holder
    with holder.lock:
        holder.session_data.pop(session, None)
        holder.time_last_used.pop(session, None)
