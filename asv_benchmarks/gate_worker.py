"""One timing process of the A/B regression gate (``gate.py --against``); not run by hand.

It imports nothing of scwo_np itself: the gate starts it with ``PYTHONPATH`` set to the
source tree under test, sends one JSON request per line on stdin and reads one JSON answer
per line on stdout.  A request is ``{"name", "setup", "stmt", "reps"}``: the setup runs once
per name (in a namespace of its own), then the statement once to warm up (the JIT compiles
or loads its cache) and ``reps`` more times; the answer is ``{"best": seconds}`` (the
fastest call) or ``{"error": message}``.  The first line it writes says which
``scwo_np`` it imported, so that the gate can check it is timing the tree it meant to.
"""

from __future__ import annotations

import json
import sys
import time


def _best(fn, reps: int) -> float:
    # benchmarks/common.best_time's loop, repeated: this file imports nothing of the project's
    # (a base commit's tree has its own), and the warm-up call is made by the caller.
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    import scwo_np

    sys.stdout.write(json.dumps({"ready": scwo_np.__file__}) + "\n")
    sys.stdout.flush()
    spaces: dict[str, dict] = {}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            ns = spaces.get(req["name"])
            if ns is None:
                ns = spaces[req["name"]] = {}
                exec(req["setup"], ns)  # noqa: S102 - the gate's own workload text
                code = compile(req["stmt"], req["name"], "exec")
                ns["__call__"] = lambda ns=ns, code=code: exec(code, ns)  # noqa: S102
                ns["__call__"]()  # warm up: compile or load the JIT cache
            answer = {"best": _best(ns["__call__"], int(req["reps"]))}
        except Exception as exc:  # noqa: BLE001 - reported to the gate, which names the workload
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
