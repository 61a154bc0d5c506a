"""The director's console: a web page for the whole hall, served by `rackside hall console`."""
