"""The hall: every clock and station on an MQTT broker (Mosquitto), and the director's console."""
