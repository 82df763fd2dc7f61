"""The heavy lane: requests that search, plan, rank or render a computed page run one at a time, whole,
and never take more than about a third of the server's time while light requests are being asked.

A heavy request (:func:`is_heavy`) takes the lane's one slot before anything of it runs: its query is
not parsed, its answer not looked up, computed or sent until the slot is its own, and it holds the slot
until its last byte is sent. Then, if light requests came while it ran, the lane rests: the next
heavy request waits twice as long as this one took (:data:`REST_FACTOR`), so clients that ask heavy
questions back to back get the process at most a third of the time while others ask light ones; once
no light request has been in flight for :data:`LIGHT_GAP_S`, or when none came, it opens at once.

That is the budget, enforced before the work starts: at most :data:`HEAVY_QUEUE` requests wait, and
one that finds the queue full, or waits longer than :data:`HEAVY_WAIT_S`, is answered ``503`` with
``Retry-After`` and the API's error shape (``{"error": {"status", "field", "message"}}``) before any
of its work. A waiting request costs the process nothing (an ``asyncio`` future). Light requests
(``/api/decode``, the catalog, cached pages, assets, the machine files) never enter the lane.
``bench/bench_load.py --heaviest`` measures a light request's rate under that attack.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from urllib.parse import parse_qs

from fastapi import Request
from fastapi.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from servebound.catalog import snapshot
from servebound.catalog.hardware_names import normalize_ref
from servebound.web.app.errors import error_response

#: API paths whose every request is heavy work: a search over a system's layouts, a fleet plan, a cost
#: curve, a prefill (a prompt-length scan with range=true), a catalog ranking (the ``heavy_route``s).
HEAVY_PATHS = frozenset({"/api/layout", "/api/plan", "/api/cost", "/api/prefill", "/api/rank"})
#: Paths that are heavy when their hardware is a system of devices (its best layout is searched).
SYSTEM_PATHS = frozenset({"/api/decode"})
_NX = re.compile(r"^\d+\s*x", re.IGNORECASE)
#: Every pair page (its mirror and its sections) is rendered from a computation.
PAIR_PAGES = "/pair/"
#: Pages whose query asks for something other than their cached default (filters, a system's model,
#: a toy of the derivation).
QUERIED_PAGES = ("/hardware", "/models", "/derivation")
#: Heavy requests that may wait for the slot; one more is refused at once.
HEAVY_QUEUE = 8
#: The longest a heavy request waits for the slot before it is refused (seconds).
HEAVY_WAIT_S = 15.0
#: What a refused request is told to wait before asking again (seconds).
RETRY_AFTER_S = 2
#: After a heavy request that held the slot t seconds while light requests came, the lane stays closed
#: REST_FACTOR x t while light ones are still asked: heavy work takes at most 1 / (1 + REST_FACTOR) of
#: the time.
REST_FACTOR = 2.0
#: A resting lane opens once no light request has been in flight for this long (seconds).
LIGHT_GAP_S = 0.05
#: How often a resting lane looks whether light requests are still in flight (seconds).
REST_POLL_S = 0.002


def asks_a_system(query_string: bytes) -> bool:
    """Whether a query's ``hardware`` names a system of devices (an ``NxID`` or a catalog system): its
    answer is taken at its best layout, a search."""
    refs = parse_qs(query_string.decode("latin-1")).get("hardware", [])
    for ref in refs:
        if _NX.match(ref.strip()):
            return True
        entry = snapshot.hardware_index().get(normalize_ref(ref))
        if entry is not None and snapshot.hardware_is_system(entry):
            return True
    return False


def is_heavy(scope: Scope) -> bool:
    """Whether a request takes the lane: a heavy API path, a pair page, a queried page, or a decode on a
    system (answered at its best layout)."""
    path: str = scope.get("path", "")
    if path in HEAVY_PATHS or path.startswith(PAIR_PAGES):
        return True
    if path in SYSTEM_PATHS:
        return asks_a_system(scope.get("query_string", b""))
    return bool(scope.get("query_string")) and path.startswith(QUERIED_PAGES)


class Lane:
    """The lane's state, one per app (``app.state.lane``): whether the slot is taken, the requests
    waiting for it, and the light requests in flight."""

    def __init__(self) -> None:
        self.busy = False
        #: Heavy requests waiting for the slot, first come first served.
        self.queue: deque[asyncio.Future[None]] = deque()
        #: Light requests in flight now, when the last one began or ended (monotonic seconds), and how
        #: many have begun.
        self.light = 0
        self.light_at = -1e9
        self.light_begun = 0
        #: Heavy requests refused (queue full or waited too long), since the app started.
        self.refused = 0

    async def enter(self) -> str | None:
        """Take the slot, waiting in the queue; None once taken, else why it was refused."""
        if not self.busy and not self.queue:
            self.busy = True
            return None
        if len(self.queue) >= HEAVY_QUEUE:
            return f"{len(self.queue)} heavy requests are waiting already"
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.append(turn)
        try:
            await asyncio.wait_for(asyncio.shield(turn), HEAVY_WAIT_S)
            return None
        except (TimeoutError, asyncio.CancelledError) as stop:
            if turn in self.queue:
                self.queue.remove(turn)
            elif turn.done() and not turn.cancelled():  # the slot came as the wait ended: pass it on
                self.leave()
            else:  # being handed from another event loop: ``_give`` passes it on
                turn.cancel()
            if isinstance(stop, asyncio.CancelledError):
                raise
            return f"none freed within {HEAVY_WAIT_S:g} s"

    def leave(self) -> None:
        """Hand the slot to the first waiting request (or free it)."""
        if not self.queue:
            self.busy = False
            return
        turn = self.queue.popleft()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if turn.get_loop() is running:
            self._give(turn)
        else:  # a waiter of another event loop (a test client's): woken in its own loop
            turn.get_loop().call_soon_threadsafe(self._give, turn)

    def _give(self, turn: asyncio.Future[None]) -> None:
        if turn.done():  # refused meanwhile: the next one
            self.leave()
        else:
            turn.set_result(None)

    async def rest(self, seconds: float) -> None:
        """Hold the slot ``seconds`` longer, or until no light request has been in flight for
        :data:`LIGHT_GAP_S` (light clients pause between requests)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if not self.light and time.monotonic() - self.light_at > LIGHT_GAP_S:
                return
            await asyncio.sleep(min(left, REST_POLL_S))


class HeavyLane:
    """ASGI middleware: heavy requests one at a time with a rest after each (the module docstring)."""

    def __init__(self, app: ASGIApp, lane: Lane) -> None:
        self.app = app
        self.lane = lane

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lane = self.lane
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif not is_heavy(scope):
            lane.light += 1
            lane.light_begun += 1
            lane.light_at = time.monotonic()
            try:
                await self.app(scope, receive, send)
            finally:
                lane.light -= 1
                lane.light_at = time.monotonic()
        elif (why := await lane.enter()) is not None:
            lane.refused += 1
            await busy_response(scope, why)(scope, receive, send)
        else:
            began, begun = time.monotonic(), lane.light_begun
            try:
                await self.app(scope, receive, send)
            finally:
                try:
                    if lane.light_begun > begun:  # light requests came meanwhile: they get their turn
                        await lane.rest(REST_FACTOR * (time.monotonic() - began))
                finally:
                    lane.leave()


def busy_response(scope: Scope, why: str) -> Response:
    """503 with Retry-After in the site's error shape (the API's JSON, a page's HTML), before any of the
    request's work."""
    message = (
        f"the server is busy with heavy requests (one runs at a time and {HEAVY_QUEUE} may wait; {why}); "
        f"ask again in {RETRY_AFTER_S} s"
    )
    response = error_response(Request(scope), 503, "request", message)
    response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response
