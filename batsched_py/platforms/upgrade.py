"""Upgrade Batsim 3 / SimGrid v4.0 platform XML to Batsim 4 / SimGrid 3.32.

Changes made (each one reported):
  * ``<platform version="4">`` (or older) -> ``version="4.1"``; ``<AS>`` -> ``<zone>``;
  * host property ``watt_per_state`` (``idle:max`` pairs, or one value) ->
    ``wattage_per_state`` (``idle:epsilon:allcores``, epsilon = idle);
  * ``watt_off`` -> ``wattage_off``;
  * ``<config>`` option names with underscores -> dashes (``contexts/stack_size``
    -> ``contexts/stack-size``), the spelling current SimGrid expects.
  * ``role=master`` on the host named ``master_host`` is removed: Batsim 4 makes that host the
    master itself and aborts on the resulting role "master,master".
``sleep_pstates`` keeps its name and meaning. Comments are preserved.

A host declared in one of its sleep (or switching) pstates -- DeepShutdown's platforms start their
hosts asleep -- is reported (:func:`hosts_starting_asleep`): Batsim 4.2.1 with -E reports it idle
but aborts at the first job on it.  ``awake=True`` starts such hosts in their first computation
pstate instead (each one reported).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..textfiles import write_whole
from ..models.platform import PlatformError, parse_xml

MASTER_HOST = "master_host"   # Batsim's default --master-host
PROP_RENAMES = {"watt_per_state": "wattage_per_state", "watt_off": "wattage_off"}
DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'


def upgrade_wattages(value: str, where: str) -> str:
    """``idle:max`` pairs (or single values) -> ``idle:idle:max`` triples."""
    out = []
    for item in value.split(","):
        parts = [p.strip() for p in item.strip().split(":")]
        try:
            [float(p) for p in parts]
        except ValueError:
            raise PlatformError(f"{where}: non-numeric wattage {item.strip()!r}") from None
        if len(parts) == 1:
            parts = parts * 3
        elif len(parts) == 2:
            parts = [parts[0], parts[0], parts[1]]
        elif len(parts) != 3:
            raise PlatformError(f"{where}: wattage {item.strip()!r} has {len(parts)} values")
        out.append(":".join(parts))
    return ", ".join(out)


def _upgrade_prop(prop: ET.Element, owner: str, source: str, changes: list[str]) -> None:
    pid = prop.get("id", "")
    where = f"{source}: <{owner}> <prop id={pid!r}>"
    if pid == "watt_per_state":
        prop.set("value", upgrade_wattages(prop.get("value", ""), where))
    if pid in PROP_RENAMES:
        prop.set("id", PROP_RENAMES[pid])
        changes.append(f"{owner}: {pid} -> {PROP_RENAMES[pid]}")


def _drop_master_role(host: ET.Element, changes: list[str]) -> None:
    if host.get("id") != MASTER_HOST:
        return
    for prop in host.findall("prop"):
        if prop.get("id") == "role" and prop.get("value") == "master":
            host.remove(prop)
            changes.append(f"host id={MASTER_HOST!r}: role=master removed (Batsim 4 gives that host the "
                           "master role itself and aborts on 'master,master')")


def _sleep_and_switch_pstates(host: ET.Element) -> set[int]:
    """The pstates the host's ``sleep_pstates`` property names (sleep:off:on triples)."""
    for prop in host.findall("prop"):
        if prop.get("id") == "sleep_pstates":
            try:
                return {int(p) for triple in prop.get("value", "").split(",") if triple.strip()
                        for p in triple.split(":")}
            except ValueError:
                return set()      # (malformed: the platform reader names it)
    return set()


def _first_awake_pstate(host: ET.Element, asleep: set[int]) -> int | None:
    nb = len(host.get("speed", "").split(","))
    return next((p for p in range(nb) if p not in asleep), None)


def hosts_starting_asleep(tree: ET.ElementTree[ET.Element]) -> list[tuple[str, int, int | None]]:
    """(host id, the sleep or switching pstate it starts in, its first computation pstate or
    None) of every host declared asleep."""
    out = []
    for host in tree.getroot().iter("host"):
        asleep = _sleep_and_switch_pstates(host)
        try:
            start = int(host.get("pstate", "0"))
        except ValueError:
            continue
        if start in asleep:
            out.append((host.get("id", ""), start, _first_awake_pstate(host, asleep)))
    return out


def wake_hosts(tree: ET.ElementTree[ET.Element], changes: list[str]) -> None:
    """Start every host declared asleep in its first computation pstate (Batsim 4.2.1 with -E
    aborts at the first job on a host left in a sleep pstate)."""
    hosts = {h.get("id", ""): h for h in tree.getroot().iter("host")}
    for name, start, awake in hosts_starting_asleep(tree):
        if awake is not None:
            hosts[name].set("pstate", str(awake))
            changes.append(f"host id={name!r}: pstate {start} -> {awake} (a host must start in a computation "
                           "pstate: Batsim 4.2.1 with -E aborts at the first job on a sleeping one)")


def asleep_warning(asleep: list[tuple[str, int, int | None]]) -> str:
    """One line saying which hosts start asleep, why it matters and the fix."""
    name, start, awake = asleep[0]
    who = f"hosts id={name!r} and {len(asleep) - 1} more start" if len(asleep) > 1 else f"host id={name!r} starts"
    return (f"warning: {who} in sleep or switching pstate {start}: real Batsim 4.2.1 "
            "with -E reports them idle but aborts at the first job on one (\"... is not in a computation pstate "
            f"(ps={start})\"); rerun with --awake to start them in their first computation pstate"
            + (f" ({awake})" if awake is not None else ""))


def upgrade_tree(tree: ET.ElementTree[ET.Element], source: str = "<platform>") -> list[str]:
    """Upgrade ``tree`` in place and return the list of changes."""
    root = tree.getroot()
    if root.tag != "platform":
        raise PlatformError(f"{source}: root element is <{root.tag}>, expected <platform>")
    changes = []
    if root.get("version", "0") != "4.1":
        changes.append(f"platform version {root.get('version')} -> 4.1")
        root.set("version", "4.1")
    for elem in root.iter():
        if elem.tag == "AS":
            elem.tag = "zone"
            changes.append(f"<AS id={elem.get('id')!r}> -> <zone>")
        elif elem.tag == "config":
            for prop in elem.findall("prop"):
                pid = prop.get("id", "")
                if "_" in pid:
                    prop.set("id", pid.replace("_", "-"))
                    changes.append(f"config {pid} -> {prop.get('id')}")
        elif elem.tag == "host":
            for prop in elem.findall("prop"):
                _upgrade_prop(prop, f"host id={elem.get('id')!r}", source, changes)
            _drop_master_role(elem, changes)
    return changes


def upgrade_platform_file(src: str | Path, dst: str | Path, awake: bool = False) -> list[str]:
    """Read a Batsim 3 platform, write its Batsim 4 version, return the changes.  ``awake``:
    hosts declared asleep start in their first computation pstate (see wake_hosts)."""
    tree = parse_xml(src)
    changes = upgrade_tree(tree, str(src))
    if awake:
        wake_hosts(tree, changes)
    ET.indent(tree, space="  ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    write_whole(Path(dst), f'<?xml version="1.0"?>\n{DOCTYPE}\n{body}\n')
    return changes
