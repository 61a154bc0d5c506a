"""How a message is described once and checked the same way wherever it enters (issue 24 item 3).

A `Schema` names a message's fields, each with its kind (`Whole`, `Text`, `OneOf`, `Flag`, `Time`,
`ListOf`, `Obj`, `Check`), and `check(d)` returns the message holding those fields only, each of its
type, in its range and size, or raises `Invalid`: one line naming the field, what is allowed and
what came (`"players[0].remaining_ms must be a whole number from ... , not "5""`). The director's
commands (hall.wire.commands), what a clock or a station publishes (hall.wire.messages) and the
hello (hall.wire.join) are each one Schema; the console, the clock and the director's tools check
with it, so a field added to a schema is checked at every end with no further code.

    IDENTIFY = Schema({"seconds": Whole(1, 60, default=10)})
    IDENTIFY.check({"seconds": 61})   # Invalid: seconds must be a whole number from 1 to 60, not 61

Absent and null: a field with no `default` and not `null` must be there; `null=True` lets it be
absent or null (None); `default=` is what an absent one is (and a null one too, with `null`);
`default=OMIT` leaves an absent (or null) field out of the result. A whole number is never a bool
(`True == 1` in Python) nor a float (JSON's 5.0 is not the integer 5).

Hand-written, not msgspec (which does publish aarch64 wheels for CPython 3.11, so the bundle
could carry it) nor jsonschema: the checks are the contract's own words (a late start's `at` is
ISO 8601 with its zone, an update's url ends in the download path, a new game's rules are
clock.toml's [clock] keys checked by the clock's own code), so most fields would be custom checks
under either; their refusals would no longer name the rule or say what a director may send
(msgspec says "Expected `int` <= 2, got `int` - at `$.player`"), and the clocks' acks, the tests and
docs/hall.md speak in these; the runner checks Python values (a `clock.Rules`), not JSON; and a
compiled wheel per Python and per platform in the offline bundle is one more thing to pin for
~250 lines. Pure: values in, values out, no Rackside import (any end may use it).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Callable, Mapping

REQUIRED = object()  # no default: the field must be there
OMIT = object()  # default: an absent (or null) field is left out of the result
_MISSING = object()


class Invalid(ValueError):
    """A value refused: `field` (its path: `players[0].remaining_ms`), what is `allowed`, the value.
    `str()` is the one line a director, a device's log or an ack shows."""

    def __init__(self, field: str, allowed: str, value: Any = _MISSING, *, hide: bool = False, line: str | None = None) -> None:
        self.field, self.allowed, self.value = field, allowed, value
        if line is not None:
            pass
        elif value is _MISSING:
            line = f"{field} is missing: it must be {allowed}"
        elif hide:  # a secret or a token is not echoed into a log or an ack
            line = f"{field} must be {allowed}"
        else:
            line = f"{field} must be {allowed}, not {show(value)}"
        super().__init__(line)


def show(v: Any) -> str:
    """A value as a refusal quotes it: JSON, at most 40 characters."""
    try:
        text = json.dumps(v, default=lambda x: type(x).__name__)
    except (ValueError, RecursionError):  # a circular or deeply nested value (not JSON's: the runner's)
        text = type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def field_path(where: str, name: str) -> str:
    """`name` inside `where` (a nested message's path): `players[0].remaining_ms`."""
    return f"{where}.{name}" if where else name


class Field:
    """One field's kind. `says` replaces the kind's own words for what is allowed ("1 or 2");
    `hide`: a refusal does not quote the value."""

    allowed = "a value"

    def __init__(self, *, default: Any = REQUIRED, null: bool = False, says: str | None = None, hide: bool = False) -> None:
        self.default, self.null, self.hide, self.says = default, null, hide, says
        if says is not None:
            self.allowed = says

    def check(self, v: Any, where: str) -> Any:
        if not self.accepts(v):
            raise Invalid(where, self.allowed, v, hide=self.hide)
        return self.value(v, where)

    def accepts(self, v: Any) -> bool:  # the kind's test (a subclass's)
        return True

    def value(self, v: Any, where: str) -> Any:  # what the message keeps (nested kinds check inside)
        return v

    def absent(self) -> Any:
        """What an absent or null field is, or REQUIRED / OMIT (a list or dict default: a copy)."""
        if self.default is REQUIRED and self.null:
            return None
        return type(self.default)(self.default) if isinstance(self.default, (dict, list)) else self.default


def whole(v: Any) -> bool:
    """A whole number: an int, never a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


class Whole(Field):
    """A whole number from `lo` to `hi` (`above`: more than `lo`); `text`: also a text of one, as a
    page's form sends it ("350"), kept as the number."""

    def __init__(self, lo: int, hi: int, *, above: bool = False, unit: str = "", text: bool = False, **kw: Any) -> None:
        self.lo, self.hi, self.above, self.text = lo, hi, above, text
        of = f" of {unit}" if unit else ""
        self.allowed = f"a whole number{of} above {lo} and at most {hi}" if above else f"a whole number{of} from {lo} to {hi}"
        super().__init__(**kw)

    def accepts(self, v: Any) -> bool:
        if self.text and isinstance(v, str) and re.fullmatch(r"[+-]?[0-9]{1,18}", v.strip()):
            v = int(v)
        return whole(v) and (self.lo < v if self.above else self.lo <= v) and v <= self.hi

    def value(self, v: Any, where: str) -> int:
        return int(v)


class Text(Field):
    """A text of 1 to `most` characters (`least` to `most`), matching `pattern` if given (`shape`
    says what the pattern allows, in words)."""

    def __init__(self, most: int, *, least: int = 1, pattern: re.Pattern | None = None, shape: str | None = None, **kw: Any) -> None:
        self.most, self.least, self.pattern = most, least, pattern
        form = f" {shape}" if shape else (f" of the form {pattern.pattern}" if pattern is not None else "")
        self.allowed = f"a text of {least} to {most} characters{form}"
        super().__init__(**kw)

    def accepts(self, v: Any) -> bool:
        return isinstance(v, str) and self.least <= len(v) <= self.most and (self.pattern is None or bool(self.pattern.match(v)))


class OneOf(Field):
    """One of `values` (compared by type too: true is not 1)."""

    def __init__(self, values: tuple, **kw: Any) -> None:
        self.values = tuple(values)
        self.allowed = "one of " + ", ".join(map(show, self.values)) + (" or null" if kw.get("null") else "")
        super().__init__(**kw)

    def accepts(self, v: Any) -> bool:
        return any(type(v) is type(x) and v == x for x in self.values)


class Flag(Field):
    allowed = "true or false"

    def accepts(self, v: Any) -> bool:
        return isinstance(v, bool)


class Time(Field):
    """A moment in ISO 8601, at most 40 characters, kept as sent; `zone`: with its time zone."""

    def __init__(self, *, zone: bool = False, **kw: Any) -> None:
        self.zone = zone
        self.allowed = ("a date and time with its zone in ISO 8601, e.g. \"2026-11-30T10:00:00+00:00\"" if zone
                        else "a time in ISO 8601") + (" or null" if kw.get("null") else "")
        super().__init__(**kw)

    def accepts(self, v: Any) -> bool:
        try:
            when = datetime.fromisoformat(v) if isinstance(v, str) and len(v) <= 40 else None
        except ValueError:
            return False
        return when is not None and (not self.zone or when.tzinfo is not None)


class ListOf(Field):
    """A list of `least` to `most` items, each an `item`; `distinct`: no item twice."""

    def __init__(self, item: Field, *, most: int, least: int = 0, distinct: bool = False, **kw: Any) -> None:
        self.item, self.most, self.least, self.distinct = item, most, least, distinct
        self.allowed = f"a list of {least} to {most} items"
        super().__init__(**kw)

    def accepts(self, v: Any) -> bool:
        return isinstance(v, list) and self.least <= len(v) <= self.most

    def value(self, v: list, where: str) -> list:
        out = [self.item.check(x, f"{where}[{i}]") for i, x in enumerate(v)]
        if self.distinct and len({json.dumps(x, sort_keys=True) for x in out}) != len(out):
            raise Invalid(where, self.allowed if self.says else self.allowed + ", none twice", v)
        return out


class Obj(Field):
    """An object checked by its own `schema` (nested)."""

    def __init__(self, schema: "Schema", **kw: Any) -> None:
        self.schema = schema
        self.allowed = "an object with " + ", ".join(schema.fields)
        super().__init__(**kw)

    def accepts(self, v: Any) -> bool:
        return isinstance(v, dict)

    def value(self, v: dict, where: str) -> dict:
        return self.schema.check(v, where)


class Check(Field):
    """A check of the contract's own: `test(value)` returns what the message keeps or raises
    ValueError (or TypeError) saying why; `says` is what is allowed."""

    def __init__(self, test: Callable[[Any], Any], *, says: str, **kw: Any) -> None:
        self.test = test
        super().__init__(says=says, **kw)

    def check(self, v: Any, where: str) -> Any:
        try:
            return self.test(v)
        except Invalid:
            raise
        except (TypeError, ValueError) as e:
            raise Invalid(where, f"{self.allowed} ({str(e)[:200]})" if str(e) else self.allowed, v, hide=self.hide) from None


class Schema:
    """A message's fields, in order. `unknown`: "refuse" (a command: a field the clock does not know
    is refused, naming the ones allowed) or "ignore" (what a device publishes: readers ignore what
    they do not know, docs/hall.md). `then(message)`: a check across fields, after each field's."""

    def __init__(self, fields: Mapping[str, Field], *, unknown: str = "ignore",
                 then: Callable[[dict, str], dict] | None = None) -> None:
        if unknown not in ("refuse", "ignore"):
            raise ValueError(f"unknown must be 'refuse' or 'ignore', not {unknown!r}")
        self.fields, self.unknown, self.then = dict(fields), unknown, then

    def extended(self, **fields: Field) -> "Schema":
        """This schema with more fields (or some replaced): a new message version's, or a test's."""
        return Schema({**self.fields, **fields}, unknown=self.unknown, then=self.then)

    def check(self, d: Any, where: str = "") -> dict:
        if not isinstance(d, dict):
            raise Invalid(where or "message", "an object with " + ", ".join(self.fields), d)
        if self.unknown == "refuse":
            extra = sorted(k for k in d if k not in self.fields)
            if extra:
                field = field_path(where, str(extra[0])[:40])
                raise Invalid(field, ", ".join(self.fields), d[extra[0]],
                              line=f"unknown field {field!r}: allowed are {', '.join(sorted(self.fields))}")
        out: dict[str, Any] = {}
        for name, f in self.fields.items():
            v = d.get(name, _MISSING)
            if v is _MISSING or (v is None and f.null):
                fill = f.absent()
                if fill is REQUIRED:
                    raise Invalid(field_path(where, name), f.allowed)
                if fill is not OMIT:
                    out[name] = fill
                continue
            out[name] = f.check(v, field_path(where, name))
        return self.then(out, where) if self.then is not None else out
