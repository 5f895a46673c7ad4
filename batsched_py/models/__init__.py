"""The input models both the emulator and the schedulers, environments and tools read: platforms
(SimGrid XML, with the message routes of :mod:`.network`), power (pstates, wattage, sleep pstates;
the SimGrid energy formula in :mod:`.energy`), the processors' temperature (:mod:`.thermal`),
workloads (the JSON document of :mod:`.document`, its jobs and profiles) and external events.

A floor below the scheduler: it imports only the package's base utilities (errors, textfiles,
json_accel), never the emulator, the scheduler or the tools above.
"""
