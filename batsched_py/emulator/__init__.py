"""Pure-Python emulator of Batsim 4.2.1."""
from .errors import EmulatorError
from .simulate import JobOutcome, SimulationResult, run_engine, simulate

__all__ = ["EmulatorError", "simulate", "run_engine", "SimulationResult", "JobOutcome"]
