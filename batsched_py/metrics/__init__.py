"""Metrics from Batsim output files (real Batsim or the emulator), numpy + csv only."""
from .compare import compare_table, format_table, write_csv
from .io import MetricsInputError, output_path
from .jobs import JobTable, read_jobs
from .summary import batsim_schedule_metrics, summary, write_job_table

__all__ = ["JobTable", "MetricsInputError", "batsim_schedule_metrics", "compare_table",
           "format_table", "output_path", "read_jobs", "summary", "write_csv", "write_job_table"]
