"""Read energy properties of a Batsim 4 platform (used by metrics).

Only what wasted-energy accounting needs: per compute host, the pstates'
``idle:epsilon:allcores`` watts, the sleep/off/on pstate indices and the
default pstate. Master hosts (id ``master_host`` or role=master) are skipped.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


class PlatformError(ValueError):
    """Invalid platform; the message names the file and the element."""


@dataclass(frozen=True)
class HostPower:
    host: str
    wattages: tuple[tuple[float, float, float], ...]
    default_pstate: int
    sleep_pstates: tuple[int, int, int] | None

    @property
    def idle_w(self) -> float:
        return self.wattages[self.default_pstate][0]

    @property
    def compute_w(self) -> float:
        return self.wattages[self.default_pstate][2]

    def state_w(self, which: str) -> float:
        """Watts while sleeping / switching off / switching on."""
        if self.sleep_pstates is None:
            return float("nan")
        index = self.sleep_pstates[("sleep", "off", "on").index(which)]
        return self.wattages[index][0]


def parse_xml(path: str | Path) -> ET.ElementTree:
    """Parse XML keeping comments; errors name the file, line and column.

    Leading blank lines before ``<?xml`` are tolerated (some Batsim 3 files
    have one, which strict parsers reject); line numbers still refer to the file.
    """
    text = Path(path).read_text()
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


def parse_wattages(text: str, where: str) -> tuple[tuple[float, float, float], ...]:
    """``idle:eps:full, ...`` (Batsim 4) into float triples."""
    out = []
    for item in text.split(","):
        parts = item.strip().split(":")
        try:
            values = tuple(float(p) for p in parts)
        except ValueError:
            raise PlatformError(f"{where}: non-numeric wattage {item.strip()!r}") from None
        if len(values) != 3:
            raise PlatformError(f"{where}: wattage {item.strip()!r} is not idle:epsilon:allcores")
        out.append(values)
    return tuple(out)


def host_powers(path: str | Path) -> list[HostPower]:
    """Energy description of every compute host (hosts without wattage are skipped)."""
    root = parse_xml(path).getroot()
    hosts = []
    for host in root.iter("host"):
        host_id = host.get("id", "?")
        props = {p.get("id"): p.get("value", "") for p in host.findall("prop")}
        if host_id == "master_host" or props.get("role") == "master":
            continue
        if "wattage_per_state" not in props:
            continue
        where = f"{path}: <host id={host_id!r}> wattage_per_state"
        sleep = props.get("sleep_pstates")
        try:
            triple = tuple(int(x) for x in sleep.split(":")) if sleep else None
        except ValueError:
            raise PlatformError(f"{path}: <host id={host_id!r}> bad sleep_pstates {sleep!r}") from None
        hosts.append(HostPower(host_id, parse_wattages(props["wattage_per_state"], where),
                               int(host.get("pstate", "0")), triple))
    return hosts
