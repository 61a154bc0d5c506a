"""The word-lookup core: compile a word list into a compact, checksummed file and answer membership.

File format (version 1, all integers little-endian):

    header  (256 bytes)  magic, version, word count, bucket count, body size, body CRC-32,
                         SHA-256 of the source word list, lexicon name (UTF-8), header CRC-32
    body    offsets      (buckets + 1) x uint32: absolute file offset where each bucket starts
            entries      each word stored as one length byte (2..15) followed by its letters;
                         the words of a bucket are contiguous, bucket = crc32(word) % buckets

A lookup hashes the word with `zlib.crc32` (stable across processes, unlike `hash()`), reads the
bucket's two offsets through a `memoryview` of the mmap, and runs one C substring search for
`length byte + word` inside that bucket. The length byte is never a letter, so it can only match
at the start of an entry, and an entry's letters are exactly its length long: a hit is an exact
match, with no probing loop in Python. See docs/lexicon.md for the measurements behind this.

Integrity: `Lexicon.open` checks the magic, version, header CRC, the exact file size and the CRC-32
of the whole body before answering anything, reading the body through a small reusable buffer so
the check does not pull the whole file into memory. A file that fails any check is refused whole
with a `LexiconError` naming the file and the problem. The CRC guards against truncation and
corruption (a bad copy, a bad SD card), not against deliberate tampering.

Files are written atomically (temporary file, fsync, rename), so a running station that has the
old file mapped keeps a consistent copy. Replace a compiled lexicon only by renaming over it (as
`compile_lexicon` does); overwriting a mapped file in place, e.g. with `cp`, changes it under the
running process.
"""

from __future__ import annotations

import hashlib
import lzma
import mmap
import os
import struct
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

MAGIC = b"RACKLEX\x00"
FORMAT_VERSION = 1
HEADER_SIZE = 256
MIN_LETTERS = 2
MAX_LETTERS = 15
MAX_NAME_BYTES = 128
# Average words per bucket: a bucket of ~6 words is ~60 bytes, one short memchr-driven search,
# while the offset table stays at well under a byte per word of the list.
WORDS_PER_BUCKET = 6

# magic, version, flags, word count, bucket count, body size, body crc32, source sha256,
# name length, name bytes; the header CRC-32 occupies the last 4 bytes of the 256-byte header.
_HEADER = struct.Struct(f"<8sHHIIQI32sH{MAX_NAME_BYTES}s")
_HEADER_CRC = struct.Struct("<I")
_HEADER_CRC_AT = HEADER_SIZE - _HEADER_CRC.size
assert _HEADER.size <= _HEADER_CRC_AT

_CHUNK = 1 << 18  # read-through buffer for the body checksum

# Needle prefix by word length. Entries only ever start with 2..15, so prefixes for other
# lengths can never match; lengths above 15 fall off the end of the tuple.
_LENGTH_BYTE = tuple(bytes([n]) for n in range(MAX_LETTERS + 1))

_DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_SOURCE = _DATA_DIR / "enable.txt.xz"
DEFAULT_NAME = "ENABLE"
# SHA-256 of the decompressed ENABLE list shipped in kiosk/data: lets install_default_lexicon
# see that an installed file is current without decompressing, and catches a damaged package.
DEFAULT_SOURCE_SHA256 = "b819e7b67f8f2c80640ae76f0edbe59a4a1befb6de0f348463642ad49bdd2ad3"

SKIP_REASONS = ("too short", "too long", "not letters", "duplicate")


class LexiconError(Exception):
    """A lexicon file or word list is missing, unreadable, malformed, truncated or corrupt."""


@dataclass(frozen=True)
class CompileReport:
    """What `compile_lexicon` kept and skipped. `skipped` maps each reason in SKIP_REASONS to a count;
    `examples` holds the first few skipped lines per reason (line number, text) for the report."""

    words: int
    skipped: dict[str, int]
    source_sha256: str
    comment_lines: int = 0
    blank_lines: int = 0
    examples: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    out: Path | None = None
    name: str = ""

    def summary(self) -> str:
        lines = [f"{self.name}: {self.words} words"]
        total = sum(self.skipped.values())
        lines.append(f"skipped {total} lines" + (":" if total else ""))
        for reason in SKIP_REASONS:
            count = self.skipped.get(reason, 0)
            if count:
                shown = ", ".join(f"line {n} {text!r}" for n, text in self.examples.get(reason, []))
                lines.append(f"  {reason}: {count}" + (f" (e.g. {shown})" if shown else ""))
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
    # Split on LF only (str.splitlines would also split on form feeds and Unicode separators).
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped:
            blanks += 1
            continue
        if stripped.startswith("#"):
            comments += 1
            continue
        token = stripped.split(None, 1)[0].upper()
        if not (token.isascii() and token.isalpha()):
            reason = "not letters"
        elif len(token) < MIN_LETTERS:
            reason = "too short"
        elif len(token) > MAX_LETTERS:
            reason = "too long"
        elif token in seen:
            reason = "duplicate"
        else:
            seen.add(token)
            words.append(token)
            continue
        skipped[reason] += 1
        if len(examples[reason]) < 3:
            examples[reason].append((number, stripped[:40]))
    # A trailing newline yields one empty final "line"; it is not a blank line of the list.
    if text.endswith("\n") or not text:
        blanks -= 1
    report = CompileReport(
        words=len(words),
        skipped=skipped,
        source_sha256="",
        comment_lines=comments,
        blank_lines=max(blanks, 0),
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
    """The compiled file's bytes for `words` (already validated, upper-case, unique)."""
    name_bytes = _validate_name(name)
    if not words:
        raise LexiconError(f"lexicon {name!r} would contain no words")
    bucket_count = max(1, len(words) // WORDS_PER_BUCKET)
    buckets: list[list[bytes]] = [[] for _ in range(bucket_count)]
    crc32 = zlib.crc32
    for word in sorted(words):
        encoded = word.encode("ascii")
        buckets[crc32(encoded) % bucket_count].append(_LENGTH_BYTE[len(encoded)] + encoded)
    table_size = (bucket_count + 1) * 4
    offsets = []
    position = HEADER_SIZE + table_size
    chunks = []
    for bucket in buckets:
        offsets.append(position)
        chunk = b"".join(bucket)
        chunks.append(chunk)
        position += len(chunk)
    offsets.append(position)
    if position >= 1 << 32:
        raise LexiconError(f"lexicon {name!r} is too large for format version {FORMAT_VERSION}")
    body = struct.pack(f"<{len(offsets)}I", *offsets) + b"".join(chunks)
    header = bytearray(HEADER_SIZE)
    _HEADER.pack_into(
        header, 0, MAGIC, FORMAT_VERSION, 0, len(words), bucket_count, len(body),
        zlib.crc32(body), bytes.fromhex(source_sha256), len(name_bytes), name_bytes,
    )
    _HEADER_CRC.pack_into(header, _HEADER_CRC_AT, zlib.crc32(header[:_HEADER_CRC_AT]))
    return bytes(header) + body


def write_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` so that readers see either the old file or the whole new one:
    temporary file in the same folder, fsync, rename over, fsync the folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def compile_bytes(data: bytes, out: Path, name: str, label: str = "word list") -> CompileReport:
    """Compile the raw bytes of a word list to `out` (atomically). See `parse_word_list`."""
    text = decode_word_list(data, label)
    words, report = parse_word_list(text)
    sha = hashlib.sha256(data).hexdigest()
    if not words:
        raise LexiconError(f"{label}: no usable words (2-15 letters A-Z) found")
    blob = build_lexicon_bytes(words, name, sha)
    try:
        write_atomically(Path(out), blob)
    except OSError as exc:
        raise LexiconError(f"{out}: cannot write the compiled lexicon: {exc.strerror or exc}") from None
    return CompileReport(
        words=report.words,
        skipped=report.skipped,
        source_sha256=sha,
        comment_lines=report.comment_lines,
        blank_lines=report.blank_lines,
        examples=report.examples,
        out=Path(out),
        name=name.strip(),
    )


def compile_lexicon(src: Path, out: Path, name: str) -> CompileReport:
    """Compile the word list `src` into the lexicon file `out`, written atomically."""
    src = Path(src)
    try:
        data = src.read_bytes()
    except OSError as exc:
        raise LexiconError(f"{src}: cannot read the word list: {exc.strerror or exc}") from None
    return compile_bytes(data, out, name, label=str(src))


# --- Reading compiled files -------------------------------------------------------------------


@dataclass(frozen=True)
class LexiconHeader:
    name: str
    word_count: int
    bucket_count: int
    body_size: int
    body_crc32: int
    source_sha256: str


def _parse_header(raw: bytes, path: Path, file_size: int) -> LexiconHeader:
    if file_size < HEADER_SIZE:
        raise LexiconError(f"{path}: truncated or not a lexicon: {file_size} bytes, shorter than the header")
    (magic, version, _flags, words, buckets, body_size, body_crc, sha, name_len,
     name_raw) = _HEADER.unpack_from(raw, 0)
    if magic != MAGIC:
        raise LexiconError(f"{path}: not a compiled Rackside lexicon (wrong magic number); "
                           "compile word lists with `rackside lexicon compile`")
    if version != FORMAT_VERSION:
        raise LexiconError(f"{path}: lexicon format version {version}, but this Rackside reads "
                           f"version {FORMAT_VERSION}; recompile it with `rackside lexicon compile`")
    (stored_crc,) = _HEADER_CRC.unpack_from(raw, _HEADER_CRC_AT)
    if zlib.crc32(raw[:_HEADER_CRC_AT]) != stored_crc:
        raise LexiconError(f"{path}: the header is corrupt (header checksum mismatch)")
    expected = HEADER_SIZE + body_size
    if file_size != expected:
        problem = "truncated" if file_size < expected else "has extra bytes at the end"
        raise LexiconError(f"{path}: {problem}: the header says {expected} bytes, the file has {file_size}")
    if not (1 <= buckets and (buckets + 1) * 4 <= body_size and name_len <= MAX_NAME_BYTES):
        raise LexiconError(f"{path}: the header is inconsistent (bucket table does not fit)")
    try:
        name = name_raw[:name_len].decode("utf-8")
    except UnicodeDecodeError:
        raise LexiconError(f"{path}: the header is corrupt (name is not UTF-8)") from None
    return LexiconHeader(name, words, buckets, body_size, body_crc, sha.hex())


def read_header(path: Path) -> LexiconHeader:
    """The header of a compiled lexicon, after checking the header and the file size (not the
    body: use `Lexicon.open` for that)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = f.read(HEADER_SIZE)
    except OSError as exc:
        raise LexiconError(f"{path}: cannot open the lexicon: {exc.strerror or exc}") from None
    return _parse_header(raw, path, size)


def _body_crc32(fd: int, size: int) -> int:
    """CRC-32 of the file from HEADER_SIZE to `size`, read through a small buffer (reading does not
    leave the file's pages in this process's RSS, as touching every page of the mmap would)."""
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    crc = 0
    position = HEADER_SIZE
    with open(fd, "rb", buffering=0, closefd=False) as f:
        f.seek(position)
        while position < size:
            n = f.readinto(view[: min(_CHUNK, size - position)])
            if not n:
                break  # shrank under us: the CRC will not match
            crc = zlib.crc32(view[:n], crc)
            position += n
    return crc


class Lexicon:
    """A verified, memory-mapped compiled lexicon. `word in lexicon` for an upper-case A-Z str.

    Open with `Lexicon.open(path)`; it either returns a fully verified lexicon or raises
    `LexiconError`, so a caller that already holds a Lexicon keeps it if opening another fails.
    """

    __slots__ = ("path", "name", "word_count", "source_sha256", "_mm", "_offsets", "_buckets",
                 "_find", "__weakref__")

    def __init__(self, path: Path, header: LexiconHeader, mm: mmap.mmap, offsets) -> None:
        self.path = path
        self.name = header.name
        self.word_count = header.word_count
        self.source_sha256 = header.source_sha256
        self._mm = mm
        self._offsets = offsets
        self._buckets = header.bucket_count
        self._find = mm.find

    @classmethod
    def open(cls, path: Path | str) -> "Lexicon":
        path = Path(path)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise LexiconError(f"{path}: cannot open the lexicon: {exc.strerror or exc}") from None
        try:
            try:
                size = os.fstat(fd).st_size
                header = _parse_header(os.pread(fd, HEADER_SIZE, 0), path, size)
                crc = _body_crc32(fd, size)
            except OSError as exc:
                raise LexiconError(f"{path}: cannot read the lexicon: {exc.strerror or exc}") from None
            if crc != header.body_crc32:
                raise LexiconError(f"{path}: corrupt: the body checksum does not match the header")
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        table = memoryview(mm)[HEADER_SIZE : HEADER_SIZE + (header.bucket_count + 1) * 4]
        if sys.byteorder == "little":
            offsets = table.cast("I")
        else:  # the file is little-endian; a big-endian host keeps a swapped copy of the table
            import array

            offsets = array.array("I", table.tobytes())
            offsets.byteswap()
            table.release()
        first, last = offsets[0], offsets[header.bucket_count]
        if first != HEADER_SIZE + (header.bucket_count + 1) * 4 or last != size:
            if isinstance(offsets, memoryview):
                offsets.release()
                table.release()
            mm.close()
            raise LexiconError(f"{path}: the header is inconsistent (bucket table does not cover the body)")
        return cls(path, header, mm, offsets)

    def __contains__(self, word: object) -> bool:
        try:
            encoded = word.encode("ascii")  # type: ignore[attr-defined]
            needle = _LENGTH_BYTE[len(encoded)] + encoded
        except (AttributeError, UnicodeEncodeError, IndexError):
            return False  # not a str, not ASCII, or longer than any entry
        bucket = zlib.crc32(encoded) % self._buckets
        offsets = self._offsets
        return self._find(needle, offsets[bucket], offsets[bucket + 1]) >= 0

    @property
    def short_checksum(self) -> str:
        """First 8 hex digits of the source SHA-256: enough for players and directors to compare."""
        return self.source_sha256[:8]

    @property
    def closed(self) -> bool:
        return self._mm.closed

    def close(self) -> None:
        if isinstance(self._offsets, memoryview):
            self._offsets.release()
        if not self._mm.closed:
            try:
                self._mm.close()
            except BufferError:
                pass  # a caller still holds a view into it; the mapping goes with the last view

    def __enter__(self) -> "Lexicon":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __len__(self) -> int:
        return self.word_count

    def __repr__(self) -> str:
        return f"<Lexicon {self.name!r} {self.word_count} words {self.short_checksum} {self.path}>"


# --- The default lexicon and the lexicon folder -----------------------------------------------


def lexicon_dir() -> Path:
    """The folder of compiled lexicons the director chooses from."""
    import rackside

    return rackside.state_dir() / "lexicons"


def default_lexicon_path() -> Path:
    return lexicon_dir() / "enable.rlex"


def default_source_bytes() -> bytes:
    """The decompressed ENABLE list shipped in kiosk/data, checked against its known SHA-256."""
    try:
        data = lzma.decompress(DEFAULT_SOURCE.read_bytes())
    except (OSError, lzma.LZMAError) as exc:
        raise LexiconError(f"{DEFAULT_SOURCE}: cannot read the shipped ENABLE list: {exc}") from None
    if hashlib.sha256(data).hexdigest() != DEFAULT_SOURCE_SHA256:
        raise LexiconError(f"{DEFAULT_SOURCE}: the shipped ENABLE list is damaged (SHA-256 mismatch); "
                           "reinstall Rackside")
    return data


def default_is_current(path: Path | None = None) -> bool:
    """Whether the installed default lexicon exists, verifies, and was built from the shipped list."""
    path = default_lexicon_path() if path is None else Path(path)
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
        compile_bytes(default_source_bytes(), path, DEFAULT_NAME, label=str(DEFAULT_SOURCE))
    return path
