"""Debian's headless Chromium driven by Playwright, for the console's page tests and benches: the
browser's flags, a module-wide browser fixture's body, and a director's login."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def have_chromium() -> bool:
    return Path(CHROMIUM).exists()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a whole test module (a pytest plugin, tests/conftest.py): starting
    one takes about a second, a page in it a few milliseconds."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def login(browser, url: str, password: str, viewport=(1920, 1080), init_script: str | None = None):
    """A new page logged in to the console at `url`, its hall drawn; `page.errors` collects the
    page's uncaught errors. `init_script` runs before each of the page's documents does."""
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    if init_script:
        page.add_init_script(init_script)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(url)
    assert page.url.endswith("/login")
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready='1']")
    expose(page, DIRECTOR_MODULES)
    return page


# The page's scripts are ES modules (no globals): a test reads and calls their exports through
# `window.app`, which `expose` sets: each name from the first of `modules` that exports it (a module's
# own binding, as it is now: `app.lastSecond` is the page's second).
DIRECTOR_MODULES = ("/static/app.js", "/static/paperless.js", "/static/divisions.js", "/static/tilestate.js",
                    "/static/clocktext.js", "/static/request.js", "/static/viewtable.js")
PUBLIC_MODULES = ("./public.js", "./tilestate.js", "./clocktext.js")
EXPOSE = """async (urls) => {
  const mods = await Promise.all(urls.map((u) => import(u)));
  const find = (k) => mods.find((m) => k in m);
  window.app = new Proxy({}, { get: (_, k) => { const m = find(k); if (!m) throw new ReferenceError(`no page module exports ${String(k)}`); return m[k]; },
                               has: (_, k) => Boolean(find(k)) });
}"""


def expose(page, modules=DIRECTOR_MODULES) -> None:
    """`window.app`: the exports of the page's `modules` (the same instances the page runs), for a
    test's page.evaluate and wait_for_function."""
    page.evaluate(EXPOSE, list(modules))
