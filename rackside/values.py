"""`Record`: small immutable values: the station's events, effects, views and geometry, and the judge's
adjudications, challenge records and lexicon facts. Imports nothing of Rackside.

Why not typing.NamedTuple or frozen dataclasses: defining one costs 0.2-0.5 ms (they generate and
compile code), and the station defines about twenty of them before its first frame; that was a
measurable share of a cold start that must stay within 1.5x a bare pygame window. A Record class
costs a few microseconds to define.
"""

from __future__ import annotations


class Record:
    """Fields are the subclass's `__slots__`, given positionally or by name; `_defaults` holds the
    optional ones. Immutable; equal and hashable by type and values."""

    __slots__ = ()
    _defaults: dict = {}

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes {len(names)} values, got {len(args)}")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated field {key!r}")
            values[key] = value
        for name in names:
            if name in values:
                value = values[name]
            elif name in self._defaults:
                value = self._defaults[name]
            else:
                raise TypeError(f"{type(self).__name__}: missing field {name!r}")
            object.__setattr__(self, name, value)

    def values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def replace(self, **changes):
        """A copy with these fields changed."""
        return type(self)(**{**dict(zip(self.__slots__, self.values())), **changes})

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return type(other) is type(self) and other.values() == self.values()

    def __hash__(self):
        return hash((type(self), self.values()))

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"
