"""The Results table is one view (issue 37 item 3, "a new Results column: one view function"):
results.round_view gives its columns and rows; the CSV export writes it and the page's Results dialog
draws it from GET /api/results (static/viewtable.js), so a column added to results.RESULT_COLUMNS is
in the CSV, in the page's JSON and on the page, with nothing else changed.

A real Mosquitto and the demo hall in this process (so a test can extend the view), Debian's
headless Chromium for the page.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from rackside.hall.console.scoring import results
from support import browser as chromium
from support.console import Http, demo_hall, post

PASSWORD = "test-director-pw"
TABLE = 7  # no clock: recorded from its slip, by table (no TSH files)


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    with demo_hall(tmp_path_factory.mktemp("results-view"), "1-2", [1], {1: [(-60, ("press", 2))]}, PASSWORD) as h:
        http = Http(h.server.url)
        http.token = http.login(PASSWORD, "Chief TD")
        status, out = post(http, f"/api/result/{TABLE}", {"names": ["Ann", "Bob"], "slip": [410, 388], "confirm": True,
                                                          "no_clock": {"reason": "no clock at this table", "penalties": [10, 0]}})
        assert status == 200 and out.get("confirmed"), out
        h.http = http
        yield h


@pytest.fixture
def with_column(monkeypatch):
    """The view with one more column, as a newcomer adds it: one entry."""
    extra = results.Column("letters1", "Letters in side 1's name", lambda r: len(r.names[0]), "number")
    monkeypatch.setattr(results, "RESULT_COLUMNS", (*results.RESULT_COLUMNS, extra))
    return extra


def test_the_csv_and_the_pages_json_are_the_same_view(hall):
    status, raw, _ = hall.http.call("GET", "/api/export/round.csv?by=table")
    assert status == 200, raw
    lines = list(csv.reader(io.StringIO(raw.decode())))
    status, raw, _ = hall.http.call("GET", "/api/results")
    assert status == 200, raw
    view = json.loads(raw)
    assert lines[0] == [c["key"] for c in view["columns"]] == [c.key for c in results.RESULT_COLUMNS]
    assert lines[1:] == [["" if v is None else str(v) for v in row] for row in view["rows"]]
    row = dict(zip(lines[0], lines[1]))
    assert (row["table"], row["name1"], row["slip1"], row["penalty1"], row["score1"], row["clock_record"]) == \
        (str(TABLE), "Ann", "410", "10", "400", results.NO_CLOCK)
    status, raw, _ = hall.http.call("GET", "/api/results?division=Z")
    assert status == 400 and b"no division 'Z'" in raw


def test_a_new_column_is_one_entry_in_the_csv_and_the_pages_json(hall, with_column):
    status, raw, _ = hall.http.call("GET", "/api/export/round.csv?by=table")
    lines = list(csv.reader(io.StringIO(raw.decode())))
    assert lines[0][-1] == "letters1" and lines[1][-1] == "3"
    view = json.loads(hall.http.call("GET", "/api/results")[1])
    assert view["columns"][-1] == {"key": "letters1", "heading": "Letters in side 1's name", "kind": "number", "page": True}
    assert view["rows"][0][-1] == 3


@pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")
def test_the_page_draws_the_views_headings_and_cells(hall, browser, with_column):
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.click("#open-results")
    page.wait_for_selector("#results[open]")
    page.wait_for_selector("#results[open] #results-table td")
    headings = page.locator("#results-table th").all_text_contents()
    assert headings == [c.heading for c in results.RESULT_COLUMNS if c.page]
    assert "Letters in side 1's name" in headings and "TSH player 1" not in headings  # page=False: the CSV's only
    assert page.text_content('#results-table td[data-key="letters1"]') == "3"
    assert page.text_content('#results-table td[data-key="name1"]') == "Ann"
    page.click('#results-table td[data-key="table"]')  # a row opens its table
    page.wait_for_selector("#detail:not([hidden])")
    assert f"Table {TABLE}" in page.text_content("#detail-title")
    assert not page.errors, page.errors
    page.close()
