"""How the emulator is run: Batsim 4.2.1's options (command-line flags) that change what the engine does."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["EngineOptions", "FLAG_OPTIONS"]


#: Batsim flags a scheduler may need (see Scheduler.batsim_flags), and EngineOptions' names for them
FLAG_OPTIONS = {"--enable-dynamic-jobs": "dynamic_jobs", "--acknowledge-dynamic-jobs": "ack_dynamic_jobs",
                "--enable-profile-reuse": "profile_reuse"}


@dataclass(slots=True)
class EngineOptions:
    energy: bool = False
    forward_profiles: bool = False
    dynamic_jobs: bool = False
    ack_dynamic_jobs: bool = False
    profile_reuse: bool = False
    sched_config: str = ""
    forward_unknown_events: bool = False

    def config_json(self) -> dict[str, Any]:
        return {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
                "redis-prefix": "default", "profiles-forwarded-on-submission": self.forward_profiles,
                "dynamic-jobs-enabled": self.dynamic_jobs, "dynamic-jobs-acknowledged": self.ack_dynamic_jobs,
                "profile-reuse-enabled": self.profile_reuse, "sched-config": self.sched_config,
                "forward-unknown-events": self.forward_unknown_events}
