"""The console's Devices page end to end (issue 19): a hall provisioned with TLS, the real
`rackside hall console` process, three simulated clocks and a station that start with only the
hall's join file, and Debian's Chromium: the director sees each device's code, assigns each from
the page, the clocks reconnect as their tables and play, and their events reach the console; a
table held by an online clock is refused unless "replace"; revoking disconnects."""

from __future__ import annotations

import os
import queue

import pytest
from support import browser as chromium
from support.broker import Recorder
from support.console import ConsoleProcess, Http
from support.hallclock import LiveClock
from support.wait import wait

from rackside.hall.device import joinfile as join
from rackside.hall.device.enrol import Enrolment
from rackside.hall.device.enrolled_output import WAITING
from rackside.hall.wire import join as wire_join
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")
PASSWORD = "director-pw"


def test_devices_are_numbered_from_the_console_and_play(make_broker, tmp_path):
    from playwright.sync_api import sync_playwright

    broker = make_broker(tables="", stations=0, tls=True)
    join_file = broker.dir / "join.toml"
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, extra=f'ca_file = "{broker.dir / "tls" / "ca.crt"}"\n').start()
    rec = Recorder(broker)
    clocks: dict[str, LiveClock] = {}
    station_changes: queue.Queue = queue.Queue()
    station = None
    try:
        for name in ("pi-1001", "pi-1002", "pi-1003"):
            cfg = tmp_path / f"{name}.toml"
            cfg.write_text(f'[clock]\ngame_time = "1:00"\n\n[hall]\njoin = "{join_file}"\n')
            clocks[name] = LiveClock(cfg, tmp_path / name, device_id=name)
        station = Enrolment(join.load(join_file), tmp_path / "station", "station", device="pi-2001", version="t",
                            on_change=lambda user, cfg: station_changes.put(user))
        station.start()
        with sync_playwright() as p:
            b = chromium.launch(p)
            page = chromium.login(b, console.url, PASSWORD)
            page.click("a[href='/devices']")
            page.wait_for_selector("body[data-ready='1']")
            wait(lambda: page.locator("#devices tbody tr").count() >= 4)  # (the page's CSP allows no eval: polled from here)
            # issue 35: a device waiting for its number is on the broker: shown connected, not "—"
            wait(lambda: page.locator("#devices tbody tr[data-state='waiting'] td:nth-child(6)",
                                      has_text="connected, waiting for its number").count() == 4)
            if os.environ.get("RACKSIDE_SCREENSHOTS"):  # docs/fleet.md's pictures
                page.screenshot(path=os.environ["RACKSIDE_SCREENSHOTS"] + "/console-devices-waiting.png")
            # a number typed and left while the director looks elsewhere survives the list's redraws
            page.locator("tr[data-device='pi-1002'] input.number").fill("7")
            page.click("#hall")  # focus leaves the list
            redrawn = int(page.get_attribute("body", "data-redrawn"))
            wait(lambda: int(page.get_attribute("body", "data-redrawn")) >= redrawn + 2)
            assert page.locator("tr[data-device='pi-1002'] input.number").input_value() == "7"
            page.locator("tr[data-device='pi-1002'] input.number").fill("")
            for n, (name, live) in enumerate(clocks.items(), start=1):
                row = page.locator(f"tr[data-device='{name}']")
                code = row.locator("td").nth(0).inner_text()
                pages = [(p, f"{WAITING[:3]}{i + 1}") for i, p in enumerate(wire_join.code_pages(code.replace(" ", "")))]
                assert len(pages) == 3
                wait(lambda: live.texts() in pages)  # the code the director reads off the clock, four digits at a time
                row.locator("input.number").fill(str(n))
                row.locator("button.assign").click()
                page.wait_for_selector(f"tr[data-device='{name}'][data-state='enrolled']")
            row = page.locator("tr[data-device='pi-2001']")
            assert row.locator("td").nth(1).inner_text() == "station"
            row.locator("input.number").fill("1")
            row.locator("button.assign").click()
            assert station_changes.get(timeout=10) == "station-1"
            for n, live in enumerate(clocks.values(), start=1):
                wait(lambda: live.texts() == (WAITING, f"{n:>4}"))
                status = f"rackside/v1/{broker.hall}/table/{n}/status"
                rec.wait_for(lambda r: any(t == status and is_online(p) for t, p, _ in r.messages))
            wait(lambda: page.locator("#devices tbody tr td:nth-child(6)", has_text="online").count() == 3)
            if os.environ.get("RACKSIDE_SCREENSHOTS"):
                page.screenshot(path=os.environ["RACKSIDE_SCREENSHOTS"] + "/console-devices.png")
            # a table held by an online clock: refused unless replace
            row = page.locator("tr[data-device='pi-1003']")
            row.locator("input.number").fill("1")
            row.locator("button.assign").click()
            said = []

            def refused_as_held():
                said.append(page.locator("#error").inner_text())
                return "held by device pi-1001" in said[-1]
            try:
                wait(refused_as_held)
            except TimeoutError:
                raise AssertionError(f"the page said {said[-1:]!r}, not that table 1 is held") from None
            for live in clocks.values():
                live.tap("right")
            http = Http(console.url)
            http.login(PASSWORD)
            for n in (1, 2, 3):
                def pressed():
                    status, body, _ = http.call("GET", f"/api/table/{n}")
                    return status == 200 and '"press"' in body.decode()
                wait(pressed)  # the clock's event reached the console
            # revoke table 3's clock from the page: disconnected; it waits with its code again
            page.once("dialog", lambda d: d.accept())
            page.locator("tr[data-device='pi-1003'] button.revoke").click()
            page.wait_for_selector("tr[data-device='pi-1003'][data-state='revoked']")
            status = f"rackside/v1/{broker.hall}/table/3/status"
            rec.wait_for(lambda r: [p for t, p, _ in r.messages if t == status][-1:] == [b"offline"])
            assert page.errors == []
            b.close()
    finally:
        for live in clocks.values():
            live.close()
        if station is not None:
            station.close()
        rec.close()
        console.stop()
