// A table's state as every page shows it: the director's tiles (app.js) and the public live tables
// (public.js) derive the class, the times and the words from this one file (issue 35: the public
// page said "running" where the director's said OFFLINE). A module both pages' scripts import by
// relative address; the public folder carries it beside public.js.
//
// A table's model (each page reads its own data into it, checked):
//   status "offline" | other; state {phase, running, ending, players [{player, remaining_ms,
//   forfeit, absent}], sentAt (ms), rules {forfeit_overtime_ms}, frozen, until (ms: no time is
//   ticked past it; the public page's stale_s)} or null; names [side 1, side 2]; result (the
//   clock's) {ending, forfeits} or null; final (the recorded one) {scores, forfeits} or null;
//   challenge {station} or null; held (why the clock is held: one of HELD) or null.

// Why a clock is held, the console's word (the tile's `held`: hallstate.held, the one place it is
// decided, issue 35): only a station's challenge is "challenge"; a call, a spare's takeover and
// every other neutralisation are named so, on both pages, and counted so in the header
export const HELD = ["challenge", "call", "takeover", "neutralised"];
// Exceptions first: the director's grid sorts by this order and counts by these labels
export const ORDER = ["offline", "forfeit", "overtime", ...HELD, "notstarted", "finished", "running", "waiting"];
export const LABEL = {
  offline: "OFFLINE", forfeit: "FORFEIT", overtime: "OVERTIME", challenge: "CHALLENGE",
  call: "CALL", takeover: "TAKEOVER", neutralised: "NEUTRALISED",
  notstarted: "NOT STARTED", finished: "FINISHED", running: "running", waiting: "waiting",
};
// the state's words for a held clock (the director's note adds the station of a challenge)
const HELD_WORDS = { challenge: "challenge", call: "the director is called (1.4.3)", takeover: "a spare took over", neutralised: "neutralised" };

// Whether the state's times run on (a running game, or a late start's absent side): the tiles whose
// times are redrawn each second, on both pages; a frozen state's are shown as they were
export function ticks(st) { return Boolean(st && !st.frozen && (st.phase === "running" || st.phase === "late")); }

// A side's time as of the moment `at` (ms): a running side's (or an absent side's in a late start)
// ticks on from the state's sentAt, to the forfeit line (5.3.3); a frozen state (an offline clock's
// last, an earlier round's game) is shown as it was: a dead clock's times are what a spare takes
// over (docs/fleet.md), not a count-down nobody runs.
export function remainingAt(st, p, at) {
  let ms = p.remaining_ms;
  const ticking = (st.phase === "running" && st.running === p.player) || (st.phase === "late" && p.absent);
  if (ticking && st.sentAt && !st.frozen) {
    const upTo = typeof st.until === "number" ? Math.min(at, st.until) : at;
    ms -= Math.max(0, upTo - st.sentAt);
    if (st.rules) ms = Math.max(ms, -st.rules.forfeit_overtime_ms); // the clock forfeits there (5.3.3)
  }
  return ms;
}

// The table's class, exceptions first. `at`: the moment its times are shown as of; `now` and
// `round` ({start, late_after_s}: the director's round) say whether a table is late to start.
export function tileClass(t, at, now, round) {
  const st = t.state;
  if (t.status === "offline") return "offline";
  const players = st ? st.players : [];
  if (players.some((p) => p.forfeit) || (t.result && t.result.forfeits.length)) return "forfeit";
  if (st && st.phase !== "ended" && players.some((p) => remainingAt(st, p, at) <= -1000)) return "overtime";
  // held: the console's word (a model without one, an older console's: a station's challenge, else neutralised)
  const held = HELD.includes(t.held) ? t.held : t.challenge ? "challenge" : st && st.phase === "neutralised" ? "neutralised" : null;
  if (held) return held;
  if (t.final && t.final.forfeits.length && !st) return "forfeit"; // a recorded game the clock has left
  const notPlaying = !st || st.phase === "setup" || st.phase === "late";
  if (notPlaying && !t.final && round && round.start && now > (round.start + (round.late_after_s || 0)) * 1000) return "notstarted";
  if ((st && st.phase === "ended") || t.result || t.final) return "finished";
  if (st && st.phase === "running" && !st.frozen) return "running";
  return "waiting";
}

// The side whose time runs, highlighted on both pages: nobody's in an earlier round's game (the
// clock plays another); an offline clock's running side stays (the side a spare takes over)
export function turnSide(t) {
  const st = t.state;
  return st && st.phase === "running" && !t.earlier ? st.running : null;
}

// A recorded result, as both pages say it (the director's page adds how it was recorded)
export function recordedText(f) {
  if (f.forfeits && f.forfeits.length === 1) return `recorded: forfeit by side ${f.forfeits[0]}, ${Math.abs(f.scores[0])} (not rated)`;
  if (f.forfeits && f.forfeits.length === 2) return `recorded: both forfeited, ${f.scores[0]} / ${f.scores[1]}`;
  return `recorded ${f.scores[0]}–${f.scores[1]}`;
}

// Who forfeited, named: the clock's result's sides, else its state's
function forfeitText(t) {
  const st = t.state;
  const sides = t.result && t.result.forfeits.length ? t.result.forfeits
    : (st ? st.players.filter((p) => p.forfeit).map((p) => p.player) : []);
  const ending = (t.result && t.result.ending) || (st && st.ending) || "forfeit";
  return `${ending}: ` + sides.map((s) => `side ${s}` + (t.names[s - 1] ? ` (${t.names[s - 1]})` : "")).join(" and ");
}

// The words for the table's state, the same on both pages: what the director's note starts with
// (it goes on with what only the director sees: the station, the penalties, how a result was recorded).
export function stateWords(t, cls) {
  const st = t.state;
  if (cls === "offline") return st && st.sentAt ? `offline since ${new Date(st.sentAt).toTimeString().slice(0, 8)}` : "clock offline";
  if (t.final) return recordedText(t.final);
  if (cls === "forfeit") return forfeitText(t);
  if (HELD_WORDS[cls]) return HELD_WORDS[cls];
  if (cls === "overtime") return "overtime";
  if (cls === "finished") return "ended";
  if (st && st.phase === "late") {
    const absent = st.players.filter((p) => p.absent).map((p) => p.player);
    return absent.length ? `late: waiting for ${absent.join(" and ")}` : "late start";
  }
  if (!st) return "no clock yet";
  return st.phase;
}
