"""The /play participant model under a name flood, measured from outside with a real HTTP client.

    python bench/bench_play_names.py [--corpus corpus.sqlite] [--names 2048] [--starts 100]

The name-flood attack: participant p1 starts an attempt; a second client, without cookies, lists NAMES new names
(twice the server's 1,024 held names by default); then it asks for p1's list without a cookie. Reported: how long the
flood took, the statuses the flood and the takeover got, whether p1's own browser still acts, and what a name costs:
the latency of a listing (a provisional claim, in memory) and of a first attempt (a durable claim in the log database
plus the attempt's session_start), medians and 95th percentiles over the requests made.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from agenthop.server.transport.http import ServerThread


def _ms(values: list[float]) -> dict:
    ordered = sorted(values)
    return {
        "median_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2),
        "n": len(ordered),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="corpus.sqlite")
    parser.add_argument("--names", type=int, default=2048)
    parser.add_argument("--starts", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.sqlite"
        with ServerThread(args.corpus, str(log)) as server:
            with httpx2.Client(base_url=server.base_url) as p1, httpx2.Client(base_url=server.base_url) as other:
                p1.get("/play/api/items", params={"participant": "p1"})
                sid = p1.post("/play/api/sessions", json={"participant": "p1"}).json()["session_id"]
                listing, statuses = [], {}
                began = time.perf_counter()
                for n in range(args.names):
                    t = time.perf_counter()
                    r = other.get("/play/api/items", params={"participant": f"fill{n}"})
                    listing.append(time.perf_counter() - t)
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                flood_s = time.perf_counter() - began
                other.cookies.clear()
                takeover = other.get("/play/api/items", params={"participant": "p1"}).status_code
                takeover_start = other.post("/play/api/sessions", json={"participant": "p1"}).status_code
                own = p1.post(
                    f"/play/api/sessions/{sid}/call", json={"tool": "think", "arguments": {"reasoning": "mine"}}
                ).status_code
                starts = []
                for n in range(args.starts):
                    with httpx2.Client(base_url=server.base_url) as person:
                        t = time.perf_counter()
                        person.post("/play/api/sessions", json={"participant": f"s{n}"}).raise_for_status()
                        starts.append(time.perf_counter() - t)
    json.dump(
        {
            "names": args.names,
            "flood_seconds": round(flood_s, 2),
            "flood_statuses": statuses,
            "takeover_listing_status": takeover,
            "takeover_start_status": takeover_start,
            "p1_own_call_status": own,
            "listing": _ms(listing),
            "first_attempt": _ms(starts),
        },
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main()
