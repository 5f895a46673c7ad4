"""Thin transports that move protocol messages; all logic lives in the sans-IO layers."""

# How long each side polls for the other's next message before sleeping (seconds); why: polling.py.
# (Here, not in polling.py, so that the command line reads them without importing ZeroMQ.)
#: ``serve``, after each reply.
SERVE_BUSY_WAIT = 100e-6
#: The emulator's Batsim side, after each request: none, like Batsim.
PEER_BUSY_WAIT = 0.0
