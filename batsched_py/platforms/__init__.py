"""Platforms: cluster generator, Batsim 3 -> 4 upgrade (the reader is :mod:`batsched_py.models.platform`)."""
from .generate import ClusterSpec, Pstate, energy_cluster, platform_xml, taurus_cluster
from .upgrade import upgrade_platform_file, upgrade_tree

__all__ = ["ClusterSpec", "Pstate", "energy_cluster", "platform_xml", "taurus_cluster", "upgrade_platform_file",
           "upgrade_tree"]
