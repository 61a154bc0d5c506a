"""The devices: the Devices page (the fleet), updates from the console, the readiness page.

docs/architecture.md, "The console by feature"."""
