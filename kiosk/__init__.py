"""The challenge station: the word-lookup core, adjudication, and the touchscreen kiosk."""
