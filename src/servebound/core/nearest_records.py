"""The nearest settings that fit, as records: what a decode result lists where no session fits.

The suggestions themselves are a question of their own (``questions.nearest``: it reads the catalog for
lighter formats and host rows and answers decode at each setting); it registers itself here, so the
core's decode result lists them without importing it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servebound.core.fields import documented


@dataclass(frozen=True)
class NearestFit:
    """One change to the question under which a session fits, and the speeds decode gives there."""

    change: str = documented(
        "`alloc_context` (the longest reservation that fits), `read_context` (paged cache), "
        "`weight_format` (the heaviest catalog format of the model that fits), `cpu_moe` or `gpu_layers` "
        "(weights in host RAM)"
    )
    value: int | str | bool = documented(
        "the setting: tokens, a catalog profile id, true (cpu_moe) or the layers kept on the device"
    )
    single_session_tok_s: float | None = documented("one session alone at that setting", "tok/s")
    aggregate_tok_s: float | None = documented(
        "T(b*) at that setting (null unless a batch clears the floor there)", "tok/s"
    )
    batch_star: int | None = documented("b* at that setting (null unless floor_fit)", "sessions")
    host: str | None = documented("the catalog host row an offload reads (null otherwise)", default=None)
    floor_fit: bool = documented("a batch clears the floor at that setting", default=False)


_SUGGEST: list[Callable[[Any], tuple[NearestFit, ...]]] = []


def register(suggest: Callable[[Any], tuple[NearestFit, ...]]) -> None:
    """Install the function that lists a result's nearest settings (``questions.nearest`` calls this)."""
    _SUGGEST[:] = [suggest]


def suggestions(result: Any) -> tuple[NearestFit, ...]:
    """The registered suggestions for a decode result (a RuntimeError where none is registered: import
    ``servebound.questions.nearest`` first, as every surface does)."""
    if not _SUGGEST:
        raise RuntimeError("no nearest-fit suggester registered: import servebound.questions.nearest")
    return _SUGGEST[0](result)
