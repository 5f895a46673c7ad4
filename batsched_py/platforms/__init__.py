"""Platforms: cluster generator, Batsim 3 -> 4 upgrade, energy properties reader."""
from .generate import ClusterSpec, Pstate, energy_cluster, platform_xml, taurus_cluster
from .read import HostPower, PlatformError, host_powers
from .upgrade import upgrade_platform_file, upgrade_tree

__all__ = ["ClusterSpec", "HostPower", "PlatformError", "Pstate", "energy_cluster",
           "host_powers", "platform_xml", "taurus_cluster", "upgrade_platform_file", "upgrade_tree"]
