"""The home page's machine record as a site links it: rows of profiles the site lists, linked to their
pair pages only where the site resolves the detected machine."""

from __future__ import annotations

from servebound.web.pages.site import SiteData
from servebound.web.pages.this_machine import MachineFit, MachineFitRow, on_site
from tests.web.conftest import site_lists


def _row(profile: str, hw: str) -> MachineFitRow:
    return MachineFitRow(
        profile, profile, "q4_0", "llama.cpp", 3.8, 100.0, 100.0, None, None, f"/pair/{hw}/{profile}"
    )


def _site() -> SiteData:
    hardware, models = site_lists()
    return SiteData(hardware, models)


def test_rows_outside_the_site_are_left_out_and_the_rest_keep_their_links() -> None:
    site = _site()
    listed = next(iter(site.models_by_id))
    hw = next(iter(site.hardware_by_id))
    fit = MachineFit(hw, "a machine", None, (_row(listed, hw), _row("not-on-this-site", hw)), 2, 2, 20.0)
    shown = on_site(fit, site)
    assert [r.profile_id for r in shown.rows] == [listed]
    assert shown.rows[0].href == f"/pair/{hw}/{listed}"
    assert (shown.fitting, shown.considered) == (2, 2)


def test_a_machine_the_site_cannot_resolve_keeps_rows_without_links() -> None:
    site = _site()
    listed = next(iter(site.models_by_id))
    fit = MachineFit("no-such-machine", "x", None, (_row(listed, "no-such-machine"),), 1, 1, 20.0)
    assert [r.href for r in on_site(fit, site).rows] == [""]


def test_nothing_detected_passes_through() -> None:
    fit = MachineFit(None, None, "auto found no GPU", (), 0, 0, 20.0)
    assert on_site(fit, _site()) == fit
