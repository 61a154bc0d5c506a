"""The challenge station: the touchscreen kiosk, its pure flow and layout, dockets and USB import."""
