"""The guard's event streams (rule 8 of :mod:`~citeqa.app.web.guard.middleware`): a page session's
events read by one stream at a time, and a client address's heartbeat streams counted.

Each runs the app through ``forward(send)`` and says whether it did; the guard answers a stream it
may not open (409, 429) itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from citeqa.app.web.guard.rules import OneEach, StreamLimit

ASGIMessage = dict[str, Any]
Send = Callable[[ASGIMessage], Awaitable[None]]
#: Runs the app for one request, answering through the ``send`` it is given.
Forward = Callable[[Send], Awaitable[None]]


async def one_stream(streams: OneEach, session: str, forward: Forward, send: Send) -> bool:
    """Run ``forward`` as the only open stream of ``session``'s events; False (nothing run) while
    another is open. The session is released as the stream's last message goes out, before the
    client reads the end: it may open the session's next stream at once."""
    if not streams.enter(session):
        return False
    done = False

    def leave() -> None:
        nonlocal done
        if not done:
            done = True
            streams.leave(session)

    async def sent(message: ASGIMessage) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            leave()
        await send(message)

    try:
        await forward(sent)
    finally:
        leave()
    return True


async def counted_stream(streams: StreamLimit, client: str, forward: Forward, send: Send) -> bool:
    """Run ``forward`` as one of ``client``'s heartbeat streams; False (nothing run) when the client
    holds ``streams.limit`` of them open already."""
    if not streams.enter(client):
        return False
    try:
        await forward(send)
    finally:
        streams.leave(client)
    return True
