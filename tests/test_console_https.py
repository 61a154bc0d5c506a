"""The console over HTTPS with the hall's own certificate (issue 19): the real `rackside hall console`
process serves TLS with the certificate `rackside hall provision` made, a browser trusting the hall's
CA logs in, the session cookie is Secure, plain HTTP on that port gets nothing, and a console left on
plain HTTP answers only this machine."""

from __future__ import annotations

import asyncio
import http.client
import http.cookiejar
import json
import ssl
import urllib.error
import urllib.request

import pytest
from support.console import ConsoleProcess

from rackside.hall.console.shell.transport import PlainHttpLocalOnly, fingerprint

PASSWORD = "director-pw"


def test_the_console_is_served_over_https_with_the_halls_certificate(make_broker, tmp_path):
    broker = make_broker(tables="", stations=0, tls=True)
    tls = broker.dir / "tls"
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD,
                             extra=f'ca_file = "{tls / "ca.crt"}"\ncertfile = "{tls / "server.crt"}"\nkeyfile = "{tls / "server.key"}"\n').start()
    try:
        ctx = ssl.create_default_context(cafile=str(tls / "ca.crt"))  # the director trusted the hall's CA once
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.HTTPCookieProcessor(jar))
        base = f"https://127.0.0.1:{console.port}"
        with opener.open(base + "/api/csrf", timeout=10) as r:
            token = json.loads(r.read())["csrf"]
            assert "secure" in r.headers["Set-Cookie"].lower()
        req = urllib.request.Request(base + "/api/login", data=json.dumps({"password": PASSWORD}).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-CSRF-Token": token})
        with opener.open(req, timeout=10) as r:
            assert r.status == 200 and "secure" in r.headers["Set-Cookie"].lower()
        with opener.open(base + "/api/devices", timeout=10) as r:
            assert json.loads(r.read())["devices"] == []
        # a browser that does not trust the hall's CA is refused the handshake
        with pytest.raises(urllib.error.URLError) as refused:
            urllib.request.urlopen(base + "/login", context=ssl.create_default_context(), timeout=10)
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
        # plain HTTP on the HTTPS port: no page
        plain = http.client.HTTPConnection("127.0.0.1", console.port, timeout=5)
        with pytest.raises((http.client.HTTPException, ConnectionError)):
            plain.request("GET", "/login")
            plain.getresponse()
        log = console.log_path.read_text()
        assert f"https://127.0.0.1:{console.port}/" in log and fingerprint(tls / "ca.crt") in log
    finally:
        console.stop()


def asgi(scheme: str, client: str) -> int:
    """One request through PlainHttpLocalOnly in front of an app answering 200; the status."""
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "scheme": scheme, "client": (client, 40000), "method": "GET", "path": "/", "headers": []}
    asyncio.run(PlainHttpLocalOnly(app)(scope, receive, send))
    return sent[0]["status"]


@pytest.mark.parametrize("scheme, client, status", [
    ("http", "127.0.0.1", 200), ("http", "::1", 200), ("http", "192.168.1.20", 403), ("http", "10.0.0.7", 403),
    ("https", "192.168.1.20", 200),
])
def test_plain_http_is_served_to_this_machine_only(scheme, client, status):
    assert asgi(scheme, client) == status
