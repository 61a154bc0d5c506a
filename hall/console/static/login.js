// The login form: the session's CSRF token (request.js), then the password posted with it; a 401
// here is a wrong name or password, said on the form (request.js's post would reload the page).
import { csrfToken } from "./request.js";
document.getElementById("login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const error = document.getElementById("error");
  error.textContent = "";
  const r = await fetch("/api/login", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": await csrfToken(true) }, // a fresh token each try: the session may be new
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
