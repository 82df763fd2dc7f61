"""The date the pages carry: the day of ``SOURCE_DATE_EPOCH`` when it is set (the tests pin it, so a
run across midnight compares pages of one day), else the day the page is computed, in UTC."""

from __future__ import annotations

import datetime

import pytest

from servebound.web.pages.text import site_date


def test_the_pinned_day_is_the_epochs_day_in_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225599")  # 2025-12-31T23:59:59Z
    assert site_date() == "2025-12-31"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert site_date() == "2026-01-01"


@pytest.mark.parametrize("value", [None, "", "soon", "-5"])
def test_without_a_usable_epoch_the_day_is_todays_in_utc(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    else:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    before = datetime.datetime.now(datetime.UTC).date()
    day = datetime.date.fromisoformat(site_date())
    after = datetime.datetime.now(datetime.UTC).date()
    assert before <= day <= after
