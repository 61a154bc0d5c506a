"""A device's key (hall.wire.devicekey): what the director seals in Python, openssl opens on the
device, for keys openssl made; anything that is not an RSA public key of 2048 to 4096 bits is
refused in one line; the key is owner-only and made once."""

from __future__ import annotations

import secrets

import pytest

from rackside.hall.wire import devicekey


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    path = tmp_path_factory.mktemp("key") / "hall-device-key.pem"
    devicekey.make(path)
    return path


def test_what_the_director_seals_only_the_devices_key_opens(key, tmp_path):
    public = devicekey.public_der(key)
    for size in (1, 64, 190):  # 190: the most RSA-2048 with OAEP-SHA-256 carries
        secret = secrets.token_bytes(size)
        sealed = devicekey.seal(public, secret)
        assert len(sealed) == 256 and devicekey.unseal(key, sealed) == secret
        assert devicekey.unseal(key, devicekey.seal_with_openssl(public, secret)) == secret  # the same scheme as openssl's
    other = tmp_path / "other.pem"
    devicekey.make(other)
    with pytest.raises(devicekey.DeviceKeyError, match="pkeyutl"):
        devicekey.unseal(other, devicekey.seal(public, b"login"))
    with pytest.raises(devicekey.DeviceKeyError, match="at most 190 bytes"):
        devicekey.seal(public, b"x" * 191)


def test_the_key_is_owner_only_and_made_once(key):
    assert key.stat().st_mode & 0o777 == 0o600
    before = key.read_bytes()
    devicekey.make(key)
    assert key.read_bytes() == before


@pytest.mark.parametrize("public", [b"", b"\x30\x03\x02\x01\x05", secrets.token_bytes(294), b"\x30" + b"\x82\xff\xff" + b"x" * 10,
                                    b"x" * 601])
def test_anything_but_an_rsa_public_key_is_refused(public):
    with pytest.raises(devicekey.DeviceKeyError, match="device key"):
        devicekey.seal(public, b"login")


def test_a_small_rsa_key_is_refused(tmp_path):
    small = tmp_path / "small.pem"
    devicekey._openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", str(small))
    with pytest.raises(devicekey.DeviceKeyError, match="2048 to 4096 bits"):
        devicekey.seal(devicekey.public_der(small), b"login")
