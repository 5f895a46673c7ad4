"""Pure-Python emulator of Batsim 4.2.1."""
from ..models.errors import EmulatorError
from .simulate import Emulation, JobOutcome, SimulationResult, run_engine, simulate

__all__ = ["EmulatorError", "simulate", "run_engine", "Emulation", "SimulationResult", "JobOutcome"]
