"""The word-lookup core: compile a word list into a compact, checksummed file and answer membership.

The words are held in a MARISA trie (the `marisa-trie` library, C++ with a Cython wrapper). Rackside
wraps the trie's own serialisation in a checksummed container and adds nothing to the lookup path:
`Lexicon` subclasses `marisa_trie.Trie`, so `word in lexicon` is one C call. docs/lexicon.md has the
measurements that chose marisa-trie over a home-made hash-bucket layout (it was faster on lookups,
4x smaller on disk, and quicker to verify because it is smaller).

File format (version 1):

    body     the marisa-trie serialisation of the words (what `marisa_trie.Trie.tobytes()` gives)
    trailer  256 bytes, little-endian: magic, format version, word count, body size, body CRC-32,
             SHA-256 of the source word list, lexicon name (UTF-8), and a CRC-32 of the trailer

The metadata is a trailer rather than a header because marisa-trie loads a trie from the start of
a file and ignores what follows it.

Integrity: `Lexicon.open` checks the magic, version, trailer CRC and the exact file size, reads
the file into memory once, checks the CRC-32 of the whole body in those bytes before the trie
library sees one, then builds the trie over those same bytes (marisa-trie's `map`, no second read
and no copy) and checks its word count. A file that fails any check is refused whole with a
`LexiconError` naming the file and the problem; a caller's already-open Lexicon is untouched. The
CRC guards against truncation and corruption (a bad copy, a failing SD card), not against
deliberate tampering.

Because the trie lives in the process's memory (the file is not mapped), replacing or even
overwriting the file later cannot disturb a running station. Files are written atomically
(`rackside.atomic.write_atomic`).
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import zlib

import marisa_trie

from rackside.judge.adjudication import MAX_LETTERS, MIN_LETTERS
from rackside.values import Record

# pathlib, hashlib and lzma are imported where a path is made, a word list compiled or the shipped
# list read, not here: `rackside judge --lexicon FILE WORD` opens a compiled lexicon, which needs
# none of them, and pathlib alone (it brings `re`) costs more than opening a 279k-word lexicon
# (issue 11: whole-command start-up).

MAGIC = b"RACKLEX\x00"
FORMAT_VERSION = 1
TRAILER_SIZE = 256
MAX_NAME_BYTES = 128

# magic, version, flags, word count, body size, body crc32, source sha256, name length, name
# bytes; the trailer's own CRC-32 occupies its last 4 bytes.
_TRAILER = struct.Struct(f"<8sHHIQI32sH{MAX_NAME_BYTES}s")
_TRAILER_CRC = struct.Struct("<I")
_TRAILER_CRC_AT = TRAILER_SIZE - _TRAILER_CRC.size
assert _TRAILER.size <= _TRAILER_CRC_AT

# Every marisa-trie serialisation, and so every compiled lexicon, starts with these bytes.
_BODY_MAGIC = b"We love Marisa.\x00"
# O_NONBLOCK so that a FIFO given by mistake is refused instead of hanging the station.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)

# DEFAULT_SOURCE, the shipped list's Path (judge/data/enable.txt.xz), is made on first use: see __getattr__.
DEFAULT_NAME = "ENABLE"
# SHA-256 of the decompressed ENABLE list shipped in judge/data: lets install_default_lexicon
# see that an installed file is current without decompressing, and catches a damaged package.
DEFAULT_SOURCE_SHA256 = "b819e7b67f8f2c80640ae76f0edbe59a4a1befb6de0f348463642ad49bdd2ad3"

SKIP_REASONS = ("too short", "too long", "not letters", "duplicate")

# What a director must be told whenever the bundled list is the one judging (issue 10): ENABLE is
# a demonstration list, not a tournament lexicon, and WESPA play allows words it lacks.
DEMONSTRATION_NOTE = (
    "{name} is the demonstration word list bundled with Rackside: it lacks QI, ZA and OK, which "
    "tournament play allows. Install the tournament's lexicon (CSW or NWL: Rackside never ships them): "
    "rackside lexicon compile WORDLIST -o CSW24.rlex --name CSW24, then rackside lexicon use CSW24.rlex"
)
DEMONSTRATION_SHORT = "Demonstration list: no QI, ZA or OK. Director: install the tournament's CSW or NWL."


class LexiconError(Exception):
    """A lexicon file or word list is missing, unreadable, malformed, truncated or corrupt."""


class CompileReport(Record):
    """What `compile_lexicon` kept and skipped. `skipped` maps each reason in SKIP_REASONS to a count;
    `examples` holds the first few skipped lines per reason (line number, text) for the report."""

    __slots__ = ("words", "skipped", "source_sha256", "comment_lines", "blank_lines", "examples", "out", "name")
    _defaults = {"comment_lines": 0, "blank_lines": 0, "examples": {}, "out": None, "name": ""}
    words: int
    skipped: dict[str, int]
    source_sha256: str
    comment_lines: int
    blank_lines: int
    examples: dict[str, list[tuple[int, str]]]
    out: Path | None
    name: str

    def skip_details(self) -> list[str]:
        """One line per reason lines were skipped, with up to three examples and their line
        numbers: what `rackside lexicon compile` prints and the station's USB import shows."""
        out = []
        for reason in SKIP_REASONS:
            count = self.skipped.get(reason, 0)
            if count:
                shown = ", ".join(f"line {n} {text!r}" for n, text in self.examples.get(reason, []))
                out.append(f"{reason}: {count:,}" + (f" (e.g. {shown})" if shown else ""))
        return out

    def summary(self) -> str:
        lines = [f"{self.name}: {self.words} words"]
        total = sum(self.skipped.values())
        lines.append(f"skipped {total} lines" + (":" if total else ""))
        lines += [f"  {line}" for line in self.skip_details()]
        if self.comment_lines:
            lines.append(f"ignored {self.comment_lines} comment lines")
        return "\n".join(lines)


# --- Reading word lists -----------------------------------------------------------------------


def decode_word_list(data: bytes, label: str = "word list") -> str:
    """Decode a word list: UTF-16 (either byte order) or UTF-8 with a BOM, else UTF-8."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    elif data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    else:
        encoding = "utf-8"
        if b"\x00" in data[:4096]:
            raise LexiconError(f"{label}: contains NUL bytes: it looks like UTF-16 without a byte-order mark; "
                               "save it as UTF-8 or UTF-16 with a byte-order mark")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1 if encoding != "utf-16" else None
        where = f" at line {line}" if line else f" at byte {exc.start}"
        raise LexiconError(
            f"{label}: not valid {encoding.replace('-sig', '')}{where} ({exc.reason}); "
            "save it as UTF-8 or UTF-16 with a byte-order mark"
        ) from None


def parse_word_list(text: str) -> tuple[list[str], CompileReport]:
    """Extract the words of a word list: one per line, only the first token of a line counts
    (`WORD definition...`, Zyzzyva's format), `#` lines are comments, any case, LF or CRLF.
    Keeps words of 2..15 letters A-Z, upper-cased, first occurrence only."""
    words: list[str] = []
    seen: set[str] = set()
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    examples: dict[str, list[tuple[int, str]]] = {r: [] for r in SKIP_REASONS}
    comments = blanks = 0
    # Split on LF only (str.splitlines would also split on form feeds and Unicode separators);
    # a final newline ends the last line rather than starting an empty one.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            blanks += 1
            continue
        if stripped.startswith("#"):
            comments += 1
            continue
        token = stripped.split(None, 1)[0]
        # Check before upper-casing: "ß".upper() is "SS" and "ı".upper() is "I".
        if not (token.isascii() and token.isalpha()):
            reason = "not letters"
        elif len(token) < MIN_LETTERS:
            reason = "too short"
        elif len(token) > MAX_LETTERS:
            reason = "too long"
        elif (token := token.upper()) in seen:
            reason = "duplicate"
        else:
            seen.add(token)
            words.append(token)
            continue
        skipped[reason] += 1
        if len(examples[reason]) < 3:
            examples[reason].append((number, stripped[:40]))
    report = CompileReport(
        words=len(words),
        skipped=skipped,
        source_sha256="",
        comment_lines=comments,
        blank_lines=blanks,
        examples={r: e for r, e in examples.items() if e},
    )
    return words, report


# --- Writing compiled files -------------------------------------------------------------------


def _validate_name(name: str) -> bytes:
    name = name.strip()
    encoded = name.encode("utf-8")
    if not name:
        raise LexiconError("the lexicon needs a name (e.g. --name CSW24)")
    if len(encoded) > MAX_NAME_BYTES:
        raise LexiconError(f"lexicon name {name!r} is too long: at most {MAX_NAME_BYTES} bytes of UTF-8")
    if any(ch < " " for ch in name):
        raise LexiconError(f"lexicon name {name!r} contains control characters")
    return encoded


def build_lexicon_bytes(words: list[str], name: str, source_sha256: str) -> bytes:
    """The compiled file's bytes for `words` (already validated: upper-case A-Z, unique)."""
    name_bytes = _validate_name(name)
    if not words:
        raise LexiconError(f"lexicon {name!r} would contain no words")
    body = marisa_trie.Trie(words).tobytes()  # the same bytes whatever the input order
    trailer = bytearray(TRAILER_SIZE)
    _TRAILER.pack_into(
        trailer, 0, MAGIC, FORMAT_VERSION, 0, len(words), len(body), zlib.crc32(body),
        bytes.fromhex(source_sha256), len(name_bytes), name_bytes,
    )
    _TRAILER_CRC.pack_into(trailer, _TRAILER_CRC_AT, zlib.crc32(trailer[:_TRAILER_CRC_AT]))
    return body + bytes(trailer)


def compile_bytes(data: bytes, out: Path, name: str, label: str = "word list") -> CompileReport:
    """Compile the raw bytes of a word list to `out` (atomically). See `parse_word_list`."""
    import hashlib

    from rackside.atomic import write_atomic

    text = decode_word_list(data, label)
    words, report = parse_word_list(text)
    sha = hashlib.sha256(data).hexdigest()
    if not words:
        raise LexiconError(f"{label}: no usable words (2-15 letters A-Z) found")
    blob = build_lexicon_bytes(words, name, sha)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        write_atomic(out, blob, mode=0o644)  # a lexicon is no secret; the log and exports are
    except OSError as exc:
        raise LexiconError(f"{out}: cannot write the compiled lexicon: {exc.strerror or exc}") from None
    return CompileReport(
        words=report.words,
        skipped=report.skipped,
        source_sha256=sha,
        comment_lines=report.comment_lines,
        blank_lines=report.blank_lines,
        examples=report.examples,
        out=_path(out),
        name=name.strip(),
    )


def compile_lexicon(src: Path, out: Path, name: str) -> CompileReport:
    """Compile the word list `src` into the lexicon file `out`, written atomically."""
    src = _path(src)
    try:
        data = src.read_bytes()
    except OSError as exc:
        raise LexiconError(f"{src}: cannot read the word list: {exc.strerror or exc}") from None
    return compile_bytes(data, out, name, label=str(src))


# --- Reading compiled files -------------------------------------------------------------------


class LexiconInfo(Record):
    """What a compiled lexicon's trailer says about it."""

    __slots__ = ("name", "word_count", "body_size", "body_crc32", "source_sha256")
    name: str
    word_count: int
    body_size: int
    body_crc32: int
    source_sha256: str


def _parse_trailer(raw: bytes, path: Path, file_size: int) -> LexiconInfo:
    if file_size <= TRAILER_SIZE:
        raise LexiconError(f"{path}: truncated or not a lexicon: only {file_size} bytes")
    (magic, version, _flags, words, body_size, body_crc, sha, name_len, name_raw) = _TRAILER.unpack_from(raw, 0)
    if magic != MAGIC:
        raise LexiconError(f"{path}: not a compiled Rackside lexicon, or truncated (no lexicon trailer "
                           "at its end); compile word lists with `rackside lexicon compile`")
    if version != FORMAT_VERSION:
        raise LexiconError(f"{path}: lexicon format version {version}, but this Rackside reads "
                           f"version {FORMAT_VERSION}; recompile it with `rackside lexicon compile`")
    (stored_crc,) = _TRAILER_CRC.unpack_from(raw, _TRAILER_CRC_AT)
    if zlib.crc32(raw[:_TRAILER_CRC_AT]) != stored_crc:
        raise LexiconError(f"{path}: corrupt: the trailer checksum does not match")
    expected = body_size + TRAILER_SIZE
    if file_size != expected:
        problem = "truncated" if file_size < expected else "has extra bytes"
        raise LexiconError(f"{path}: {problem}: the trailer says {expected} bytes, the file has {file_size}")
    if words < 1 or name_len > MAX_NAME_BYTES:
        raise LexiconError(f"{path}: corrupt: the trailer is inconsistent")
    try:
        name = name_raw[:name_len].decode("utf-8")
    except UnicodeDecodeError:
        raise LexiconError(f"{path}: corrupt: the lexicon name is not UTF-8") from None
    return LexiconInfo(name, words, body_size, body_crc, sha.hex())


def _read_trailer(fd: int, path: Path) -> tuple[LexiconInfo, os.stat_result]:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise LexiconError(f"{path}: not a lexicon file (it is a folder or a device, not a regular file)")
    raw = os.pread(fd, TRAILER_SIZE, max(st.st_size - TRAILER_SIZE, 0)) if st.st_size > TRAILER_SIZE else b""
    try:
        return _parse_trailer(raw, path, st.st_size), st
    except LexiconError:
        # A file that starts like a compiled lexicon but ends wrong was cut short or damaged.
        if os.pread(fd, len(_BODY_MAGIC), 0) == _BODY_MAGIC and (len(raw) < TRAILER_SIZE or raw[:8] != MAGIC):
            raise LexiconError(f"{path}: truncated or damaged: the lexicon trailer at its end is missing") from None
        raise


def read_info(path: Path) -> LexiconInfo:
    """The trailer of a compiled lexicon, after checking the trailer and the file size (not the
    body: `Lexicon.open` does that)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise LexiconError(f"{path}: cannot open the lexicon: {exc.strerror or exc}") from None
    try:
        return _read_trailer(fd, path)[0]
    except OSError as exc:
        raise LexiconError(f"{path}: cannot read the lexicon: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_image(fd: int, path: Path, size: int) -> bytes:
    """The whole file, `size` bytes, in one read: the bytes that are checked are the bytes the
    trie is built on, so nothing can change between the check and the load."""
    data = os.pread(fd, size, 0)
    if len(data) != size:
        raise LexiconError(f"{path}: the file changed while it was being opened; open it again")
    return data


class Lexicon(marisa_trie.Trie):
    """A verified compiled lexicon, held in memory. `word in lexicon` for an upper-case A-Z str.

    Open it with `Lexicon.open(path)`, which returns a fully verified lexicon or raises
    `LexiconError`: a caller that already holds a Lexicon keeps it if opening another fails.
    Membership is marisa-trie's own C `__contains__` (no Python frame per lookup).
    """

    __slots__ = ("path", "name", "word_count", "source_sha256", "closed", "_image")

    @classmethod
    def open(cls, path: Path | str) -> "Lexicon":
        """`path` is kept as given (a str or a Path) in `lexicon.path`."""
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except OSError as exc:
            raise LexiconError(f"{path}: cannot open the lexicon: {exc.strerror or exc}") from None
        try:
            try:
                info, st = _read_trailer(fd, path)
                image = _read_image(fd, path, st.st_size)
                body = memoryview(image)[: info.body_size]
                if zlib.crc32(body) != info.body_crc32:
                    raise LexiconError(f"{path}: corrupt: the body checksum does not match the trailer")
                lexicon = cls()
                # The trie is built over the verified bytes in place (`map`: no second read of the
                # file, no copy); the lexicon holds `image`, which marisa-trie does not keep.
                lexicon.map(body)
                lexicon._image = image
            except OSError as exc:
                raise LexiconError(f"{path}: cannot read the lexicon: {exc.strerror or exc}") from None
            except (RuntimeError, MemoryError) as exc:  # marisa-trie refusing the body
                raise LexiconError(f"{path}: corrupt: the word trie cannot be loaded ({exc})") from None
        finally:
            os.close(fd)
        if len(lexicon) != info.word_count:
            raise LexiconError(f"{path}: corrupt: the trie holds {len(lexicon)} words, the trailer says {info.word_count}")
        lexicon.path = path
        lexicon.name = info.name
        lexicon.word_count = info.word_count
        lexicon.source_sha256 = info.source_sha256
        lexicon.closed = False
        return lexicon

    @property
    def short_checksum(self) -> str:
        """First 8 hex digits of the source SHA-256: enough for players and directors to compare."""
        return self.source_sha256[:8]

    def close(self) -> None:
        """Mark the lexicon closed: `adjudicate` refuses a closed lexicon. The trie's memory goes
        with the last reference to the object."""
        self.closed = True

    def __enter__(self) -> "Lexicon":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        name = getattr(self, "name", "?")
        return f"<Lexicon {name!r} {len(self)} words {getattr(self, 'source_sha256', '')[:8]}>"


# --- The default lexicon and the lexicon folder -----------------------------------------------


def lexicon_dir() -> Path:
    """The folder of compiled lexicons the director chooses from (`rackside.paths.lexicon_dir()`)."""
    from rackside import paths

    return paths.lexicon_dir()


def default_lexicon_path() -> Path:
    return lexicon_dir() / "enable.rlex"


def _path(value) -> Path:
    from pathlib import Path

    return Path(value)


def __getattr__(name: str):
    # DEFAULT_SOURCE is a module constant made on first use, so that importing this module does
    # not import pathlib (see the imports above). Once made, it is an ordinary module attribute.
    if name == "DEFAULT_SOURCE":
        value = _path(__file__).resolve().parent / "data" / "enable.txt.xz"
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _default_source() -> Path:
    return sys.modules[__name__].DEFAULT_SOURCE  # through __getattr__, or as a test replaced it


def default_source_bytes() -> bytes:
    """The decompressed ENABLE list shipped in judge/data, checked against its known SHA-256."""
    import hashlib
    import lzma

    try:
        data = lzma.decompress(_default_source().read_bytes())
    except (OSError, lzma.LZMAError) as exc:
        raise LexiconError(f"{_default_source()}: cannot read the shipped ENABLE list: {exc}") from None
    if hashlib.sha256(data).hexdigest() != DEFAULT_SOURCE_SHA256:
        raise LexiconError(f"{_default_source()}: the shipped ENABLE list is damaged (SHA-256 mismatch); "
                           "reinstall Rackside")
    return data


def is_demonstration(lexicon) -> bool:
    """Whether `lexicon` (a Lexicon or LexiconInfo) was built from the bundled ENABLE list."""
    return getattr(lexicon, "source_sha256", None) == DEFAULT_SOURCE_SHA256


def demonstration_note(lexicon) -> str | None:
    """The plain warning for a director when `lexicon` is the bundled demonstration list, else None."""
    return DEMONSTRATION_NOTE.format(name=lexicon.name) if is_demonstration(lexicon) else None


def copy_into_lexicon_dir(path: Path, folder: Path | None = None) -> Path:
    """Copy the compiled lexicon `path` into the lexicon folder (atomically, verified first and
    after), so the station lists it and keeps it when the USB stick is gone. Returns the copy's
    path; a file already in the folder is used where it is. A different file of the same name
    in the folder gets the checksum in the copy's name rather than being overwritten."""
    from rackside.atomic import write_atomic

    path = _path(path).expanduser().resolve()
    folder = lexicon_dir() if folder is None else _path(folder)
    with Lexicon.open(path) as lexicon:  # refuse a file that would not open at the table
        checksum = lexicon.short_checksum
    if folder.exists() and path.parent == folder.resolve():
        return path  # already in the folder
    target = folder / path.name
    data = path.read_bytes()
    if target.exists() and target.read_bytes() != data:
        target = folder / f"{path.stem}-{checksum}{path.suffix or '.rlex'}"
    if not target.exists() or target.read_bytes() != data:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data, mode=0o644)
        except OSError as exc:
            raise LexiconError(f"{target}: cannot copy the lexicon into the lexicon folder: "
                               f"{exc.strerror or exc}") from None
    Lexicon.open(target).close()  # the copy verifies as the original did
    return target


def default_is_current(path: Path | None = None) -> bool:
    """Whether the installed default lexicon exists, verifies, and was built from the shipped list."""
    path = default_lexicon_path() if path is None else _path(path)
    try:
        with Lexicon.open(path) as lexicon:
            return lexicon.source_sha256 == DEFAULT_SOURCE_SHA256 and lexicon.name == DEFAULT_NAME
    except LexiconError:
        return False


def install_default_lexicon() -> Path:
    """Compile the shipped ENABLE list to `default_lexicon_path()` unless an intact, current copy
    is already there (so running it again is fast). Returns the path."""
    path = default_lexicon_path()
    if not default_is_current(path):
        compile_bytes(default_source_bytes(), path, DEFAULT_NAME, label=str(_default_source()))
    return path
