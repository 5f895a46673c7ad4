"""Read energy properties of a Batsim 4 platform (used by metrics).

Only what wasted-energy accounting needs: per compute host, its energy model (read and checked
as a scheduler reads it, :func:`..scheduler.power.read_power_model`) and its default pstate.
Master hosts (id ``master_host`` or role=master) are skipped.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..scheduler.power import PowerModel, PowerModelError, read_power_model
from ..textfiles import not_utf8
from ..errors import BatschedError


class PlatformError(BatschedError, ValueError):
    """Invalid platform; the message names the file and the element."""


@dataclass(frozen=True)
class HostPower:
    host: str
    model: PowerModel
    default_pstate: int

    @property
    def idle_w(self) -> float:
        return self.model.pstates[self.default_pstate].idle

    @property
    def compute_w(self) -> float:
        return self.model.pstates[self.default_pstate].all_cores

    @property
    def can_sleep(self) -> bool:
        return self.model.can_sleep()

    def state_w(self, which: str) -> float:
        """Watts while sleeping / switching off / switching on (its first sleep_pstates entry)."""
        if not self.model.sleep:
            return float("nan")
        first = self.model.sleep[0]
        index = {"sleep": first.sleep, "off": first.switch_off, "on": first.switch_on}[which]
        return self.model.pstates[index].idle


def parse_xml(path: str | Path) -> ET.ElementTree[ET.Element]:
    """Parse XML keeping comments; errors name the file, line and column.

    Leading blank lines before ``<?xml`` are tolerated (some Batsim 3 files
    have one, which strict parsers reject); line numbers still refer to the file.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PlatformError(f"{path}: {not_utf8(exc)}") from None
    body = text.lstrip()
    skipped = text[:len(text) - len(body)].count("\n")
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        parser.feed(body)
        return ET.ElementTree(parser.close())
    except ET.ParseError as exc:
        line, col = exc.position
        reason = str(exc).split(":")[0]
        raise PlatformError(f"{path}:{line + skipped}:{col}: invalid XML ({reason})") from None


def host_powers(path: str | Path) -> list[HostPower]:
    """Energy description of every compute host (hosts without wattage are skipped)."""
    root = parse_xml(path).getroot()
    hosts = []
    for host in root.iter("host"):
        host_id = host.get("id", "?")
        props = {p.get("id", ""): p.get("value", "") for p in host.findall("prop")}
        if host_id == "master_host" or props.get("role") == "master":
            continue
        try:
            model = read_power_model(props, host_id)
        except PowerModelError as exc:
            raise PlatformError(f"{path}: {exc}") from None
        if model is None:
            continue
        pstate = host.get("pstate", "0")
        if not (pstate.isascii() and pstate.isdigit() and int(pstate) < len(model.pstates)):
            raise PlatformError(f"{path}: <host id={host_id!r}> pstate={pstate!r} is not one of its "
                                f"{len(model.pstates)} pstates (0 to {len(model.pstates) - 1})")
        hosts.append(HostPower(host_id, model, int(pstate)))
    return hosts
