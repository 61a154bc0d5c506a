// A POST from any console page (index.html's scripts, devices.html's, ready.html's and login.html's
// import it): one way to send the session's CSRF token and read the answer (tests/test_defined_once.py).
// A 403 is asked again once with the session's token as it is now: a login in another tab gave the
// session a new one and this page's was refused (the console's CsrfCheck, which answers before any
// handler runs, so nothing is done twice). A 401 (the session ended) goes to the login page; any
// other refusal is thrown with the console's own one line (`error`) and its status. A body that is a
// file (a Blob: the Devices page's update bundle) goes as it is, with the caller's own headers.
// the session's token, asked for once, again after a 403 or when asked `fresh` (its own name: the
// bench's page before, an older app.js, declares its own `csrf` beside this file)
let sessionCsrf = null;

export async function csrfToken(fresh = false) {
  if (!sessionCsrf || fresh) sessionCsrf = (await (await fetch("/api/csrf", { credentials: "same-origin" })).json()).csrf;
  return sessionCsrf;
}

export async function post(url, body, { signal, again = true, headers = {} } = {}) {
  const raw = body instanceof Blob;
  const r = await fetch(url, {
    method: "POST", credentials: "same-origin", signal,
    headers: { "Content-Type": raw ? "application/octet-stream" : "application/json", ...headers, "X-CSRF-Token": await csrfToken() },
    body: raw ? body : JSON.stringify(body),
  });
  if (r.status === 403 && again) { sessionCsrf = null; return post(url, body, { signal, again: false, headers }); }
  const data = await r.json().catch(() => ({}));
  if (r.status === 401) location.href = "/login";
  if (!r.ok) throw Object.assign(new Error(data.error || `${url}: HTTP ${r.status}`), { status: r.status });
  return data;
}
