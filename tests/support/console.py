"""Helpers of the console's tests: an HTTP client that keeps its cookies (a director's command sent
straight to a clock, and its ack, are in support.hallclock)."""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.request


class Http:
    """A cookie-keeping HTTP client for the login and CSRF checks (no browser needed)."""

    def __init__(self, base: str):
        self.base = base.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
                                                  _NoRedirect())

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    def csrf(self):
        return json.loads(self.call("GET", "/api/csrf")[1])["csrf"]

    def login(self, password, name="Sam"):
        """Log in as the director; the session's CSRF token for the commands that follow."""
        token = self.csrf()
        status, body, _ = self.call("POST", "/api/login", {"password": password, "name": name}, {"X-CSRF-Token": token})
        assert status == 200, body
        return json.loads(body)["csrf"]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None
