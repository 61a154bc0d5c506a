"""Long presses on the three buttons: pure, fed debounced presses and releases with their times.

The buttons are `left` (player 1), `right` (player 2) and `neutralise` (the centre). What a press
means depends on the clock's phase when it happens:

- While the clock RUNS, every press acts at once, at its edge (a player's press ends their turn,
  3.1.1(c); the centre neutralises, 1.4.3): nothing is ever held back on the path that charges time.
  Holding the centre for `hold_ns` then ends the game (the clock has been neutralised since the press,
  so the hold costs nobody time).
- While the clock is STOPPED (before the game, neutralised, waiting for latecomers, ended), a press
  is held back until it is clearly not the start of a long press, then acted on *dated at its edge*:
  a tap acts on release; a player's button acts after `chord_ns` unless the other player's button
  went down too. Because the press is dated at its edge, the time charged is exact; only the
  display follows a fraction of a second later. (While waiting for latecomers a centre tap is the
  latecomer's arrival and, with both absent, a player's press is theirs: 2.3.2, 2.3.3, in the core.)
  Then:
  - the centre held `hold_ns`: ends the game if one is in progress (the End gesture); before a game
    (waiting for latecomers included: no tile is drawn until both arrive, 2.3.2, 2.3.3) or after one
    it opens the director's menu instead, so a director marking an arrival never ends the game;
  - both player buttons pressed within `chord_ns` of each other and held `hold_ns` from the second
    press: the director's menu (as on hardware chess clocks). The two presses are dropped, so
    entering the menu never starts or switches anyone's time.
- **Calling the director** (issue 27, for clocks without a keypad): the centre pressed while both
  player buttons are held, in any phase. No play holds both player buttons and then presses the
  centre, so it collides with nothing: on a stopped clock the two held presses are dropped (as
  for the menu's chord, which the centre press pre-empts); on a running clock every press acted
  at its edge already, and the call neutralises (1.4.3, game.table). The three buttons'
  releases then do nothing.

Releasing a button that took part in a completed long press does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rackside.game.clock import Phase
from rackside.game.messages import BUTTONS, PLAYER_OF

DEFAULT_HOLD_NS = 3_000_000_000
DEFAULT_CHORD_NS = 400_000_000


@dataclass(frozen=True)
class Action:
    """What the gestures ask the runner to do: `press` (with `player`), `neutralise`, `end`, `menu`,
    `call` (the director: the centre pressed while both player buttons are held)."""

    kind: str
    t_ns: int
    player: int | None = None


@dataclass
class Gestures:
    hold_ns: int = DEFAULT_HOLD_NS
    chord_ns: int = DEFAULT_CHORD_NS
    down: dict[str, int] = field(default_factory=dict)  # button -> press time, while held
    pending: list[tuple[str, int]] = field(default_factory=list)  # held-back presses, in order
    consumed: set[str] = field(default_factory=set)  # held buttons whose long press completed
    centre_hold_at: int | None = None  # when holding the centre completes its gesture
    centre_acted: bool = False  # the centre press already acted (neutralised a running clock)
    chord_at: int | None = None  # when holding both player buttons opens the menu

    def reset(self) -> None:
        """Forget everything held back (entering or leaving the menu). Buttons still down stay
        consumed, so their releases do nothing."""
        self.consumed |= set(self.down)
        self.pending.clear()
        self.centre_hold_at = self.chord_at = None
        self.centre_acted = False

    def taken(self, button: str, t_ns: int) -> None:
        """Someone else (the director's menu) acted on this press: remember the button is down,
        and let its release do nothing."""
        self.down[button] = t_ns
        self.consumed.add(button)

    def deadline(self) -> int | None:
        """The next moment `tick` has something to decide, or None."""
        times = [t for t in (self.centre_hold_at, self.chord_at) if t is not None]
        if self.pending and self.chord_at is None:
            times += [t + self.chord_ns for b, t in self.pending if b in PLAYER_OF]
        return min(times) if times else None

    # --- events ------------------------------------------------------------------------------

    def press(self, button: str, t_ns: int, phase: Phase) -> list[Action]:
        if button not in BUTTONS:
            raise ValueError(f"unknown button {button!r} (allowed: {', '.join(BUTTONS)})")
        out: list[Action] = []
        self.down[button] = t_ns
        self.consumed.discard(button)
        if button == "neutralise" and "left" in self.down and "right" in self.down:
            # the director's call: both player buttons held, then the centre (any phase)
            self.pending.clear()
            self.chord_at = self.centre_hold_at = None
            self.centre_acted = False
            self.consumed |= {"left", "right", "neutralise"}
            return [Action("call", t_ns)]
        if phase is Phase.RUNNING and not self.pending:
            if button == "neutralise":
                self.centre_hold_at, self.centre_acted = t_ns + self.hold_ns, True
                return [Action("neutralise", t_ns)]
            return [Action("press", t_ns, PLAYER_OF[button])]
        if button == "neutralise":
            if self.pending:  # a player's press and the centre together: no gesture, act on both
                out += self._flush()
                self.centre_hold_at, self.centre_acted = t_ns + self.hold_ns, True
                return out + [Action("neutralise", t_ns)]
            self.pending.append((button, t_ns))
            self.centre_hold_at, self.centre_acted = t_ns + self.hold_ns, False
            return out
        other = "right" if button == "left" else "left"
        if any(b == "neutralise" for b, _ in self.pending):  # centre then a player: no gesture
            return self._flush() + [Action("press", t_ns, PLAYER_OF[button])]
        if any(b == other and t_ns - t <= self.chord_ns for b, t in self.pending) and other in self.down:
            self.pending.append((button, t_ns))
            self.chord_at = t_ns + self.hold_ns
            return out
        out += self._flush()
        self.pending.append((button, t_ns))
        return out

    def release(self, button: str, t_ns: int) -> list[Action]:
        self.down.pop(button, None)
        if button in self.consumed:
            self.consumed.discard(button)
            return []
        if button == "neutralise":
            self.centre_hold_at = None
        if any(b == button for b, _ in self.pending):
            self.chord_at = None
            return self._flush()
        return []

    def tick(self, t_ns: int, phase: Phase) -> list[Action]:
        """Decide whatever is due at `t_ns`: completed long presses, and held-back player presses
        that turned out not to be the start of a chord."""
        if self.chord_at is not None and t_ns >= self.chord_at:
            self.pending.clear()
            self.chord_at = None
            self.consumed |= {"left", "right"} & set(self.down)
            return [Action("menu", t_ns)]
        if self.centre_hold_at is not None and t_ns >= self.centre_hold_at:
            acted = self.centre_acted
            self.centre_hold_at, self.centre_acted = None, False
            self.pending = [(b, t) for b, t in self.pending if b != "neutralise"]
            self.consumed.add("neutralise")
            if acted or phase in (Phase.RUNNING, Phase.NEUTRALISED):
                return [Action("end", t_ns)]
            return [Action("menu", t_ns)]
        if self.pending and self.chord_at is None:
            first_player = next((t for b, t in self.pending if b in PLAYER_OF), None)
            if first_player is not None and t_ns >= first_player + self.chord_ns:
                return self._flush()
        return []

    def flush(self) -> list[Action]:
        """Act on every held-back press now (the clock is shutting down: a press that was made
        is never lost)."""
        self.chord_at = self.centre_hold_at = None
        return self._flush()

    def _flush(self) -> list[Action]:
        out = []
        for button, t in self.pending:
            if button == "neutralise":
                out.append(Action("neutralise", t))
                self.centre_acted = True  # a later completed hold now ends the game
            else:
                out.append(Action("press", t, PLAYER_OF[button]))
        self.pending.clear()
        return out
