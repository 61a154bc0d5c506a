"""The shell: the web app that composes the features' routes and gives each its services, the
login and sessions, the broker bridge, the pages' streams, the config and the event's folder,
and running it all under uvicorn.

docs/architecture.md, "The console by feature"."""
