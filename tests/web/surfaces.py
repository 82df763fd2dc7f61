"""Read one pair's default answer off every browse surface of a served site: the hardware page's row, the
model page's row, ``/models?fits=``'s row and the pair page, each as the text the page shows."""

from __future__ import annotations

import functools
import html as html_lib
import re
from dataclasses import dataclass
from urllib.parse import quote

from fastapi.testclient import TestClient


@dataclass(frozen=True)
class Shown:
    """One pair as a surface shows it: the verdict (its key) and the figures as formatted text."""

    verdict: str
    single: str
    aggregate: str
    batch_star: str | None = None


def _cells(row: str) -> list[str]:
    """A row's cells as text; an "n/a" without the number of its reason's note."""
    row = re.sub(r"<sup>.*?</sup>", "", row)
    return [
        html_lib.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)
    ]


@functools.cache
def _rows(client: TestClient, page: str) -> dict[str, list[str]]:
    """A page's table rows by the pair page each links to (read once per page and client)."""
    out: dict[str, list[str]] = {}
    for row in re.findall(r"<tr(?: data-verdict=\"[a-z]+\")?>(.*?)</tr>", client.get(page).text, flags=re.S):
        for href in set(re.findall(r'href="(/pair/[^"?]+)"', row)):
            out.setdefault(href, []).append(row)
    return out


def has_row(client: TestClient, page: str, hw_id: str, model_id: str) -> bool:
    """Whether the page's tables have a row of the pair."""
    return f"/pair/{quote(hw_id)}/{quote(model_id)}" in _rows(client, page)


def rank_cells(client: TestClient, page: str, hw_id: str, model_id: str) -> list[str]:
    """Every cell of the rank table's row of (hw_id, model_id) on ``/hardware/ID`` or ``/models/ID``."""
    rows = _rows(client, page).get(f"/pair/{quote(hw_id)}/{quote(model_id)}", [])
    assert len(rows) == 1, (page, hw_id, model_id, len(rows))
    return _cells(rows[0])


def rank_row(client: TestClient, page: str, hw_id: str, model_id: str) -> Shown:
    """The rank table's row of (hw_id, model_id) on ``/hardware/ID`` or ``/models/ID``."""
    rows = _rows(client, page).get(f"/pair/{quote(hw_id)}/{quote(model_id)}", [])
    assert len(rows) == 1, (page, hw_id, model_id, len(rows))
    verdict = re.search(r'<span class="v ([a-z_]+)"[^>]*>', rows[0])
    assert verdict is not None
    _, _, single, aggregate, batch_star, *_ = _cells(rows[0])
    return Shown(verdict.group(1), single, aggregate, batch_star)


@dataclass(frozen=True)
class PerDevice:
    """A model page row's class columns as shown: devices, aggregate per device, the rented and owned
    prices (each its own column), USD per Mtok."""

    devices: str
    per_device: str
    rented: str
    owned: str
    usd_per_mtok: str

    @property
    def price(self) -> str:
        """The one price per hour as ``$X/h basis`` (the column it sits in names its basis)."""
        if self.rented == "no price":
            return "no price"
        return f"{self.rented} rental" if self.rented != "none" else f"{self.owned} owned"


def class_row(client: TestClient, model_id: str, hw_id: str) -> tuple[str, PerDevice]:
    """The model page's row of (hw_id, model_id): the heading of the class table it sits under and its
    per-device and per-dollar cells."""
    text = client.get(f"/models/{quote(model_id)}").text
    href = f'href="/pair/{quote(hw_id)}/{quote(model_id)}"'
    at = re.search(rf"<tr[^>]*><td><a {re.escape(href)}>", text).start()  # type: ignore[union-attr]
    heading = re.findall(r'<h3 id="class-[a-z]+">([^<]+)</h3>', text[:at])[-1]
    row = text[at : text.index("</tr>", at)]
    return heading, PerDevice(*_cells(row)[6:11])


@functools.cache
def class_tables(client: TestClient, model_id: str) -> dict[str, list[str]]:
    """The model page's class tables: each heading with the hardware ids of its rows, in their order."""
    text = client.get(f"/models/{quote(model_id)}").text
    out: dict[str, list[str]] = {}
    for heading, body in re.findall(r'<h3 id="class-[a-z]+">([^<]+)</h3>(.*?)</table>', text, flags=re.S):
        out[heading] = re.findall(
            rf'<tr[^>]*><td><a href="/pair/([^/"]+)/{re.escape(quote(model_id))}">', body
        )
    return out


@functools.cache
def _listing(client: TestClient, model_id: str) -> str:
    return client.get(f"/hardware?model={quote(model_id)}").text


def listing_row(client: TestClient, model_id: str, hw_id: str) -> list[str]:
    """``/hardware?model=``'s row of hw_id: every cell as shown (the model's columns after the name)."""
    text = _listing(client, model_id)
    at = text.index(f'<tr><td><a href="/hardware/{quote(hw_id)}">')
    return _cells(text[at : text.index("</tr>", at)])


def pair_cost(client: TestClient, hw_id: str, model_id: str, batch: int | None) -> tuple[str, str] | None:
    """The pair page's price (as "$X/h basis") and its cost table's USD per million output tokens at
    ``batch``; None where the page prices nothing."""
    text = client.get(f"/pair/{quote(hw_id)}/{quote(model_id)}").text
    price = re.search(r"Priced at <strong>([^<]+) USD/h</strong> \((\w+)\)", text)
    if price is None or batch is None:
        return None
    cells = re.search(
        rf'<tr><td class="n">{batch:,}</td>(?:<td[^>]*>[^<]*</td>){{4}}<td class="n">([^<]+)</td></tr>', text
    )
    assert cells is not None, (hw_id, model_id, batch)
    return f"${price.group(1)}/h {price.group(2)}", f"${cells.group(1)}"


def fits_row(client: TestClient, hw_id: str, model_id: str) -> Shown | None:
    """``/models?fits=hw_id``'s row of the model (None when the page leaves it out: it does not fit)."""
    rows = _rows(client, f"/models?fits={quote(hw_id)}").get(f"/pair/{quote(hw_id)}/{quote(model_id)}")
    if not rows:
        return None
    cells = _cells(rows[0])
    return Shown("fits", cells[5], cells[6])  # model, family, params x2, weights, one session, aggregate


def pair_page(client: TestClient, hw_id: str, model_id: str) -> Shown:
    """The pair page's verdict and headline figures (its ``data-k`` spans)."""
    text = client.get(f"/pair/{quote(hw_id)}/{quote(model_id)}").text
    verdict = re.search(r'<p class="verdict v ([a-z_]+)"', text)
    assert verdict is not None

    def shown(key: str) -> str:
        found = re.search(rf'data-k="{re.escape(key)}"[^>]*>([^<]*)<', text)
        assert found is not None, key
        return html_lib.unescape(found.group(1))

    return Shown(
        verdict.group(1), shown("single_session_tok_s"), shown("aggregate_tok_s"), shown("batch_star")
    )
