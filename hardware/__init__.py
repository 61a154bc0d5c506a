"""The hardware layer: pin maps, gpiozero wiring, display drivers and the simulated board."""
