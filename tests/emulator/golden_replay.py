"""Helpers to replay golden transcripts: a peer that answers with the recorded replies."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from batsched_py import protocol as p

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"


def cases() -> list[str]:
    return sorted(d.name for d in GOLDEN.iterdir() if (d / "meta.json").exists())


def transcript(case: str) -> list[dict]:
    d = GOLDEN / case
    path = d / "transcript.jsonl"
    opener = open
    if not path.exists():
        path, opener = d / "transcript.jsonl.gz", gzip.open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


def meta(case: str) -> dict:
    return json.loads((GOLDEN / case / "meta.json").read_text())


def normalise(data):
    """Floats rounded to 1e-6 so recorded and emulated messages compare as values."""
    if isinstance(data, float):
        return round(data, 6)
    if isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if isinstance(data, dict):
        return {k: normalise(v) for k, v in data.items()}
    if isinstance(data, list):
        return [normalise(v) for v in data]
    return data


class Replayer:
    """exchange(): records what the emulator sends, answers the recorded reply."""

    def __init__(self, lines: list[dict]):
        self.requests = [l["msg"] for l in lines if l["from"] == "batsim"]
        self.replies = [l["msg"] for l in lines if l["from"] == "scheduler"]
        self.sent: list[dict] = []

    def __call__(self, request: p.Message) -> p.Message:
        i = len(self.sent)
        self.sent.append(request.to_data())
        if i >= len(self.replies):
            raise AssertionError(f"emulator sent more messages than recorded ({i + 1})")
        return p.decode_message(self.replies[i], sender="scheduler")

    def first_difference(self) -> str | None:
        for i, (want, got) in enumerate(zip(self.requests, self.sent)):
            if normalise(want) != normalise(got):
                return f"message {i + 1}:\n  recorded {json.dumps(want)[:1500]}\n  emulated {json.dumps(got)[:1500]}"
        if len(self.sent) != len(self.requests):
            return f"emulator sent {len(self.sent)} messages, recorded {len(self.requests)}"
        return None
