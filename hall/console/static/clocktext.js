// A clock's time as m:ss, for every console page that shows one (index.html's app.js and
// paperless.js, ready.html's ready.js import it): one definition (tests/test_defined_once.py).

// What a player's display shows (as the clock: remaining rounded up, overtime whole seconds):
// 1500000 is "25:00", -65000 "-1:05".
export function clockText(ms) {
  let s, sign = "";
  if (ms > 0) { s = Math.ceil(ms / 1000); } else { s = Math.floor(-ms / 1000); if (s) sign = "-"; }
  return `${sign}${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
