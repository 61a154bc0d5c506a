"""The wiring diagram (SVG) and wiring table (Markdown) of a pin map, drawn from code so that the
pictures can never disagree with `hardware/pins.toml`.

    python -m rackside.hardware.wiring > docs/wiring.svg          # the reference build's diagram
    python -m rackside.hardware.wiring --table                    # the table in hardware/README.md
    python -m rackside.hardware.wiring --pins my-pins.toml > my-wiring.svg

The diagram shows the 40-pin header as seen from above with the USB/Ethernet end at the bottom
(pin 1, the square pad, top left). A part sits beside the header column its signals use, so most
wires are straight; a power connection from the other column is drawn as a labelled stub at the pin.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from rackside.hardware.drivers import driver_of
from rackside.hardware.pinmap import PinMap, load_pinmap

# Physical pin -> (label, BCM number or None), the 40-pin header of every Pi since the B+.
_GPIO_AT = {3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24, 19: 10,
            21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12, 33: 13, 35: 19,
            36: 16, 37: 26, 38: 20, 40: 21}
POWER = {"GND": (6, 9, 14, 20, 25, 30, 34, 39), "3V3": (1, 17), "5V": (2, 4)}
HEADER: dict[int, tuple[str, int | None]] = {p: (f"GPIO{b}", b) for p, b in _GPIO_AT.items()}
for _name, _pins in POWER.items():
    HEADER.update({p: (_name, None) for p in _pins})
PHYSICAL = {bcm: pin for pin, (_, bcm) in HEADER.items() if bcm is not None}

COLOURS = {"GND": "#222222", "3V3": "#e8710a", "5V": "#d93025"}
SIGNAL_COLOURS = ["#1a73e8", "#188038", "#9334e6", "#b06000", "#007b83", "#c2185b", "#4e6a00", "#5c6bc0"]


@dataclass
class Terminal:
    label: str  # on the part, e.g. "CLK"
    pin: int | None  # physical header pin (None: not on the header)
    kind: str  # "signal", "GND", "3V3" or "5V"
    note: str = ""


@dataclass
class Part:
    key: str
    title: str
    subtitle: str
    terminals: list[Terminal] = field(default_factory=list)
    below: bool = False  # drawn under the header, every connection a labelled stub (its pins are on both sides)
    short: str = ""  # how a stub names a part drawn under the header ("keypad": keypad R1)


def side(pin: int) -> str:
    return "left" if pin % 2 else "right"


def row(pin: int) -> int:
    return (pin - 1) // 2


def parts_of(pinmap: PinMap) -> tuple[list[Part], list[str]]:
    """The parts wired to the header, with every connection assigned a physical pin, and notes for
    parts that are not on the header (a display on a USB serial adapter, say)."""
    parts: list[Part] = []
    notes: list[str] = []
    b = pinmap.buttons
    parts.append(Part("buttons", "Buttons", "momentary, each to GND", [
        Terminal("left player", PHYSICAL[b["left"]], "signal", "internal pull-up"),
        Terminal("right player", PHYSICAL[b["right"]], "signal", "internal pull-up"),
        Terminal("neutralise (centre)", PHYSICAL[b["neutralise"]], "signal", "internal pull-up"),
        Terminal("common GND", None, "GND", "the other leg of every button"),
    ]))
    for name, spec in pinmap.displays.items():
        title = f"{name.capitalize()} display"
        drawn = driver_of(spec).wiring(spec, title)  # the driver says how it is wired
        if isinstance(drawn, str):
            notes.append(drawn)
            continue
        subtitle, terminals = drawn
        parts.append(Part(f"displays.{name}", title, subtitle, [
            Terminal(label, PHYSICAL[bcm] if bcm is not None else None, kind, note) for label, bcm, kind, note in terminals
        ]))
    if pinmap.leds:
        parts.append(Part("leds", "Turn LEDs", "one beside each player's button", [
            Terminal(f"{side} player's LED via 330 Ω", PHYSICAL[bcm], "signal", "to the anode (long leg)")
            for side, bcm in pinmap.leds.items()
        ] + [Terminal("LED cathodes", None, "GND", "both short legs")]))
    if pinmap.buzzer is not None:
        parts.append(Part("buzzer", "Buzzer (optional)", "active piezo, NPN low-side switch", [
            Terminal("NPN base via 1 kΩ", PHYSICAL[pinmap.buzzer], "signal"),
            Terminal("NPN emitter", None, "GND"),
            Terminal("buzzer +", None, "5V", "buzzer − to NPN collector"),
        ]))
    from rackside.hardware.textdisplay import I2C_PINS

    # the optional text display (issue 40) on the Pi's I2C bus, which the pin map keeps free: [text_display]
    parts.append(Part("text_display", "Text display (optional)", "HD44780 + PCF8574 I2C backpack, or SSD1306", [
        Terminal("SDA", PHYSICAL[I2C_PINS["sda"]], "signal", "I2C data"),
        Terminal("SCL", PHYSICAL[I2C_PINS["scl"]], "signal", "I2C clock"),
        Terminal("VCC", None, "5V", "an SSD1306: 3V3 instead"),
        Terminal("GND", None, "GND"),
    ], below=True, short="text display"))
    kp = pinmap.keypad
    if kp is not None and (kp.enabled or not any(pinmap.use_of(bcm) for bcm in (*kp.rows, *kp.columns))):
        from rackside.hardware.keypad import LAYOUT

        parts.append(Part("keypad", "Keypad 3×4" + ("" if kp.enabled else " (optional)"),
                          "membrane; 7 lines straight to GPIOs; [keypad] enabled = true", [
            *(Terminal(f"R{i + 1}: row {i + 1} ({' '.join(LAYOUT[i])})", PHYSICAL[bcm], "signal", "driven low to scan")
              for i, bcm in enumerate(kp.rows)),
            *(Terminal(f"C{i + 1}: column {i + 1} ({' '.join(r[i] for r in LAYOUT)})", PHYSICAL[bcm], "signal", "internal pull-up")
              for i, bcm in enumerate(kp.columns)),
        ], below=True, short="keypad"))
    _assign_power(parts)
    return parts, notes


def drawn_parts(parts: list[Part]) -> list[Part]:
    """The parts as the diagram draws them: parts that share header pins (two displays on one SPI
    bus) become one box, their shared lines drawn once and their own lines named by part, so no two
    boxes cover the same rows. The table keeps a row per part and connection."""
    drawn: list[tuple[list[Part], set[int]]] = []
    for part in parts:
        pins = {t.pin for t in part.terminals if t.kind == "signal" and t.pin is not None}
        group = next((g for g in drawn if not part.below and not g[0][0].below and g[1] & pins), None)
        if group is None:
            drawn.append(([part], pins))
        else:
            group[0].append(part)
            group[1].update(pins)
    out: list[Part] = []
    for members, _ in drawn:
        if len(members) == 1:
            out.append(members[0])
            continue
        counts: dict[int, int] = {}
        for m in members:
            for t in m.terminals:
                if t.kind == "signal":
                    counts[t.pin] = counts.get(t.pin, 0) + 1
        terminals: list[Terminal] = []
        for m in members:
            who = m.title.split()[0].lower()  # "Left display" -> "left"
            for t in m.terminals:
                shared = t.kind == "signal" and counts[t.pin] > 1
                if shared and any(u.pin == t.pin for u in terminals):
                    continue
                label = t.label if shared else f"{t.label} ({who})"
                terminals.append(Terminal(label, t.pin, t.kind, t.note))
        titles = [m.title.split()[0] for m in members]
        title = " + ".join(titles[:1] + [x.lower() for x in titles[1:]]) + " " + members[0].title.split(None, 1)[1] + "s"
        out.append(Part("+".join(m.key for m in members), title, members[0].subtitle, terminals, short="displays"))
    return out


def _assign_power(parts: list[Part]) -> None:
    """Give each power terminal the nearest free header pin of its kind, on its part's side if any."""
    taken: set[int] = {t.pin for p in parts for t in p.terminals if t.pin is not None}
    for part in parts:
        signal_pins = [t.pin for t in part.terminals if t.pin is not None]
        home = side(signal_pins[0])
        centre = sum(row(p) for p in signal_pins) / len(signal_pins)
        for t in part.terminals:
            if t.pin is not None:
                continue
            candidates = [p for p in POWER[t.kind]]
            free = [p for p in candidates if p not in taken] or candidates
            t.pin = min(free, key=lambda p: (side(p) != home, abs(row(p) - centre), p))
            taken.add(t.pin)


# --- SVG ----------------------------------------------------------------------------------------
W, TOP, PITCH = 1240, 130, 30
HX = {"left": 590, "right": 650}  # pin column centres
BOX_W, BOX_X = {"left": 330, "right": 330}, {"left": 40, "right": 870}


def _y(pin: int) -> float:
    return TOP + row(pin) * PITCH


def render_svg(pinmap: PinMap, source: str = "hardware/pins.toml") -> str:
    title = "Rackside reference build: wiring" if source == "hardware/pins.toml" else f"Rackside wiring: {source}"
    parts, notes = parts_of(pinmap)
    parts = drawn_parts(parts)
    height = TOP + 20 * PITCH + 70 + 22 * (len(notes) + 3)
    below_y = TOP + 20 * PITCH + 12  # parts drawn under the header (the keypad), on the right of the legend
    below_h = sum(44 + 18 * len(p.terminals) + 10 for p in parts if p.below)
    height = max(height, below_y + below_h + 10)
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" '
        'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">',
        f'<rect width="{W}" height="{height}" fill="#ffffff"/>',
        f'<text x="{W / 2}" y="34" text-anchor="middle" font-size="20" font-weight="bold">{escape(title)}</text>',
        f'<text x="{W / 2}" y="58" text-anchor="middle" fill="#444">Raspberry Pi 40-pin header seen from above, '
        f'pin 1 top left. GPIO numbers are BCM. Generated by python -m rackside.hardware.wiring from {escape(source)}.</text>',
    ]
    # Which header pin each part connects to, and how (straight wire, or stub from the other column).
    used: dict[int, tuple[Part, Terminal, str]] = {}
    colour_of: dict[int, str] = {}
    n_signal = 0
    boxes: dict[str, list[tuple[float, float]]] = {"left": [], "right": []}
    wires: list[str] = []
    shapes: list[str] = []
    for part in parts:
        if part.below:
            continue
        home = side(next(t.pin for t in part.terminals if t.kind == "signal"))
        # The box spans the rows of its signals, and a power pin of the same column joins it (as a
        # straight wire) only if that keeps the boxes apart; other power comes by a labelled stub.
        sig_rows = [row(t.pin) for t in part.terminals if t.kind == "signal" and side(t.pin) == home]
        lo, hi = min(sig_rows), max(sig_rows)
        for t in part.terminals:
            if t.kind != "signal" and side(t.pin) == home:
                nlo, nhi = min(lo, row(t.pin)), max(hi, row(t.pin))
                # Two rows of clearance: each box's title sits above its first wire.
                if not any(nlo - 2 <= b_hi and b_lo - 2 <= nhi for b_lo, b_hi in boxes[home]):
                    lo, hi = nlo, nhi
        boxes[home].append((lo, hi))
        straight = [t for t in part.terminals if side(t.pin) == home and lo <= row(t.pin) <= hi]
        stubs = [t for t in part.terminals if t not in straight]
        bx, bw = BOX_X[home], BOX_W[home]
        y0, y1 = TOP + lo * PITCH - 44, TOP + hi * PITCH + 14 + 18 * len(stubs)
        edge = bx + bw if home == "left" else bx
        shapes.append(f'<rect x="{bx}" y="{y0}" width="{bw}" height="{y1 - y0}" rx="8" fill="#f8f9fa" '
                      'stroke="#5f6368" stroke-width="1.5"/>')
        shapes.append(f'<text x="{bx + 12}" y="{y0 + 17}" font-weight="bold">{escape(part.title)}</text>')
        shapes.append(f'<text x="{bx + 12}" y="{y0 + 31}" font-size="11" fill="#444">{escape(part.subtitle)}</text>')
        for t in part.terminals:
            if t.kind == "signal":
                colour = SIGNAL_COLOURS[n_signal % len(SIGNAL_COLOURS)]
                n_signal += 1
            else:
                colour = COLOURS[t.kind]
            colour_of[t.pin] = colour
            label = t.label + (f" ({t.note})" if t.note else "")
            if t in straight:
                used[t.pin] = (part, t, "wire")
                y = _y(t.pin)
                wires.append(f'<line x1="{HX[home]}" y1="{y}" x2="{edge}" y2="{y}" stroke="{colour}" stroke-width="3"/>')
                anchor, lx = ("end", edge - 10) if home == "left" else ("start", edge + 10)
                shapes.append(f'<circle cx="{edge}" cy="{y}" r="4" fill="{colour}"/>')
                shapes.append(f'<text x="{lx}" y="{y + 4}" text-anchor="{anchor}" font-size="12">{escape(label)}</text>')
            else:
                used[t.pin] = (part, t, "stub")
                y = TOP + hi * PITCH + 14 + 18 * stubs.index(t)
                shapes.append(f'<text x="{bx + 12}" y="{y + 8}" font-size="12" fill="{colour}">'
                              f'{escape(t.label)} → pin {t.pin} ({HEADER[t.pin][0]})'
                              f'{escape(": " + t.note if t.note else "")}</text>')
    for part in (p for p in parts if p.below):
        bx, bw = BOX_X["right"] - 60, BOX_W["right"] + 60
        y0, y1 = below_y, below_y + 44 + 18 * len(part.terminals)
        below_y = y1 + 10
        shapes.append(f'<rect x="{bx}" y="{y0}" width="{bw}" height="{y1 - y0}" rx="8" fill="#f8f9fa" '
                      'stroke="#5f6368" stroke-width="1.5"/>')
        shapes.append(f'<text x="{bx + 12}" y="{y0 + 17}" font-weight="bold">{escape(part.title)}</text>')
        shapes.append(f'<text x="{bx + 12}" y="{y0 + 31}" font-size="11" fill="#444">{escape(part.subtitle)}</text>')
        for i, t in enumerate(part.terminals):
            colour = SIGNAL_COLOURS[n_signal % len(SIGNAL_COLOURS)]
            n_signal += 1
            colour_of[t.pin] = colour
            used[t.pin] = (part, t, "stub")
            shapes.append(f'<text x="{bx + 12}" y="{y0 + 50 + 18 * i}" font-size="12" fill="{colour}">'
                          f'{escape(t.label)} → pin {t.pin} ({HEADER[t.pin][0]}){escape(": " + t.note if t.note else "")}</text>')
    # The header.
    hx0, hx1 = HX["left"] - 22, HX["right"] + 22
    out.append(f'<rect x="{hx0}" y="{TOP - 22}" width="{hx1 - hx0}" height="{20 * PITCH + 14}" rx="6" fill="#1e1e1e"/>')
    out.extend(wires)
    for pin in range(1, 41):
        name, bcm = HEADER[pin]
        s, y = side(pin), _y(pin)
        x = HX[s]
        if pin in used:
            fill = colour_of[pin]
        else:
            fill = {"GND": "#555555", "3V3": "#8a5a2b", "5V": "#8a3b36"}.get(name, "#9aa0a6")
        shape = (f'<rect x="{x - 9}" y="{y - 9}" width="18" height="18" fill="{fill}" stroke="#fff" stroke-width="1.5"/>'
                 if pin == 1 else f'<circle cx="{x}" cy="{y}" r="9" fill="{fill}" stroke="#fff" stroke-width="1.5"/>')
        out.append(shape)
        out.append(f'<text x="{x}" y="{y + 3.5}" text-anchor="middle" font-size="9" fill="#fff">{pin}</text>')
        anchor, lx = ("end", hx0 - 8) if s == "left" else ("start", hx1 + 8)
        weight = ' font-weight="bold"' if pin in used else ' fill="#80868b"'
        dy = -6 if pin in used else 4
        out.append(f'<text x="{lx}" y="{y + dy}" text-anchor="{anchor}" font-size="12"{weight}>{name}</text>')
        if pin in used and used[pin][2] == "stub":
            part, t, _ = used[pin]
            sx = hx0 - 70 if s == "left" else hx1 + 70
            out.append(f'<line x1="{x}" y1="{y}" x2="{sx}" y2="{y}" stroke="{colour_of[pin]}" stroke-width="3"/>')
            anchor2, lx2 = ("end", sx - 6) if s == "left" else ("start", sx + 6)
            # A part under the header, or two displays drawn as one, is named short (keypad R1,
            # displays CS (left)): the long label would run into a box.
            label = f"{part.short} {t.label.split(':')[0]}" if part.short else f"{part.title}: {t.label}"
            out.append(f'<text x="{lx2}" y="{y + 4}" text-anchor="{anchor2}" font-size="12" fill="{colour_of[pin]}">'
                       f'→ {escape(label)}</text>')
    out.extend(shapes)
    y = TOP + 20 * PITCH + 30
    legend = [
        "Buttons: one leg to the GPIO, the other to GND; no resistors (the Pi's internal pull-ups are enabled).",
        *dict.fromkeys(advice for spec in pinmap.displays.values() if (advice := driver_of(spec).advice)),
        *(["Turn LEDs: 330 Ω from the GPIO to the LED's anode (long leg), cathode to GND; lit while that player's time runs."]
          if pinmap.leds else []),
        *(["Buzzer: 1 kΩ from the GPIO to the NPN base (2N2222/BC337), emitter to GND, buzzer between 5 V and the collector."]
          if pinmap.buzzer is not None else []),
        *(["Keypad: its 7-pin ribbon straight to the GPIOs, no resistors (which ribbon pin is which line: its data sheet)."]
          if any(p.key == "keypad" for p in parts) else []),
        "Text display: I2C (BCM 2/3, the Pi's own pull-ups); an LCD's 5 V backpack: remove its SDA/SCL pull-ups to 5 V.",
        *notes,
    ]
    for line in legend:
        out.append(f'<text x="40" y="{y}" font-size="13">{escape(line)}</text>')
        y += 22
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_table(pinmap: PinMap) -> str:
    """The wiring table for hardware/README.md: one row per connection."""
    parts, notes = parts_of(pinmap)
    lines = ["| Part | Connection | Pi header pin | BCM GPIO | Notes |", "| --- | --- | --- | --- | --- |"]
    for part in parts:
        for t in part.terminals:
            name, bcm = HEADER[t.pin]
            lines.append(f"| {part.title} | {t.label} | {t.pin} ({name}) | {bcm if bcm is not None else '—'} | {t.note} |")
    lines += [f"\n{n}" for n in notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rackside.hardware.wiring", description=__doc__.splitlines()[0])
    parser.add_argument("--pins", type=Path, help="a pin-map TOML file (default: hardware/pins.toml)")
    parser.add_argument("--table", action="store_true", help="print the Markdown wiring table instead of the SVG")
    args = parser.parse_args(argv)
    try:
        pinmap = load_pinmap(args.pins)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    source = str(args.pins) if args.pins else "hardware/pins.toml"
    sys.stdout.write(render_table(pinmap) if args.table else render_svg(pinmap, source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
