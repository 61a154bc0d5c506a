"""What the optional text display says (issue 40): the clock and its table in words. Pure.

The two 4-digit displays (game.render) can only hint (`tAbL 14`, `CALL`, `SIGn`); a character
display (16x2 or 20x4, or an OLED's text lines: hardware.textdisplay) says it: the table and both
players' names as TSH has them (the console's `pairing` carries them, game.checkin), who starts,
what to type, where to go, the director's call and how long it has waited, the signed slip step by
step, the recount, and the console's answer. `screen` is the message as lines of any length; `fit`
wraps them to the display's width and, when they are more than its rows, pages through them every
`PAGE_NS` on the monotonic clock's own grid (so a display never needs a scroll of its own).

Every text comes from `MESSAGES`, the renderer's one table (the docs' screenshots and the tests read
it); names go through `ascii_text`, so any name shows on a display whose font is ASCII: é -> e,
ø -> o, ß -> ss, a character with no ASCII form -> ?, and the two ASCII characters an HD44780 draws
otherwise (backslash, tilde) -> / and -; never an exception.

No I/O, no clock read: every call is given its `t_ns`.
"""

from __future__ import annotations

import textwrap
import unicodedata
from typing import Any

from rackside.game import checkin
from rackside.game import slip as slips
from rackside.game.clock import Phase, View
from rackside.game.rules_table import mmss

PAGE_NS = 2_000_000_000  # a screen longer than the display shows its next rows after this
SIDE_NAMES = ("Left", "Right")  # player 1 sits at the left display, player 2 at the right

# Every text a text display shows, by name: what the renderer fills in (str.format) and nothing else.
MESSAGES: dict[str, str] = {
    "table": "Table {table} - round {round}",
    "pair": "{a} v {b}",
    "type_number": "{side}: type your number, then your button",
    "type_both": "Each player: type your number, then your own button",
    "typed": "Number {typed}: press your own button",
    "confirm": "{side}: {who}? Press your button again. Not you: *",
    "seated": "{side}: {name} #{number}",
    "starts": "{starter} starts: {other}, press your button",
    # to both players: the refused side is most often #number itself; the one who took it types again
    "used": "{side}: #{number} is in on the {other} too. Whoever is not #{number}: type your own number",
    "asking": "{side}: #{number} - looking for your table",
    "wrong_table": "{side}: wrong table: go to table {goes}",
    "not_paired": "{side}: not paired this round: call the director",
    "late": "{name} is late: time running",
    "paused": "Clock paused",
    "courtesy": "{name}: courtesy draw",
    "restored": "Power cut: game restored",
    "called": "Director called: {waited}",
    "seen": "Director is coming: {waited}",
    "ended": "Game over",
    "enter_scores": "Winner: type both scores",
    "fill_slip": "Fill in the result slip",
    "typing": "Type {name}'s score, then #",
    "scores": "{a} {sa}, {b} {sb}",  # after penalties (5.3), once both are typed
    "recount": "Margin {margin}: recount? * yes, # no",
    "wins": "{winner} wins by {margin}",
    "tie": "A tie",
    "penalties": "Time penalties {pa} / {pb}",
    "sign": "{name}, press your button to sign",
    "sign_both": "Each player: press your button to sign",
    "signed": "Both signed: result sent",
    "recorded": "Result recorded",
    "held": "Held for the director: {why}",
    "refused": "Refused: {why}",
    # ... and what to do: a player's own button calls the director (game.slip.disputable; dISP)
    "call_director": "Call the director: press your button",
    "stay": "Stay at your table",  # a held slip: the director comes to check it (one row of the 20x4 LCD)
    "recorded_by_director": "Recorded by the director",  # a result the players did not sign here (issue 36's screen)
    "dispute": "Not yours: press your own button",  # ... which calls the director (game.slip.disputable)
    "menu": "Director's menu: {left} {right}",
}

# Letters NFKD does not take apart, written as ASCII as names are usually written without them.
_SPELLED = {"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
            "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i", "’": "'", "‘": "'",
            "“": '"', "”": '"', "–": "-", "—": "-", "·": "-", "…": "..."}


def ascii_text(text: Any) -> str:
    """`text` as printable ASCII, whatever it is: accents dropped (NFKD), a few letters spelled out,
    anything else '?', control characters and combining marks gone. Never raises."""
    try:
        s = str(text)
    except Exception:  # noqa: BLE001 - a value whose str() fails is shown as '?'
        return "?"
    out = []
    for ch in s:
        if " " <= ch <= "~":
            out.append(ch)
            continue
        if ch in _SPELLED:
            out.append(_SPELLED[ch])
            continue
        if unicodedata.combining(ch):
            continue  # a decomposed name's accent (NFD): dropped as a precomposed letter's is
        if unicodedata.category(ch)[0] in "CZ":
            out.append(" " if unicodedata.category(ch) == "Zs" or ch in "\t\n\r" else "")
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if " " <= c <= "~")
        out.append(base or "?")
    # an HD44780's character ROM (A00) has a yen sign for the backslash and an arrow for the tilde
    return "".join(out).replace("\\", "/").replace("~", "-")


def short_name(name: str | None) -> str | None:
    """TSH's "Surname, Given" as the display says it: the surname (a name without a comma whole)."""
    if not name:
        return None
    surname = name.split(",", 1)[0].strip()
    return ascii_text(surname or name.strip()) or None


def _msg(key: str, **values: Any) -> str:
    return MESSAGES[key].format(**values)


def _side_name(s: checkin.Seating, side: int) -> str:
    """Who sits at `side`: the name of the number checked in there, its number, or the side."""
    number = s.seated[side - 1]
    name = short_name(checkin.name_of(s, number))
    if name:
        return name
    return f"#{number}" if number is not None else SIDE_NAMES[side - 1]


def _header(s: checkin.Seating) -> list[str]:
    out = []
    if s.table is not None and s.round is not None:
        out.append(_msg("table", table=s.table, round=s.round))
    if s.numbers is not None:
        names = [short_name(checkin.name_of(s, n)) or f"#{n}" for n in s.numbers]
        out.append(_msg("pair", a=names[0], b=names[1]))
    return out


def _before_game(s: checkin.Seating, keypad: bool, confirm: tuple[int, int] | None = None) -> list[str]:
    """What must be put right first (a side's refusal, where to go) or who starts, then the table and
    the pair, then what is left to type and who sat down where: a small display's first page is
    what a player must do."""
    if keypad and s.typed:
        if confirm is not None and str(confirm[1]) == s.typed:
            name = short_name(checkin.name_of(s, confirm[1]))
            who = f"{name} #{confirm[1]}" if name else f"#{confirm[1]}"
            return [_msg("confirm", side=SIDE_NAMES[confirm[0] - 1], who=who)]
        return [_msg("typed", typed=s.typed)]
    problems: list[str] = []  # a side refused, sent elsewhere, not paired, being looked up
    prompts: list[str] = []  # a side still to check in
    done: list[str] = []  # who sat down where
    if keypad:
        for side in checkin.SIDES:
            i, label, other = side - 1, SIDE_NAMES[side - 1], SIDE_NAMES[2 - side].lower()
            if s.refused[i] is not None:
                problems.append(_msg("used", side=label, number=s.refused[i], other=other))
            elif s.elsewhere[i] is not None:
                problems.append(_msg("wrong_table", side=label, goes=s.elsewhere[i]))
            elif s.unknown[i]:
                problems.append(_msg("not_paired", side=label))
            elif s.asked[i] is not None:
                problems.append(_msg("asking", side=label, number=s.asked[i]))
            elif s.seated[i] is None:
                prompts.append(_msg("type_number", side=label))
            if s.seated[i] is not None:
                done.append(_msg("seated", side=label, name=_side_name(s, side), number=s.seated[i]))
    starter = checkin.starter_side(s)
    if starter is not None and all(n is not None for n in s.seated):
        problems.append(_msg("starts", starter=_side_name(s, starter), other=_side_name(s, 3 - starter)))
    elif starter is None and s.starter is not None and s.numbers is not None and not keypad:
        other = next(n for n in s.numbers if n != s.starter)
        done.append(_msg("starts", starter=short_name(checkin.name_of(s, s.starter)) or f"#{s.starter}",
                         other=short_name(checkin.name_of(s, other)) or f"#{other}"))
    if len(prompts) == 2:
        prompts = [_msg("type_both")]  # one line for both: a small display's page holds it
    return problems + _header(s) + prompts + done


def _slip(sl: slips.Slip, s: checkin.Seating, keypad: bool) -> list[str] | None:
    names = [_side_name(s, side) for side in checkin.SIDES]
    if sl.step is slips.Step.UNTYPED:
        return None
    if sl.step is slips.Step.TYPING:
        shown = ["_" if x is None else str(x) for x in sl.scores]
        return [_msg("typing", name=names[sl.side - 1]), _msg("scores", a=names[0], sa=shown[0], b=names[1], sb=shown[1])]
    f = sl.final
    scores = _msg("scores", a=names[0], sa=f[0], b=names[1], sb=f[1])
    if sl.step is slips.Step.RECOUNT:
        return [scores, _msg("recount", margin=sl.margin)]
    result = _msg("tie") if f[0] == f[1] else _msg("wins", winner=names[0 if f[0] > f[1] else 1], margin=sl.margin)
    penalties = [_msg("penalties", pa=sl.charged[0], pb=sl.charged[1])] if any(sl.charged) else []
    if sl.step is slips.Step.SIGNING:
        unsigned = [i for i in (0, 1) if not sl.signed[i]]
        sign = _msg("sign", name=names[unsigned[0]]) if len(unsigned) == 1 else _msg("sign_both")
        return [scores, result, sign, *penalties]
    if sl.outcome is None:
        return [_msg("signed"), scores, result, *penalties]
    if sl.recorded is not None and sl.recorded != f:
        # another result recorded for this game (issue 36): as the 4-digit displays show it (rEC, its
        # scores by this clock's sides, dISP), the players' own scores not shown as if recorded
        r = sl.recorded
        return [_msg("recorded_by_director"), _msg("scores", a=names[0], sa=r[0], b=names[1], sb=r[1]), _msg("dispute")]
    why = ascii_text(sl.why) if sl.why else "see the director"
    # the next step (the display always says what to do): a refused slip's is a player's own
    # button, after its short reason; a held one's is to wait at the table for the director, first:
    # the console's reasons for holding run to six rows of a 20x4 display
    if sl.outcome == "held":
        return [_msg("stay"), _msg("held", why=why), scores, result, *penalties]
    action = [_msg("call_director")] if slips.disputable(sl) else []
    return [_msg(sl.outcome, why=why), *action, scores, result, *penalties]


def screen(v: View, t_ns: int, *, table: Any = None, slip: Any = None, keypad: bool = False, menu: tuple[str, str] | None = None,
           restored: bool = False, confirm: tuple[int, int] | None = None) -> list[str]:
    """What the text display says at `t_ns`, as lines of any length (`fit` makes them the display's).
    `table`: game.table.Table; `slip`: game.slip.Slip or None; `menu`: the two 4-digit texts
    while the director's menu is open; `confirm`: (side, number) a first press asks that side to
    confirm (firmware.table_session)."""
    if menu is not None:
        return [_msg("menu", left=menu[0].strip(), right=menu[1].strip())]
    s = table.seating if table is not None else checkin.Seating()
    lines: list[str] = []
    call = table.calls.open if table is not None else None
    if call is not None:
        lines.append(_msg("seen" if call.acked_ns is not None else "called", waited=mmss(max(0, t_ns - call.t_ns) // 1_000_000)))
    if restored:
        lines.append(_msg("restored"))
    if v.phase is Phase.ENDED:
        shown = _slip(slip, s, keypad) if slip is not None else None
        if shown is None:
            shown = [_msg("ended"), _msg("enter_scores" if keypad else "fill_slip")]
        return lines + shown
    if v.phase in (Phase.SETUP, Phase.LATE) and not (call is not None and v.phase is Phase.SETUP and not s.numbers):
        before = _before_game(s, keypad, confirm)
        late = [_msg("late", name=_side_name(s, p.player)) for p in v.players if p.absent]
        return lines + late + before
    if call is None:
        lines.append(f"{_side_name(s, 1)} v {_side_name(s, 2)}")
        if v.phase is Phase.NEUTRALISED:
            lines.append(_msg("paused"))
        lines += [_msg("courtesy", name=_side_name(s, p.player)) for p in v.players if p.courtesy_draw]
    return lines


def _pages(lines: list[str], cols: int, rows: int) -> list[list[str]]:
    """The rows of each page: each line wrapped to `cols`; a page takes whole lines while they fit
    (a line longer than a page gets pages of its own)."""
    pages: list[list[str]] = [[]]
    for line in lines:
        wrapped = textwrap.wrap(ascii_text(line), cols, break_long_words=True) or [""]
        if pages[-1] and len(pages[-1]) + len(wrapped) > rows:
            pages.append([])
        for row in wrapped:
            if len(pages[-1]) == rows:
                pages.append([])
            pages[-1].append(row)
    return pages


def fit(lines: list[str], cols: int, rows: int, t_ns: int) -> tuple[str, ...]:
    """`lines` wrapped to `cols` characters, `rows` at a time: the page showing at `t_ns` (each row
    exactly `cols` wide, so a driver writes whole rows)."""
    pages = _pages(lines, cols, rows)
    page = pages[(t_ns // PAGE_NS) % len(pages)]
    return tuple(row.ljust(cols) for row in page + [""] * (rows - len(page)))


def pages(lines: list[str], cols: int, rows: int) -> int:
    """How many pages `fit` turns through (1: a still screen)."""
    return len(_pages(lines, cols, rows))


def next_change_ns(lines: list[str], cols: int, rows: int, t_ns: int, *, ticking: bool) -> int | None:
    """When the display's text may next change with time alone: the next page, or with `ticking` (a
    call's minutes and seconds waited) the next second. None: it will not."""
    times = []
    if pages(lines, cols, rows) > 1:
        times.append((t_ns // PAGE_NS + 1) * PAGE_NS)
    if ticking:
        times.append((t_ns // 1_000_000_000 + 1) * 1_000_000_000)
    return min(times) if times else None
