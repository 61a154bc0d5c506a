"""tools/arm64-gpio: the hands on the VM's gpio-sim chip while `rackside clock` runs (run inside the VM).

Presses a button by writing its line's sysfs `pull` (pull-down: the contact closed to ground;
pull-up: open), with contact bounce (two more toggles BOUNCE_S apart on the press and on the
release; it runs as SCHED_FIFO above the clock, as a switch is not slowed by the Pi's CPU),
types on the keypad by closing a key's contact in the chip's matrix (`sim_matrix`: the row and
column lines a key joins, gpio-sim-matrix.patch), with the same bounce, and reads the turn LEDs and the buzzer from the output lines' `value`. It plays the running side's
button (the lit LED), as a player would. Every action is a JSON line in OUT/rig.jsonl with the
CLOCK_MONOTONIC ns around it; run.sh's host-side checker (check.py) compares them with the clock's
journal and the kernel's trace. Standard library only.
"""

import collections
import json
import os
import sys
import time
from pathlib import Path

SYS, OUT = Path(sys.argv[1]), Path(sys.argv[2])
BUTTONS = {"left": 17, "right": 27, "neutralise": 22}
LEDS = {"left": 26, "right": 16}
BUZZER = 12
# A press's (and a release's) bounce: two more toggles, each after BOUNCE_S (+ the write's own ~1-5 ms):
# the contact open for less than the clock's settle_ms (15), yet long enough apart that the kernel
# raises each edge on its own (back to back, gpio-sim's interrupts coalesce into one edge, and a
# debouncer that takes every falling edge for a press would go unseen: issue 39's broken build).
BOUNCE_S = (0.004, 0.004)
KEYPAD_ROWS, KEYPAD_COLUMNS = (4, 25, 13, 19), (18, 20, 21)  # hardware/pins.toml [keypad]
KEYPAD_KEYS = "123456789*0#"  # game.messages.KEYPAD_KEYS, row by row
log = open(OUT / "rig.jsonl", "a")


def rec(**d):
    d.setdefault("t_ns", time.monotonic_ns())
    log.write(json.dumps(d) + "\n")
    log.flush()


def attr(g, name):
    return (SYS / f"sim_gpio{g}" / name).read_text().strip()


def pull(g, value):
    (SYS / f"sim_gpio{g}" / "pull").write_text(value)


def sample(what):
    rec(kind="outputs", what=what, leds={s: int(attr(b, "value")) for s, b in LEDS.items()}, buzzer=int(attr(BUZZER, "value")))


def press(name, hold_s=0.15, bounce=BOUNCE_S):
    """A press and its release, each with bounce; every write's [before, after] ns is recorded (on
    a loaded machine a write can take tens of ms, so check.py judges the bounce by these times)."""
    g = BUTTONS[name]
    writes = contact(lambda level: pull(g, "pull-down" if level == 0 else "pull-up"), hold_s, bounce)
    rec(kind="press", button=name, bcm=g, t_before=writes[0][1], t_after=writes[0][2], writes=writes,
        edges=len(writes), t_ns=time.monotonic_ns())


def key(k, hold_s=0.12, bounce=BOUNCE_S):
    """A keypad key pressed and released, with bounce: its contact joins its row line to its column
    line in the chip's matrix (level 0: closed)."""
    r, c = divmod(KEYPAD_KEYS.index(k), len(KEYPAD_COLUMNS))
    joined = f"{KEYPAD_ROWS[r]}:{KEYPAD_COLUMNS[c]}"
    writes = contact(lambda level: (SYS / "sim_matrix").write_text(joined if level == 0 else "\n"), hold_s, bounce)
    rec(kind="key", key=k, row=KEYPAD_ROWS[r], column=KEYPAD_COLUMNS[c], t_before=writes[0][1], writes=writes,
        t_ns=time.monotonic_ns())


def contact(write, hold_s, bounce):
    """Close a contact, hold it, open it, each with its bounce; the writes' (level, before, after)."""
    writes = []

    def w(level):
        t0 = time.monotonic_ns()
        write(level)
        writes.append((level, t0, time.monotonic_ns()))

    def settle_at(level):  # the contact's edge, then its bounce back and forth, ending at `level`
        w(level)
        for gap in bounce:
            for lv in (1 - level, level):
                if gap:
                    time.sleep(gap)
                w(lv)

    settle_at(0)
    time.sleep(hold_s)
    settle_at(1)
    return writes


def lit():
    on = [s for s, b in LEDS.items() if attr(b, "value") == "1"]
    return on[0] if len(on) == 1 else None


def running(within_s=1.5):
    """The side whose LED is lit alone through most of a watch longer than a blink (neutralised, both
    blink together; the two LEDs are read one after the other, so a read that straddles a blink's
    change sees one lit alone, and a single sample cannot tell)."""
    seen = collections.Counter()
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        seen[lit()] += 1
        time.sleep(0.05)
    side, n = seen.most_common(1)[0]
    return side if side is not None and n >= 0.75 * seen.total() else None


def selftest(transcript: Path) -> None:
    """Be the builder of `rackside clock selftest` (run beside us, its output in `transcript`): press
    the button each prompt asks for; answer a question "yes" (left) only when the lines say so: the
    LED asked about lit and the other dark, the buzzer's line high; a display's segments are
    answered yes here and checked on the wire from the trace (check.py)."""
    handled, deadline = 0, time.monotonic() + 200
    while time.monotonic() < deadline:
        lines = transcript.read_text(errors="replace").splitlines() if transcript.exists() else []
        for line in lines[handled:]:
            handled += 1
            words = {"Press the LEFT": "left", "Press the RIGHT": "right", "Press the CENTRE": "neutralise"}
            button = next((b for w, b in words.items() if w in line), None)
            if "[LEFT = yes" in line:
                yes = True
                if "turn LED lit" in line:
                    side = "left" if "the LEFT turn LED" in line else "right"
                    other = "right" if side == "left" else "left"
                    yes = attr(LEDS[side], "value") == "1" and attr(LEDS[other], "value") == "0"
                elif "Buzzer" in line:
                    yes = attr(BUZZER, "value") == "1"
                rec(kind="selftest-answer", question=line.strip(), yes=yes)
                button = "left" if yes else "right"
            if button:
                time.sleep(0.2)
                # a clean contact: the self-test's own settling (50 ms of quiet) is not under test, and
                # a loaded emulator stretches a scripted bounce past it
                press(button, hold_s=0.1, bounce=())
            if line.startswith(("self-test:", "exit ")):
                return
        time.sleep(0.1)


def durable() -> None:
    """The log on the disk now: what the rig did before a power cut must survive it."""
    log.flush()
    os.fsync(log.fileno())


CLEAN = ()  # a contact without bounce: the power cut's presses test what survives it, not the debounce


def play(turns: int, pause_s: float = 0.8, sync: bool = False) -> None:
    for _ in range(turns):
        time.sleep(pause_s)
        side = lit()
        if side is None:
            sample("no side lit")
            return
        press(side, bounce=CLEAN)
        if sync:
            durable()


if sys.argv[3:4] == ["selftest"]:
    selftest(Path(sys.argv[4]))
    sys.exit(0)
if sys.argv[3:4] == ["powercut"]:
    # the clock restarted (restored: neutralised); the centre resumes it, a few turns, then the cut:
    # presses go on (each logged to the disk) until run.sh kills QEMU
    time.sleep(2)
    rec(kind="powercut-start")
    press("neutralise", bounce=CLEAN)
    time.sleep(0.5)
    play(3)
    rec(kind="cut")
    durable()
    print("VMTEST POWERCUT now", flush=True)
    while True:
        play(1, 0.4, sync=True)
if sys.argv[3:4] == ["after"]:
    time.sleep(3)
    log.write("\n")  # the cut may have left a torn last line: this boot's records start on a line of their own
    rec(kind="after-start")
    sample("after the power cut")
    press("neutralise", bounce=CLEAN)
    time.sleep(0.5)
    play(3)
    time.sleep(2)
    sample("end")
    rec(kind="after-done")
    sys.exit(0)

lines = {**BUTTONS, **{f"column{i + 1}": g for i, g in enumerate(KEYPAD_COLUMNS)}}
rec(kind="lines", pulls={n: attr(g, "pull") for n, g in lines.items()}, values={n: attr(g, "value") for n, g in lines.items()})
time.sleep(2)
sample("before the game")
# the keypad, before the game (check-in's digits): every key once; `*` clears what was typed, `#`
# (a tap: the director's call needs it held) is used by no flow, so the game starts with nothing typed
for k in "123*456*789#0*":
    key(k)
    time.sleep(0.3)
rec(kind="keys-done")
time.sleep(0.5)
press("left")  # the left player starts the right player's time
time.sleep(0.5)
sample("after the first press")
for _ in range(5):
    time.sleep(1.2)
    side = lit()
    if side is None:
        sample("no side lit")
        break
    press(side)
    time.sleep(0.4)
    sample(f"after {side}'s press")
press("neutralise")
for _ in range(6):
    time.sleep(0.5)
    sample("neutralised")
press("neutralise")
time.sleep(0.5)
sample("restarted")
# On a starved host a bounce write can come later than settle_ms, and the clock rightly takes a second
# press (the debounce check counts it from the kernel's edges): a neutralise taken twice leaves the clock
# neutralised, and the game would never reach overtime. The rig looks, and resumes it with a clean press.
for _ in range(3):
    if running() is not None:
        break
    sample("still neutralised")
    press("neutralise", bounce=CLEAN)
    time.sleep(0.5)
# the running player's minute runs out: overtime (and the buzzer's beeps at 0:00)
side = lit()
deadline = time.monotonic() + 70
while time.monotonic() < deadline:
    time.sleep(0.1)
    if attr(BUZZER, "value") == "1":
        sample("buzzer")
        break
time.sleep(4)
sample("overtime")
side = lit()
if side:
    press(side)
time.sleep(2)
sample("end")
rec(kind="done")
