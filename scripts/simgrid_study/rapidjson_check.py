"""Check batsched_py.models.json_numbers against the real RapidJSON (Debian's rapidjson-dev 1.1.0,
`apt-get install rapidjson-dev g++`): random JSON numbers of every shape (17-digit reprs, long
fractions, huge integer parts, exponents down to subnormals), each parsed by RapidJSON's default
Document::Parse (rapidjson_numbers.cpp) and by rapidjson_double; prints how many differ.

    PYTHONPATH=. python scripts/simgrid_study/rapidjson_check.py [--count N] [--seed S]"""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from batsched_py.models.json_numbers import rapidjson_double


def numbers(rng: random.Random, count: int) -> list[str]:
    def digits(n: int) -> str:
        return "".join(rng.choice("0123456789") for _ in range(n))
    out = []
    while len(out) < count:
        kind = rng.random()
        if kind < 0.4:
            text = repr(rng.uniform(0, 10 ** rng.randint(0, 9)))
        elif kind < 0.6:
            text = ("-" if rng.random() < .2 else "") + str(rng.randint(1, 9)) + digits(rng.randint(0, 22)) \
                + "." + digits(rng.randint(1, 25))
        elif kind < 0.8:
            text = repr(rng.uniform(-1e3, 1e3) * 10 ** rng.randint(-330, 300))
        elif kind < 0.9:
            text = "0." + "0" * rng.randint(0, 30) + str(rng.randint(1, 10 ** rng.randint(1, 20)))
        else:
            text = str(rng.randint(1, 10 ** 18)) + "e" + str(rng.randint(-340, 290))
        if "inf" not in text and ("." in text or "e" in text):
            out.append(text)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="numbers to check (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "rapidjson_numbers")
        subprocess.run(["g++", "-O2", "-o", exe, str(Path(__file__).with_name("rapidjson_numbers.cpp"))], check=True)
        texts = numbers(random.Random(args.seed), args.count)
        printed = subprocess.run([exe], input="\n".join(texts) + "\n", capture_output=True, text=True,
                                 check=True).stdout.split()
    wrong = off = 0
    for text, value in zip(texts, printed):
        mine = rapidjson_double(text)
        if value == "error":        # RapidJSON refuses it as too big; rapidjson_double says infinite
            wrong += not math.isinf(mine)
            continue
        wrong += mine != float.fromhex(value)
        off += float.fromhex(value) != float(text)
        if wrong == 1 and mine != float.fromhex(value):
            print(f"first difference: {text}: RapidJSON {value}, rapidjson_double {mine.hex()}")
    print(f"{len(texts)} numbers: RapidJSON reads {off} of them off the correctly rounded double; "
          f"rapidjson_double differs from RapidJSON on {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
