"""Is the test suite stable on a busy machine? Run it N times in a row while other
processes keep every core busy, each time in a new random order.

    python bench/suite_under_load.py                 # 5 runs of the whole suite
    python bench/suite_under_load.py --runs 3 -- tests/e2e tests/store

Prints one line per run (passed / failed, seconds, the pytest-randomly seed that replays
its order) and exits 1 if any run failed. A test that waits on wall time instead of a
condition shows up here long before it shows up in CI.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def burn() -> None:
    while True:  # pure CPU, no I/O: the kind of neighbour that starves timers
        sum(i * i for i in range(10_000))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--burners", type=int, default=os.cpu_count() or 2, help="busy processes")
    p.add_argument("pytest_args", nargs="*", help="after --: what pytest runs (default: all)")
    args = p.parse_args()
    burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(args.burners)]
    for b in burners:
        b.start()
    print(f"{args.burners} busy processes on {os.cpu_count()} CPUs; {args.runs} runs")
    failed = 0
    try:
        for n in range(1, args.runs + 1):
            t0 = time.monotonic()
            seed = random.randrange(2**32)  # -q hides the seed pytest-randomly would print
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    f"--randomly-seed={seed}",
                    *args.pytest_args,
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            out = done.stdout + done.stderr
            summary = out.strip().splitlines()[-1] if out.strip() else ""
            ok = done.returncode == 0
            failed += not ok
            print(
                f"run {n}: {'passed' if ok else 'FAILED'} in {time.monotonic() - t0:.0f} s, "
                f"seed {seed}: {summary}",
                flush=True,
            )
            if not ok:  # what failed and why, enough to start from; the seed replays it
                why = [line for line in out.splitlines() if line.startswith(("E ", "FAILED"))]
                print("\n".join(why[:60]), flush=True)
    finally:
        for b in burners:
            b.terminate()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
