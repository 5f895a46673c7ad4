"""Workloads: SWF reading, conversion to Batsim JSON, characterisation, upgrades."""
from .convert import ConversionReport, ConvertOptions, convert_swf, convert_trace
from .swf import SwfError, SwfJob, SwfTrace, read_swf

__all__ = ["ConversionReport", "ConvertOptions", "SwfError", "SwfJob", "SwfTrace",
           "convert_swf", "convert_trace", "read_swf"]
