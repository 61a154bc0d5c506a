"""The word-lookup core: compiling every input format, lookups against a set oracle, and refusing
corrupt or truncated files whole."""

from __future__ import annotations

import hashlib
import lzma
import os
import stat
import struct
import tempfile
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rackside.judge import lexicon as lexmod
from rackside.judge.adjudication import adjudicate
from rackside.judge.lexicon import (
    DEFAULT_SOURCE,
    DEFAULT_SOURCE_SHA256,
    TRAILER_SIZE,
    Lexicon,
    LexiconError,
    compile_lexicon,
    default_lexicon_path,
    install_default_lexicon,
    lexicon_dir,
    read_info,
)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
words_st = st.text(alphabet=LETTERS, min_size=2, max_size=15)
SMALL = ["AA", "CAT", "CATS", "DOG", "QI", "ZZZS", "ABCDEFGHIJKLMNO"]


def compile_text(tmp: Path, text: str | bytes, name: str = "TEST", encoding: str = "utf-8"):
    src = tmp / "list.txt"
    src.write_bytes(text if isinstance(text, bytes) else text.encode(encoding))
    out = tmp / "out.rlex"
    report = compile_lexicon(src, out, name)
    return report, out


@pytest.fixture()
def small(tmp_path) -> Path:
    return compile_text(tmp_path, "\n".join(SMALL) + "\n")[1]


# --- Input formats ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoded",
    [
        "cat\ndog\nQi\n".encode("utf-8"),
        "\ufeffcat\ndog\nQi\n".encode("utf-8"),  # UTF-8 with BOM
        "cat\r\ndog\r\nQi\r\n".encode("utf-8"),  # CRLF
        "\ufeffcat\r\ndog\r\nQi".encode("utf-16-le"),  # UTF-16 LE with BOM, no final newline
        "\ufeffcat\ndog\nQi\n".encode("utf-16-be"),  # UTF-16 BE with BOM
        "# a comment\nCAT feline animal\n  dog  a canine [n]\n\n#another\nqi life force\n".encode("utf-8"),
    ],
    ids=["utf8", "utf8-bom", "crlf", "utf16le-bom", "utf16be-bom", "zyzzyva-comments"],
)
def test_every_input_format_gives_the_same_words(tmp_path, encoded):
    report, out = compile_text(tmp_path, encoded)
    assert report.words == 3
    assert report.source_sha256 == hashlib.sha256(encoded).hexdigest()
    with Lexicon.open(out) as lex:
        assert {"CAT", "DOG", "QI"} == {w for w in ("CAT", "DOG", "QI", "COMMENT", "FELINE", "A") if w in lex}
        assert lex.word_count == 3
        assert lex.source_sha256 == report.source_sha256


def test_skipped_lines_are_counted_by_reason(tmp_path):
    text = "cat\nCAT\na\nabcdefghijklmnop\nq1\ncafé\ndog\n# comment\n\nDOG def\n"
    report, _ = compile_text(tmp_path, text)
    assert report.words == 2 and report.blank_lines == 1
    assert report.skipped == {"too short": 1, "too long": 1, "not letters": 2, "duplicate": 2}
    assert report.comment_lines == 1
    summary = report.summary()
    for reason in ("too short: 1", "too long: 1", "not letters: 2", "duplicate: 2"):
        assert reason in summary
    assert "line 4 'abcdefghijklmnop'" in summary


def test_non_ascii_letters_are_not_letters_even_when_upper_casing_makes_them_ascii(tmp_path):
    report, out = compile_text(tmp_path, "straße\nıt\nﬁne\nCAT\n")
    assert report.words == 1 and report.skipped["not letters"] == 3
    with Lexicon.open(out) as lex:
        assert "STRASSE" not in lex and "IT" not in lex and "FINE" not in lex


def test_utf16_without_a_bom_is_refused_with_a_hint(tmp_path):
    with pytest.raises(LexiconError, match="UTF-16 without a byte-order mark"):
        compile_text(tmp_path, "CAT\nDOG\n".encode("utf-16-le"))


def test_invalid_utf8_names_the_line(tmp_path):
    with pytest.raises(LexiconError, match=r"line 2"):
        compile_text(tmp_path, b"CAT\nD\xffG\n")


def test_a_list_without_words_is_refused(tmp_path):
    with pytest.raises(LexiconError, match="no usable words"):
        compile_text(tmp_path, "# only a comment\nx\n")
    assert not (tmp_path / "out.rlex").exists()


@pytest.mark.parametrize("name", ["", "   ", "x" * 129, "bad\nname"])
def test_bad_names_are_refused(tmp_path, name):
    with pytest.raises(LexiconError, match="name"):
        compile_text(tmp_path, "CAT\n", name=name)


def test_missing_source_is_a_clear_error(tmp_path):
    with pytest.raises(LexiconError, match="cannot read the word list"):
        compile_lexicon(tmp_path / "nope.txt", tmp_path / "out.rlex", "X")


def test_compile_is_atomic_and_leaves_no_temporary_files(tmp_path):
    report, out = compile_text(tmp_path, "CAT\nDOG\n")
    old = out.read_bytes()
    # A failing compile (no words) leaves the previous file exactly as it was.
    with pytest.raises(LexiconError):
        compile_text(tmp_path, "1\n")
    assert out.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["list.txt", "out.rlex"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_compiled_bytes_do_not_depend_on_input_order(tmp_path):
    a = compile_text(tmp_path, "CAT\nDOG\nEMU\n")[1].read_bytes()
    b = compile_text(tmp_path, "emu\ndog\ncat\n")[1].read_bytes()
    # Same words; the trailer differs only in the source SHA-256 and therefore its own CRC.
    assert a[:-TRAILER_SIZE] == b[:-TRAILER_SIZE]


# --- Lookups against a set oracle -------------------------------------------------------------


@st.composite
def word_list_files(draw):
    """A word list in any of the accepted forms, with the set of words it should yield."""
    words = draw(st.sets(words_st, min_size=1, max_size=300))
    order = draw(st.permutations(sorted(words)))
    lines = []
    for word in order:
        case = draw(st.sampled_from(["upper", "lower", "title"]))
        token = {"upper": word, "lower": word.lower(), "title": word.title()}[case]
        if draw(st.booleans()):
            token += " " + draw(st.sampled_from(["a definition [n]", "\tsee OTHER", "(pl. -S)"]))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["# comment", "#", "   ", ""])))
        lines.append(draw(st.sampled_from(["", " ", "  "])) + token)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom"]))
    if encoding == "utf-16-le-bom":
        data = ("\ufeff" + text).encode("utf-16-le")
    elif encoding == "utf-16-be-bom":
        data = ("\ufeff" + text).encode("utf-16-be")
    else:
        data = text.encode(encoding)  # "utf-16" writes a BOM in the machine's byte order
    return data, words


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=word_list_files(), probes=st.lists(st.text(max_size=20), max_size=50))
def test_round_trip_against_a_set_oracle(case, probes):
    data, words = case
    with tempfile.TemporaryDirectory() as tmp:
        report, out = compile_text(Path(tmp), data)
        assert report.words == len(words)
        assert report.skipped == {"too short": 0, "too long": 0, "not letters": 0, "duplicate": 0}
        with Lexicon.open(out) as lex:
            assert lex.word_count == len(words) == len(lex)
            for w in words:
                assert w in lex
            for p in probes:
                assert (p in lex) == (p in words), p
            for w in list(words)[:20]:
                # near misses: a letter more, a letter less, lower case
                assert (w + "S" in lex) == (w + "S" in words)
                assert (w[:-1] in lex) == (w[:-1] in words)
                assert w.lower() not in lex


def test_lexicon_attributes(small):
    with Lexicon.open(small) as lex:
        assert lex.name == "TEST"
        assert lex.path == small
        assert lex.word_count == len(SMALL)
        assert len(lex.source_sha256) == 64
        assert lex.short_checksum == lex.source_sha256[:8]
        assert not lex.closed
        assert "ABCDEFGHIJKLMNOP" not in lex and "" not in lex and "A" not in lex
    assert lex.closed
    with pytest.raises(ValueError, match="closed"):
        adjudicate(("CAT",), lex)
    info = read_info(small)
    assert (info.name, info.word_count) == ("TEST", len(SMALL))


def test_unicode_names_survive(tmp_path):
    _, out = compile_text(tmp_path, "CAT\n", name="Lexique français 2024")
    with Lexicon.open(out) as lex:
        assert lex.name == "Lexique français 2024"


# --- Integrity --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good_bytes(tmp_path_factory) -> bytes:
    tmp = tmp_path_factory.mktemp("lex")
    return compile_text(tmp, "\n".join(f"{a}{b}{c}" for a in "ABCDE" for b in "FGHIJ" for c in "KLMNO"))[1].read_bytes()


def _open_bytes(data: bytes) -> Lexicon:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.rlex"
        path.write_bytes(data)
        return Lexicon.open(path)


def test_the_good_file_opens(good_bytes):
    assert "AFK" in _open_bytes(good_bytes)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_corruption_is_detected(good_bytes, data):
    # Bursts of up to 4 changed bytes: CRC-32 detects every burst of 32 bits or fewer.
    offset = data.draw(st.integers(0, len(good_bytes) - 1), label="offset")
    length = data.draw(st.integers(1, min(4, len(good_bytes) - offset)), label="length")
    noise = data.draw(st.binary(min_size=length, max_size=length), label="noise")
    damaged = bytearray(good_bytes)
    damaged[offset : offset + length] = noise
    assume(bytes(damaged) != good_bytes)
    with pytest.raises(LexiconError) as exc_info:
        _open_bytes(bytes(damaged))
    assert "x.rlex" in str(exc_info.value)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_any_truncation_or_extension_is_detected(good_bytes, data):
    cut = data.draw(st.integers(0, len(good_bytes) - 1), label="cut")
    with pytest.raises(LexiconError, match="truncated|not a compiled"):
        _open_bytes(good_bytes[:cut])
    extra = data.draw(st.binary(min_size=1, max_size=300), label="extra")
    with pytest.raises(LexiconError):
        _open_bytes(good_bytes + extra)


def _with_trailer_field(data: bytes, offset: int, fmt: str, value) -> bytes:
    """Change a trailer field and re-seal the trailer CRC, as a newer or foreign writer would."""
    body, trailer = data[:-TRAILER_SIZE], bytearray(data[-TRAILER_SIZE:])
    struct.pack_into(fmt, trailer, offset, value)
    struct.pack_into("<I", trailer, TRAILER_SIZE - 4, zlib.crc32(trailer[: TRAILER_SIZE - 4]))
    return body + bytes(trailer)


def test_wrong_version_says_so(good_bytes):
    with pytest.raises(LexiconError, match="format version 2"):
        _open_bytes(_with_trailer_field(good_bytes, 8, "<H", 2))


def test_wrong_magic_says_so(good_bytes):
    with pytest.raises(LexiconError, match="trailer at its end is missing"):
        _open_bytes(_with_trailer_field(good_bytes, 0, "<8s", b"NOTALEX!"))
    with pytest.raises(LexiconError, match="not a compiled Rackside lexicon"):
        _open_bytes(b"\x00" * 16 + _with_trailer_field(good_bytes, 0, "<8s", b"NOTALEX!")[16:])


def test_wrong_word_count_is_refused_even_with_a_valid_checksum(good_bytes):
    with pytest.raises(LexiconError, match="trailer says"):
        _open_bytes(_with_trailer_field(good_bytes, 12, "<I", 7))


def test_text_files_and_missing_files_are_refused(tmp_path):
    text = tmp_path / "words.txt"
    text.write_text("CAT\nDOG\n" * 100)
    with pytest.raises(LexiconError, match="not a compiled Rackside lexicon"):
        Lexicon.open(text)
    with pytest.raises(LexiconError, match="cannot open"):
        Lexicon.open(tmp_path / "missing.rlex")
    with pytest.raises(LexiconError, match="not a regular file"):
        Lexicon.open(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(LexiconError, match="not a regular file"):
        Lexicon.open(fifo)  # refused at once, not a hang


def test_a_loaded_lexicon_survives_a_failed_open_and_file_replacement(tmp_path, small, good_bytes):
    lex = Lexicon.open(small)
    bad = tmp_path / "bad.rlex"
    bad.write_bytes(good_bytes[:-1])
    with pytest.raises(LexiconError):
        lex = Lexicon.open(bad)  # the assignment never happens
    assert "CAT" in lex
    # Replacing, and even overwriting, the file on disk does not disturb the loaded lexicon.
    compile_lexicon(_write(tmp_path / "o.txt", "EMU\n"), small, "OTHER")
    small.write_bytes(b"garbage")
    assert "CAT" in lex and "EMU" not in lex


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- The shipped default ----------------------------------------------------------------------


def test_shipped_enable_is_intact_and_small():
    assert DEFAULT_SOURCE.stat().st_size < 1_000_000
    data = lzma.decompress(DEFAULT_SOURCE.read_bytes())
    assert hashlib.sha256(data).hexdigest() == DEFAULT_SOURCE_SHA256
    assert data.count(b"\n") == 172_820


def test_install_default_is_idempotent_and_repairs_a_damaged_copy():
    path = install_default_lexicon()
    assert path == default_lexicon_path() == lexicon_dir() / "enable.rlex"
    with Lexicon.open(path) as lex:
        assert lex.name == "ENABLE"
        assert lex.word_count == 168_548  # ENABLE's 172,820 less 4,272 words over 15 letters
        assert lex.source_sha256 == DEFAULT_SOURCE_SHA256
        assert "AA" in lex and "ZYZZYVAS" in lex and "QI" not in lex
        assert "ABSENTMINDEDNESS" not in lex  # 16 letters
    before = os.stat(path)
    assert install_default_lexicon() == path
    after = os.stat(path)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns), "rewritten needlessly"
    data = bytearray(path.read_bytes())
    data[1000] ^= 0xFF
    path.write_bytes(bytes(data))
    install_default_lexicon()
    assert "CAT" in Lexicon.open(path)


def test_damaged_shipped_list_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "enable.txt.xz"
    fake.write_bytes(lzma.compress(b"CAT\nDOG\n"))
    monkeypatch.setattr(lexmod, "DEFAULT_SOURCE", fake)
    with pytest.raises(LexiconError, match="damaged"):
        install_default_lexicon()


def test_the_trie_keeps_its_verified_bytes_for_as_long_as_it_lives(tmp_path):
    """The trie is mapped over the bytes `open` read and checked (marisa-trie does not keep them):
    with the file gone and the memory churned, every word still reads back."""
    import gc

    words = [f"{a}{b}{c}" for a in "ABCDEFGH" for b in "ABCDEFGH" for c in "ABCDEFGHIJ"]
    path = compile_lexicon(_write(tmp_path / "w.txt", "\n".join(words)), tmp_path / "w.rlex", "W").out
    lex = Lexicon.open(path)
    path.unlink()
    gc.collect()
    churn = [bytes([i % 251]) * 4096 for i in range(2000)]
    assert sorted(lex.keys()) == sorted(words) and all(w in lex for w in words) and churn
