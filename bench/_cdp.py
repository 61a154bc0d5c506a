"""Debian's headless Chromium driven over its DevTools pipe (--remote-debugging-pipe) with nothing
attached but what a bench asks for: a page's renderer measured as a director's own browser runs it.

Why by hand, not Playwright: Playwright's session on every page it opens enables the Network
domain (and more) for its own events, so the renderer records every event-stream message for
DevTools and sends it down the pipe: at 300 tables about 0.7 % of a core, 15 % of the renderer's
whole target (issue 28.4), that no director's browser pays. This client sends only the commands
named here (Target, Emulation, Page.navigate, Runtime.evaluate, SystemInfo, and Fetch for a file
served in place); the protocol is JSON messages ended by a NUL byte on fds 3 (in) and 4 (out)
(https://chromedevtools.github.io/devtools-protocol/). Playwright stays for everything else.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Callable

from _common import EXPOSE_APP


class CdpError(RuntimeError):
    """A command the browser refused, did not answer in time, or could not answer (it ended)."""


class BareChromium:
    """One headless Chromium and its pipe; `page(url)` opens a page and returns its session."""

    def __init__(self, exe: str, args: list[str]) -> None:
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="rackside-bare-chromium-")

        def pipes() -> None:  # in the child: the protocol's fds 3 and 4, whatever numbers the pipes have
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 200)
            os.dup2(b, 201)
            os.dup2(200, 3)
            os.dup2(201, 4)

        self.proc = subprocess.Popen([exe, *args, "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
                                     preexec_fn=pipes, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._out = os.fdopen(to_browser_w, "wb", buffering=0)
        self._in = os.fdopen(from_browser_r, "rb", buffering=0)
        self._ids = itertools.count(1)
        self._answers: dict[int, dict] = {}
        self._cond = threading.Condition()
        self._handlers: dict[str, Callable[[dict], None]] = {}
        self._write = threading.Lock()
        threading.Thread(target=self._read, daemon=True, name="bare-chromium-pipe").start()

    def _read(self) -> None:
        buf = b""
        while chunk := self._in.read(1 << 16):
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for raw in messages:
                m = json.loads(raw)
                if "id" in m:
                    with self._cond:
                        self._answers[m["id"]] = m
                        self._cond.notify_all()
                elif m.get("method") in self._handlers:
                    threading.Thread(target=self._handlers[m["method"]], args=(m,), daemon=True).start()
        with self._cond:
            self._cond.notify_all()

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        i = next(self._ids)
        msg = {"id": i, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        with self._write:
            self._out.write(json.dumps(msg).encode() + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: i in self._answers or self.proc.poll() is not None, timeout):
                raise CdpError(f"{method}: no answer in {timeout} s")
            if i not in self._answers:
                raise CdpError(f"{method}: the browser ended")
            m = self._answers.pop(i)
        if "error" in m:
            raise CdpError(f"{method}: {m['error'].get('message')}")
        return m.get("result", {})

    def page(self, url: str, viewport: tuple[int, int] = (1920, 1080), serve: dict[str, tuple[str, str]] | None = None) -> str:
        """A new page at `url`; `serve` answers requests whose URL ends in a key with (body, content
        type) instead of the server (the page before's app.js). Returns the page's session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", {"width": viewport[0], "height": viewport[1],
                                                         "deviceScaleFactor": 1, "mobile": False}, s)
        if serve:
            def paused(m: dict) -> None:
                p = m["params"]
                body, ctype = next(v for k, v in serve.items() if p["request"]["url"].split("?")[0].endswith(k))
                self.send("Fetch.fulfillRequest", {"requestId": p["requestId"], "responseCode": 200,
                                                   "responseHeaders": [{"name": "Content-Type", "value": ctype},
                                                                       {"name": "Cache-Control", "value": "no-cache"}],
                                                   "body": base64.b64encode(body.encode()).decode()}, m.get("sessionId"))
            self._handlers["Fetch.requestPaused"] = paused
            self.send("Fetch.enable", {"patterns": [{"urlPattern": "*" + k} for k in serve]}, s)
        self.send("Page.navigate", {"url": url}, s)
        return s

    def evaluate(self, session: str, expression: str):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session)
        if "exceptionDetails" in r:
            raise CdpError(f"{expression[:60]}: {r['exceptionDetails'].get('text')}")
        return r.get("result", {}).get("value")

    def wait_for(self, session: str, expression: str, timeout: float = 60) -> None:
        """Until `expression` is true in the page (polled every 50 ms: a page being loaded has no
        way to call back here without a binding, and a binding is more attached than we want)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if self.evaluate(session, expression):
                    return
            except CdpError:  # the page is between documents
                pass
            time.sleep(0.05)
        raise CdpError(f"not true in {timeout} s: {expression}")

    def renderers(self) -> list[int]:
        return [p["id"] for p in self.send("SystemInfo.getProcessInfo")["processInfo"] if p["type"] == "renderer"]

    def renderer_cpu(self, seconds: float) -> float:
        """The renderers' CPU (% of a core) over the next `seconds`; a renderer that ends on the
        way (read as 0 at the end) is left out, not counted as time given back."""
        from console_soak import renderer_cpu_seconds  # (bench/, as every bench imports it)

        pids = self.renderers()
        t0, cpu0 = time.monotonic(), {pid: renderer_cpu_seconds(pid) for pid in pids}
        time.sleep(seconds)
        cpu1 = {pid: renderer_cpu_seconds(pid) for pid in pids}
        return sum(cpu1[p] - cpu0[p] for p in pids if cpu1[p] > 0) / (time.monotonic() - t0) * 100

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except CdpError:  # (already ending: the wait below sees to it)
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def console_login(chromium: BareChromium, url: str, password: str, serve: dict | None = None) -> str:
    """A page logged in to the console at `url` (ending in /), once it says it is ready."""
    s = chromium.page(url + "login", serve=serve)
    # the form's script is attached once the document is complete: a click before it posts the form natively
    chromium.wait_for(s, "document.readyState === 'complete' && !!document.getElementById('password')")
    chromium.evaluate(s, f"document.getElementById('password').value = {json.dumps(password)};"
                         "document.querySelector('button[type=submit]').click(); true")
    chromium.wait_for(s, "!!document.body && document.body.dataset.ready === '1'")
    chromium.evaluate(s, EXPOSE_APP)  # window.app: app.js's exports (the page's scripts are modules)
    return s
