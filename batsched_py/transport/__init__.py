"""Thin transports that move protocol messages; all logic lives in the sans-IO layers."""
