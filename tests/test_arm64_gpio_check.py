"""tools/arm64-gpio/check.py's own reading of a VM run, without the VM (issue 39).

The keypad's scan as the kernel traces it: the real scanner (hardware.keypad) on gpiozero's mock
pins and `MockMatrix` (the wires), every row direction and level change and every column read
recorded as the `gpio_direction`/`gpio_value` events the VM's trace gives, read back by check.py's
`keypad_scans`. And `allowed`: how many presses the debounce of docs/clock.md must make of a
bounced contact, judged by the rig's recorded write times (a power cut's presses and the game's alike).
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

from rackside.hardware.keypad import Keypad
from rackside.hardware import tm1637_decode as dec

from support.keypad_scan import COLUMNS, ROWS, Scanner

CHECK = Path(__file__).resolve().parents[1] / "tools" / "arm64-gpio" / "check.py"
MS = 1_000_000


def load_check():
    spec = importlib.util.spec_from_file_location("arm64_gpio_check", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def traced_keypad(rig):
    """A Keypad on the rig's mock pins whose rows' and columns' pin calls are recorded as trace events."""
    kp = Keypad(ROWS, COLUMNS, board=rig.board)
    events: list[dec.Event] = []

    def trace_row(pin, bcm):
        set_function, change_state = pin._set_function, pin._change_state

        def _set_function(self, value):
            set_function(value)
            events.append(dec.Event(rig.now, bcm, "in" if value == "input" else "out"))
            if value != "input":
                events.append(dec.Event(rig.now, bcm, "set", int(bool(self._state))))

        def _change_state(self, value):
            changed = change_state(value)
            if self._function == "output":
                events.append(dec.Event(rig.now, bcm, "set", int(bool(value))))
            return changed

        pin._set_function = types.MethodType(_set_function, pin)
        pin._change_state = types.MethodType(_change_state, pin)

    def trace_column(pin, bcm):
        get_state = pin._get_state

        def _get_state(self):
            state = get_state()
            events.append(dec.Event(rig.now, bcm, "get", int(bool(state))))
            return state

        pin._get_state = types.MethodType(_get_state, pin)

    for row, bcm in zip(kp.rows, ROWS):
        trace_row(row.pin, bcm)
    for column, bcm in zip(kp.columns, COLUMNS):
        trace_column(column.pin, bcm)
    return kp, events


def test_the_traced_scan_finds_the_key_pressed_in_its_row_and_column(rig):
    check = load_check()
    assert (check.KEYPAD_ROWS, check.KEYPAD_COLUMNS) == (ROWS, COLUMNS)
    kp, events = traced_keypad(rig)
    s = Scanner(rig, kp)
    try:
        s.ms(5)
        found = {}
        for key in "5#1":
            start = len(events)
            kp.drive(key, True)
            s._woken()
            s.ms(60)
            kp.drive(key, False)
            s._woken()
            s.ms(40)
            scans = check.keypad_scans(events[start:], base=0)
            found[key] = {k for _, k, closed in scans if closed}
            assert sum(1 for *_, closed in scans if closed) >= 3  # a key held 60 ms spans several scans
        assert found == {"5": {"5"}, "#": {"#"}, "1": {"1"}}
        # two keys of one column held: each scan finds both, each in its own row (a ghost would add a third)
        start = len(events)
        kp.drive("2", True)
        kp.drive("8", True)
        s._woken()
        s.ms(30)
        assert {k for _, k, closed in check.keypad_scans(events[start:], base=0) if closed} == {"2", "8"}
        assert check.row_read_latency(events, base=0)  # a row driven, then a column read
    finally:
        kp.close()


def test_allowed_judges_the_bounce_by_the_rigs_write_times():
    check = load_check()

    def contact(*gaps_ms):
        """A press: closed at 0, then open/close toggles; each write 1 ms; gaps_ms: the open gaps."""
        writes, t = [(0, 0, 1 * MS)], 1 * MS
        for gap in gaps_ms:
            writes.append((1, t, t + MS))
            t += MS + gap * MS
            writes.append((0, t, t + MS))
            t += MS
        writes.append((1, t + 100 * MS, t + 101 * MS))
        return {"writes": writes}

    assert check.allowed([contact(4, 4)]) == (1, 1)  # bounce shorter than settle_ms: one press
    assert check.allowed([contact(20)]) == (2, 2)  # open 20 ms: a second press, rightly
    assert check.allowed([contact(13.5)]) == (1, 2)  # within the writes' own duration: either
    assert check.allowed([contact(4), contact(), contact(20)]) == (4, 4)


def test_the_kernels_edges_are_read_from_the_trace_and_debounced(tmp_path):
    """Each edge: the interrupt's time, the level the character device's irq thread read after it
    (its `get`); other reads (the clock's own) are not edges. The debounce of docs/clock.md takes a
    closing only after settle_ms open: bounce 2 ms apart is one press, an opening of 20 ms two."""
    check = load_check()
    base, irq = 476, 25  # the chip's first gpio number; the line's interrupt (GPIO17)

    def at(ms):
        return f"{381 + ms // 1000}.{(ms % 1000) * 1000:06d}"

    rows = [f"        rackside-480     [000] .....   {at(0)}: gpio_value: {base + 17} get 1"]
    irqs = []
    for ms, level in [(10, 0), (12, 1), (14, 0), (200, 1), (220, 0), (300, 1)]:
        rows.append(f"          python-496     [001] d.h..   {at(ms)}: irq_handler_entry: irq={irq} name=lg")
        rows.append(f"       irq/{irq}-lg-484     [000] .....   {at(ms + 1)}: gpio_value: {base + 17} get {level}")
        irqs.append((381_000 + ms) * MS)
    (tmp_path / "trace.txt").write_text("\n".join(rows) + "\n")
    edges = check.kernel_edges(tmp_path, base, {17: irqs})
    assert edges == {17: [(t, level == 0) for t, level in zip(irqs, [0, 1, 0, 1, 0, 1])]}
    assert check.debounced(edges[17]) == 2  # 10 ms (14 ms bounced: 2 ms open), then 220 ms after 20 ms open
    assert check.debounced([(0, True), (MS, False), (2 * MS, True)]) == 1


def test_a_restored_clock_may_show_its_state_before_a_press_until_the_press_is_released():
    """After a power cut the clock comes back neutralised; the centre press that restarts it acts at
    its release (firmware/gestures.py), dated at its edge. A frame drawn between the edge and the
    release shows the restored state: the power-cut check allowed only the state after the press,
    and a VM run under load failed on such a frame ('-006' drawn 142 ms after the edge). Long after
    the press, the state before it is no longer allowed."""
    from rackside.game.clock import Neutralise, Phase, Press, Resume, Rules

    check = load_check()
    rules = Rules()
    S = 1_000_000_000
    events = [Press(1 * S, 1), Press(2 * S, 2), Press(3 * S, 1), Resume(20 * S, 4 * S), Neutralise(28_364_000_000)]
    full = check.fold_timeline(events, rules)
    timeline = full[3:]  # from the Resume: what the recovered clock knew
    start = timeline[0][1:]
    restored = check.fold_timeline(events[:4], rules)[-1][1]
    running = full[-1][1]
    assert (restored.phase, running.phase) == (Phase.NEUTRALISED, Phase.RUNNING)  # restored neutralised, then restarted

    def right(t):
        return check.recovered_shows(timeline, t, rules, start, 20 * S, 1)[0]

    soon = 28_506_000_000  # the VM run's frame, 142 ms after the edge
    assert len(right(soon)) == 2  # the restored state (its edge not yet released) or the running one
    later = 31_506_000_000
    assert len(right(later)) == 1  # only the running clock's, long after the press
    assert check.recovered_shows(timeline, 19 * S, rules, start, 20 * S, 1)[1] is True  # before the restore: not its


# A VM run's trace (tools/arm64-gpio/run.sh, 2026-12-06, cortex-a53, unloaded): one scan of the
# keypad while key 6 (row GPIO25, column GPIO21) was held; the chip's base is 476 (GPIO4 is 480).
# The scanner's thread is rackside-481. irq/30-lg-480 is the kernel's edge thread of column GPIO21
# (gpio 497): after the scan's row-25 read raised the column's edge, it read the line at 141.169624,
# just as the scanner's `finally` had driven row 4 low again (every row low: waiting). Read as the
# scan's, that read named key 3 (row 4, column 21): check.py reported "'6': ['3', '6']" on a clean
# build, once in three runs.
SCAN_WITH_AN_EDGE_THREADS_READ = """
        rackside-481     [001] .....   141.143853: gpio_direction: 480  in (0)
        rackside-481     [001] .....   141.144626: gpio_direction: 480  in (0)
        rackside-481     [001] d.h..   141.144966: irq_handler_entry: irq=30 name=lg
        rackside-481     [001] .N...   141.145167: gpio_direction: 501  in (0)
       irq/30-lg-480     [001] .....   141.145349: gpio_value: 497 get 1
        rackside-481     [000] .....   141.146363: gpio_direction: 501  in (0)
        rackside-481     [000] .....   141.146812: gpio_direction: 489  in (0)
        rackside-481     [000] .....   141.147167: gpio_direction: 489  in (0)
        rackside-481     [000] .....   141.147378: gpio_direction: 495  in (0)
        rackside-481     [000] .....   141.147678: gpio_direction: 495  in (0)
        rackside-481     [000] .....   141.148033: gpio_value: 480 set 0
        rackside-481     [000] .....   141.148065: gpio_direction: 480 out (0)
        rackside-481     [000] .....   141.154982: gpio_value: 480 set 0
        rackside-481     [000] .....   141.155155: gpio_value: 494 get 1
        rackside-481     [000] .....   141.155228: gpio_value: 496 get 1
        rackside-481     [000] .....   141.155290: gpio_value: 497 get 1
        rackside-481     [000] .....   141.155571: gpio_direction: 480  in (0)
        rackside-481     [000] .....   141.155967: gpio_direction: 480  in (0)
        rackside-481     [000] d.h..   141.156678: irq_handler_entry: irq=30 name=lg
        rackside-481     [000] .....   141.156766: gpio_value: 501 set 0
        rackside-481     [000] .....   141.156771: gpio_direction: 501 out (0)
       irq/30-lg-480     [001] .....   141.156847: gpio_value: 497 get 0
        rackside-481     [000] .....   141.157041: gpio_value: 501 set 0
        rackside-481     [000] .....   141.157141: gpio_value: 494 get 1
        rackside-481     [000] .....   141.157210: gpio_value: 496 get 1
        rackside-481     [000] .....   141.157272: gpio_value: 497 get 0
        rackside-481     [000] d.h..   141.157574: irq_handler_entry: irq=30 name=lg
        rackside-481     [000] .....   141.157755: gpio_direction: 501  in (0)
       irq/30-lg-480     [001] .....   141.157760: gpio_value: 497 get 1
        rackside-481     [000] .....   141.158204: gpio_direction: 501  in (0)
        rackside-481     [000] .....   141.158602: gpio_value: 489 set 0
        rackside-481     [000] .....   141.158608: gpio_direction: 489 out (0)
        rackside-481     [000] .....   141.158853: gpio_value: 489 set 0
        rackside-481     [000] .....   141.159032: gpio_value: 494 get 1
        rackside-481     [000] .....   141.159099: gpio_value: 496 get 1
        rackside-481     [000] .....   141.159159: gpio_value: 497 get 1
        rackside-481     [000] .....   141.159392: gpio_direction: 489  in (0)
        rackside-481     [000] .....   141.159811: gpio_direction: 489  in (0)
        rackside-481     [000] .....   141.160279: gpio_value: 495 set 0
        rackside-481     [000] .....   141.160286: gpio_direction: 495 out (0)
        rackside-481     [000] .....   141.167348: gpio_value: 495 set 0
        rackside-481     [000] .....   141.167525: gpio_value: 494 get 1
        rackside-481     [000] .....   141.167594: gpio_value: 496 get 1
        rackside-481     [000] .....   141.167654: gpio_value: 497 get 1
        rackside-481     [000] .....   141.167928: gpio_direction: 495  in (0)
        rackside-481     [000] .....   141.168707: gpio_direction: 495  in (0)
        rackside-481     [000] .....   141.168978: gpio_value: 480 set 0
        rackside-481     [000] .....   141.168983: gpio_direction: 480 out (0)
        rackside-481     [000] .....   141.169187: gpio_value: 480 set 0
        rackside-481     [000] d.h..   141.169424: irq_handler_entry: irq=30 name=lg
       irq/30-lg-480     [001] .....   141.169624: gpio_value: 497 get 0
        rackside-481     [000] .....   141.169624: gpio_value: 501 set 0
        rackside-481     [000] .....   141.169630: gpio_direction: 501 out (0)
        rackside-481     [000] .....   141.169906: gpio_value: 501 set 0
        rackside-481     [000] .....   141.170154: gpio_value: 489 set 0
        rackside-481     [000] .....   141.170157: gpio_direction: 489 out (0)
        rackside-481     [000] .....   141.170447: gpio_value: 489 set 0
        rackside-481     [000] .....   141.170665: gpio_value: 495 set 0
"""


def test_a_read_by_the_kernels_edge_thread_is_not_the_scans():
    check = load_check()
    events = list(dec.parse_trace(SCAN_WITH_AN_EDGE_THREADS_READ.splitlines()))
    assert {ev.pid for ev in events} == {481, 480}  # the scanner's thread and the edge thread
    scans = check.keypad_scans(events, base=476)
    assert {k for _, k, closed in scans if closed} == {"6"}
    assert len(scans) == 4 * 3  # one scan: four rows, three columns each, all by the scanner
    assert all(lat < 10 * MS for lat in check.row_read_latency(events, base=476))


def test_a_damaged_line_of_the_rigs_log_is_skipped_with_its_line_number(tmp_path):
    """A power cut (QEMU killed) can leave the rig's log with a block of NULs where lines it had not
    yet synced were (a run here: line 39, 624 NUL bytes): the check reads every other line and names
    the damaged one, rather than stopping with a JSONDecodeError."""
    check = load_check()
    log = tmp_path / "rig.jsonl"
    log.write_bytes(b'{"kind": "lines"}\n' + b"\x00" * 624 + b'\n{"kind": "key", "key": "1"}\n{"kind": "pre')
    records, damaged = check.read_rig(log)
    assert [r["kind"] for r in records] == ["lines", "key"]
    assert damaged == [2, 4]
