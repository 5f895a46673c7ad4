"""batsched_py: a Python decision process for the Batsim simulator (4.x JSON protocol).

Layout (each sub-package has one job):
- ``protocol``: sans-IO messages and events (decode, encode, validate);
- ``scheduler``: the policy API (view of platform and jobs, decision helpers) and its session driver;
- ``policies``: built-in policies, registered by name;
- ``transport``: thin transports (ZeroMQ REP server);
- ``emulator``: a pure-Python Batsim 4.2.1, in-process or as a ``batsim`` drop-in;
- ``workloads``, ``platforms``, ``metrics``, ``plots``: inputs, outputs and analysis;
- ``launcher``: real Batsim as a subprocess or a container.

``compiled_modules()`` lists the modules compiled with mypyc (empty for the default, pure-Python
build; see ``compiled.py``).
"""
from .compiled import compiled_modules

__version__ = "0.1.0"
