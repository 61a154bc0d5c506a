"""A JavaScript object literal as Python values: TSH's `tourney.js` is JavaScript, not JSON.

TSH's JSON command writes `newt={...};` in which missing values are `undefined` (a real file has
hundreds of them); files passed on by live-coverage sites are often reformatted with unquoted keys,
single quotes, trailing commas and `//` comments. This reads exactly that subset of JavaScript:
objects, arrays, strings, numbers, `true`/`false`/`null`/`undefined`, an optional `NAME =` in front
and a `;` after. It never evaluates anything.

Hand-written because no kept library reads it faithfully: `json` refuses `undefined`; `chompjs`
turns `undefined` into the string "undefined" (indistinguishable from a player called that) and
silently ignores whatever follows the literal; `json5` is not among the kept packages.

Bounds: the text is at most MAX_CHARS, nesting at most MAX_DEPTH (checked as it goes, so a deep
file is one clear error, not a RecursionError). `undefined` reads as the UNDEFINED marker, so a
caller can tell "absent" from `null`.
"""

from __future__ import annotations

import math
import re

MAX_CHARS = 64 * 1024 * 1024  # a 6-division event's tourney.js is a few hundred KB
MAX_DEPTH = 64  # TSH's deepest is config._termdict.messages.X (5 levels)


class JsLiteralError(ValueError):
    """Not a JavaScript literal we read: carries the line and column."""


class _Undefined:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED = _Undefined()

_WORDS = {"true": True, "false": False, "null": None, "undefined": UNDEFINED,
          "NaN": math.nan, "Infinity": math.inf}
_NUMBER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)+", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def parse(text: str, source: str = "<js>") -> object:
    """The one literal in `text`, optionally as `NAME = literal;` (TSH writes `newt=`)."""
    if len(text) > MAX_CHARS:
        raise JsLiteralError(f"{source}: {len(text)} characters, more than the {MAX_CHARS} a tourney.js may have")
    p = _Parser(text.lstrip("\ufeff"), source)
    p.space()
    m = _IDENT.match(p.text, p.i)
    if m and m.group() not in _WORDS:  # `newt = {...}` (also `var newt = ...`)
        p.i = m.end()
        p.space()
        if m.group() in ("var", "let", "const"):
            kw, m = m.group(), _IDENT.match(p.text, p.i)
            if not m:
                p.fail(f"a name after {kw}")
            p.i = m.end()
            p.space()
        p.expect("=")
    value = p.value(0)
    p.space()
    if p.peek() == ";":
        p.i += 1
        p.space()
    if p.i != len(p.text):
        p.fail("the end of the file after the literal")
    return value


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.i = 0

    def fail(self, wanted: str):
        line = self.text.count("\n", 0, self.i) + 1
        col = self.i - (self.text.rfind("\n", 0, self.i) + 1) + 1
        got = self.text[self.i:self.i + 20]
        raise JsLiteralError(f"{self.source}:{line}:{col}: expected {wanted}, found {got!r}" if got else
                             f"{self.source}:{line}:{col}: expected {wanted}, found the end of the file")

    def space(self) -> None:
        m = _SPACE.match(self.text, self.i)
        if m:
            self.i = m.end()

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            self.fail(repr(ch))
        self.i += 1

    def value(self, depth: int):
        self.space()
        c = self.peek()
        if c == "{":
            return self.obj(depth + 1)
        if c == "[":
            return self.arr(depth + 1)
        if c and c in "\"'":
            return self.string()
        m = _NUMBER.match(self.text, self.i)
        if m:
            self.i = m.end()
            t = m.group()
            if t.lstrip("+-")[:2] in ("0x", "0X"):
                return int(t, 16)
            return float(t) if any(x in t for x in ".eE") else int(t)
        m = _IDENT.match(self.text, self.i)
        if m and m.group() in _WORDS:
            self.i = m.end()
            return _WORDS[m.group()]
        if c == "-" and self.text.startswith("-Infinity", self.i):
            self.i += 9
            return -math.inf
        self.fail("a value")

    def _deeper(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.fail(f"at most {MAX_DEPTH} levels of nesting")

    def obj(self, depth: int) -> dict:
        self._deeper(depth)
        self.i += 1
        out: dict = {}
        while True:
            self.space()
            c = self.peek()
            if c == "}":
                self.i += 1
                return out
            if c and c in "\"'":
                key = self.string()
            else:
                m = _IDENT.match(self.text, self.i) or re.compile(r"\d+").match(self.text, self.i)
                if not m:
                    self.fail("a key or '}'")
                key = m.group()
                self.i = m.end()
            self.space()
            self.expect(":")
            out[key] = self.value(depth)
            self.space()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "}":
                self.fail("',' or '}'")

    def arr(self, depth: int) -> list:
        self._deeper(depth)
        self.i += 1
        out: list = []
        while True:
            self.space()
            if self.peek() == "]":
                self.i += 1
                return out
            out.append(self.value(depth))
            self.space()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "]":
                self.fail("',' or ']'")

    def string(self) -> str:
        quote = self.text[self.i]
        self.i += 1
        parts: list[str] = []
        text = self.text
        while True:
            j = self.i
            while j < len(text) and text[j] not in (quote, "\\", "\n"):
                j += 1
            parts.append(text[self.i:j])
            self.i = j
            if j >= len(text) or text[j] == "\n":
                self.fail(f"the closing {quote}")
            if text[j] == quote:
                self.i = j + 1
                return "".join(parts)
            esc = text[j + 1:j + 2]
            self.i = j + 2
            if esc in _ESCAPES:
                parts.append(_ESCAPES[esc])
            elif esc == "u":
                h = text[self.i:self.i + 4]
                if not re.fullmatch(r"[0-9a-fA-F]{4}", h):
                    self.fail("four hex digits after \\u")
                parts.append(chr(int(h, 16)))
                self.i += 4
            elif esc == "x":
                h = text[self.i:self.i + 2]
                if not re.fullmatch(r"[0-9a-fA-F]{2}", h):
                    self.fail("two hex digits after \\x")
                parts.append(chr(int(h, 16)))
                self.i += 2
            elif esc == "\n":  # a line continuation
                pass
            elif esc == "":
                self.fail("an escaped character")
            else:
                parts.append(esc)  # \" \' \\ \/ and any other escaped character stand for themselves
