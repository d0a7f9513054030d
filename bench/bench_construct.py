"""The construction pipeline's own cost: overhead per candidate against a zero-latency scripted model, and wall time
against the ideal (calls x latency / workers) with a 0.5 s model at 1 and 16 workers.

    python bench/bench_construct.py --rounds 3

The model is tests/support/construct_script.py's scripted model (every answer valid) on loopback, generator and three
filters; no judge. Importing the API client is done before any timing. Each measurement uses a fresh output
directory, so no reply comes from the cache. Stages without a model (seeds, chains, sanity, post-filter, release)
are in the wall time too: they are part of the pipeline.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.construct_script import ConstructScript  # noqa: E402
from support.fake_openai import FakeOpenAI, Slow  # noqa: E402

from agenthop.construct.pipeline import run_pipeline  # noqa: E402
from agenthop.construct.settings import Settings  # noqa: E402

CORPUS = ROOT / "corpus.sqlite"


class AllValid(dict):
    """Every chain's outcome is "ok": the script answers validly."""

    def setdefault(self, key, default=None):
        return super().setdefault(key, "ok")


class Timed:
    """The script, optionally answering after ``latency`` seconds; records its own time per request."""

    def __init__(self, latency: float):
        self.script = ConstructScript(CORPUS)
        self.script.outcome = AllValid()
        self.latency = latency
        self.handler_s = 0.0

    def __call__(self, body, fake):
        t0 = time.perf_counter()
        reply = self.script(body, fake)
        self.handler_s += time.perf_counter() - t0
        return Slow(self.latency, reply) if self.latency else reply


def measure(latency: float, workers: int, max_qa: int) -> dict:
    timed = Timed(latency)
    with FakeOpenAI(timed) as fake, tempfile.TemporaryDirectory(prefix="bench-construct-") as tmp:
        url = fake.base_url
        s = Settings(
            min_refs=5,
            max_chains_per_seed=3,
            generator=f"gen@{url}",
            filters=(f"f1@{url}", f"f2@{url}", f"f3@{url}"),
            max_qa=max_qa,
            workers=workers,
        )
        marks: dict[str, float] = {}

        def echo(
            line: str,
        ) -> None:  # "qa: running" ... "ensemble: 48 in, 48 kept": when the model stages start and end
            marks.setdefault(line.split(":")[0] + (" end" if " in, " in line else ""), time.perf_counter())

        t0 = time.perf_counter()
        result = run_pipeline(CORPUS, Path(tmp) / "run", s, echo=echo)
        wall = time.perf_counter() - t0
        calls = len(fake.requests)
    candidates = {r["stage"]: r for r in result["attrition"]["rows"]}["qa"]["sampled"]
    return {
        "wall": wall,
        "model_stages": marks["ensemble end"] - marks["qa"],
        "calls": calls,
        "candidates": candidates,
        "handler_s": timed.handler_s,
        "items": result["release"]["items"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--candidates", type=int, default=48, help="chains sent to Q/A in the zero-latency measure")
    args = ap.parse_args()
    import openai  # noqa: F401 - start-up: loading the API client (seconds on a loaded machine) is not per-candidate cost

    offline = []
    zero = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="bench-construct-") as tmp:
            t0 = time.perf_counter()
            run_pipeline(
                CORPUS,
                Path(tmp) / "run",
                Settings(min_refs=5, max_chains_per_seed=3, max_qa=args.candidates),
                echo=lambda line: None,
            )
            offline.append(time.perf_counter() - t0)
        zero.append(measure(0.0, 16, args.candidates))
    z = zero[-1]
    per_cand = [m["model_stages"] / m["candidates"] * 1000 for m in zero]
    per_call = [(m["model_stages"] - m["handler_s"]) / m["calls"] * 1000 for m in zero]
    print(
        f"zero-latency model, 16 workers, {z['candidates']} candidates, {z['calls']} calls, {z['items']} items written ({args.rounds} rounds):"
    )
    print(
        f"  model stages (Q/A, distractors, ensemble) per candidate: median {statistics.median(per_cand):.1f} ms "
        f"(range {min(per_cand):.1f}-{max(per_cand):.1f})"
    )
    print(
        f"  pipeline time per model call (model stages minus the script's own time): median {statistics.median(per_call):.2f} ms"
    )
    print(
        f"  offline pipeline (offline generator and filter), same chains: median {statistics.median(offline):.2f} s; "
        f"model pipeline: median {statistics.median(m['wall'] for m in zero):.2f} s"
    )
    print("0.5 s model, wall / ideal (calls x 0.5 s / workers):")
    for workers, max_qa in ((1, 4), (16, 32)):
        m = measure(0.5, workers, max_qa)
        ideal = m["calls"] * 0.5 / workers
        print(
            f"  {workers:>2} workers, {m['candidates']} candidates, {m['calls']} calls: model stages {m['model_stages']:.2f} s, "
            f"ideal {ideal:.2f} s, ratio {m['model_stages'] / ideal:.3f} (whole run {m['wall']:.2f} s)"
        )


if __name__ == "__main__":
    main()
