"""Pure-Python emulator of Batsim 4.2.1."""
