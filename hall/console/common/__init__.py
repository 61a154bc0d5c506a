"""What every part of the console shares and nothing else: every bound (limits) and the HTTP
edge's checks (guard: a request's body, a refusal, the listener's caps).

docs/architecture.md, "The console by feature"."""
