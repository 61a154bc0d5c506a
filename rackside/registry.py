"""`Registry`: plug-ins found by name, as gpiozero finds its pin factories. Imports nothing of Rackside.

Rackside has two: the clock's outputs (`firmware.outputs`, `[[outputs]] name = "..."`) and the
display drivers (`hardware.drivers`, `driver = "..."` in a pin map). A name is found, in order:

1. among the things `register()`'d in this process (a test, a plug-in that registers itself);
2. among the built-in names, each a lazily imported "module:attribute" string (a registry's
   `builtin` callable gives them, so a folder of modules can be listed when asked);
3. in the registry's entry-point group, which a separately installed package declares.

What is found is checked by the registry's `accept` and then kept, so a module or an entry point
is loaded once. Hand-written because no library does this: `importlib.metadata` lists the entry
points and `importlib.import_module` imports; the rest is a lookup order.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping


def _anything(thing: Any) -> bool:
    return True


class Registry:
    """Things found by name; see the module's docstring for the order."""

    def __init__(self, group: str, builtin: Callable[[], Mapping[str, str]],
                 accept: Callable[[Any], bool] = _anything) -> None:
        self.group = group  # the entry-point group, "rackside.outputs"
        self._builtin = builtin
        self._accept = accept
        self._registered: dict[str, Any] = {}
        self._found: dict[str, Any] = {}  # built-ins and entry points, once loaded and accepted

    def register(self, name: str, thing: Any) -> None:
        """Make `thing` available as `name` (replaces an earlier one of that name)."""
        self._registered[name] = thing

    def unregister(self, name: str) -> None:
        self._registered.pop(name, None)

    def _entry_points(self) -> dict[str, Any]:
        from importlib.metadata import entry_points

        return {ep.name: ep for ep in entry_points(group=self.group)}

    def names(self) -> list[str]:
        """Every name that can be asked for, sorted (whether its module loads is not tried)."""
        return sorted({*self._registered, *self._builtin(), *self._entry_points()})

    def find(self, name: Any) -> Any | None:
        """The thing called `name`, or None: no such name, or what it names is not accepted."""
        if not isinstance(name, str) or not name:
            return None
        if name in self._registered:
            return self._registered[name]
        if name in self._found:
            return self._found[name]
        builtin = self._builtin()
        if name in builtin:
            from importlib import import_module

            module, _, attr = builtin[name].partition(":")
            thing = getattr(import_module(module), attr, None)
        else:
            ep = self._entry_points().get(name)
            thing = ep.load() if ep is not None else None
        if thing is None or not self._accept(thing):
            return None
        self._found[name] = thing
        return thing
