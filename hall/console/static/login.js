// The login form: fetch the session's CSRF token, then post the password with it.
"use strict";
document.getElementById("login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const error = document.getElementById("error");
  error.textContent = "";
  const { csrf } = await (await fetch("/api/csrf", { credentials: "same-origin" })).json();
  const r = await fetch("/api/login", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify({
      name: document.getElementById("name").value,
      password: document.getElementById("password").value,
    }),
  });
  if (r.ok) {
    location.href = "/";
  } else {
    const body = await r.json().catch(() => ({}));
    error.textContent = body.error || `login failed (${r.status})`;
  }
});
