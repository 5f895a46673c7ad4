"""Batsim 4.x JSON protocol, sans-IO: typed events, strict decoding, encoding.

Nothing here touches a socket; transports (ZeroMQ, the in-process emulator)
move :class:`Message` values and call :func:`decode_message` / :func:`encode_message`.
"""
from .errors import ProtocolError
from .events import (BATSIM, EVENT_TYPES, JOB_STATES, SCHEDULER, Answer, CallMeLater, ChangeJobState,
                     Event, ExecuteJob, JobCompleted, JobKilled, JobSubmitted, KillJob, Notify, Query,
                     RegisterJob, RegisterProfile, RejectJob, RequestedCall, ResourceInfo,
                     ResourceStateChanged, SetJobMetadata, SetResourceState, SimulationBegins,
                     SimulationEnds)
from .intervals import format_intervals, parse_intervals
from .jobs import JobDescription, JobProgress
from .message import Message, check_order, decode_event, decode_message, encode_message

__all__ = [
    "ProtocolError", "BATSIM", "SCHEDULER", "EVENT_TYPES", "JOB_STATES", "Event", "Message",
    "decode_message", "decode_event", "encode_message", "check_order", "parse_intervals",
    "format_intervals", "JobDescription", "JobProgress", "ResourceInfo",
    "Notify", "Query", "Answer", "SimulationBegins", "SimulationEnds", "JobSubmitted", "JobCompleted",
    "JobKilled", "ResourceStateChanged", "RequestedCall", "ExecuteJob", "RejectJob", "KillJob",
    "CallMeLater", "RegisterJob", "RegisterProfile", "SetResourceState", "SetJobMetadata",
    "ChangeJobState",
]
