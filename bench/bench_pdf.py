"""Benchmark PDFs in: the GROBID client's PDFs per second against a stand-in service, and the fallback parser's pages
per second and peak memory.

    python bench/bench_pdf.py                       # 24 PDFs, 1.0 s per PDF, a 4-thread service; fallback 2 rounds
    python bench/bench_pdf.py --pdfs 12 --latency 0.5 --rounds 1   # a quick look

**GROBID client.** A loopback stand-in (tests/support/grobid_standin.py) answers each PDF's TEI after ``--latency``
seconds, the parsing time of a real service, with ``--capacity`` threads: a request beyond them gets 503 at once, as
GROBID answers when its pool is full. The client converts ``--pdfs`` distinct PDFs (copies of the fixture PDFs, each with
a different trailing comment) into a fresh cache at each ``--concurrency`` in turn, then once more from the warm
cache. Reported: PDFs per second, the share of the service's capacity used (capacity / latency is the most any
client can get), and the 503s the service answered. The best concurrency keeps every thread busy without 503s.

**Fallback parser.** Each fixture PDF, ``--rounds`` times, alternating: pdfminer.six's layout analysis alone
(``extract_pages`` with the parser's settings), then the whole fallback (layout, rules and TEI writing), each
in its own child process so that its peak resident memory (``ru_maxrss``) is its own; and a child that only
imports the modules, for the baseline memory. Reported: pages per second (median of the rounds) and the ratio
of the whole parser to layout alone.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
PAPERS = ["2020.acl-main.207", "N18-3011", "s12984-016-0129-6"]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, path = sys.argv[1], Path(sys.argv[2])
from pdfminer.high_level import extract_pages
from pdfminer.layout import LAParams
from agenthop.corpus.convert.pdf_fallback import extract
from agenthop.corpus.convert.pdf_tei import write_tei
start, cpu = time.perf_counter(), time.process_time()
if mode == "layout":  # each page is laid out as it is yielded
    for _ in extract_pages(path, laparams=LAParams(all_texts=True)):
        pass
elif mode == "fallback":
    found = extract(path)
    write_tei(found)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(mode: str, pdf: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(pdf)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def page_count(pdf: Path) -> int:
    from pdfminer.pdfpage import PDFPage

    with open(pdf, "rb") as fh:
        return sum(1 for _ in PDFPage.get_pages(fh))


def bench_fallback(rounds: int) -> list[dict]:
    rows = []
    base = child("imports", FIXTURES / "pdf" / f"{PAPERS[0]}.pdf")["rss_mib"]
    for name in PAPERS:
        pdf = FIXTURES / "pdf" / f"{name}.pdf"
        times: dict[str, list[float]] = {"layout": [], "fallback": []}
        cpu: list[float] = []
        rss: dict[str, float] = {"layout": 0.0, "fallback": 0.0}
        for _ in range(rounds):
            for mode in ("layout", "fallback"):
                got = child(mode, pdf)
                times[mode].append(got["seconds"])
                if mode == "fallback":
                    cpu.append(got["cpu"])
                rss[mode] = max(rss[mode], got["rss_mib"])
        pages = page_count(pdf)
        layout, whole = statistics.median(times["layout"]), statistics.median(times["fallback"])
        rows.append(
            {
                "pdf": name,
                "pages": pages,
                "layout_pages_per_s": pages / layout,
                "fallback_pages_per_s": pages / whole,
                "fallback_over_layout": whole / layout,
                "fallback_pages_per_cpu_s": pages / statistics.median(cpu),
                "peak_rss_mib": rss["fallback"],
                "imports_rss_mib": base,
            }
        )
    return rows


def _serve(answers: dict, latency: float, capacity: int, pipe) -> None:
    """The stand-in in a process of its own, so that it does not share the client's interpreter lock."""
    from support.grobid_standin import GrobidStandIn

    with GrobidStandIn(answers, latency=latency, capacity=capacity) as service:
        pipe.send(service.url)
        pipe.recv()  # until the client is done
        pipe.send(service.busy_answers)


class Service:
    def __init__(self, answers: dict, latency: float, capacity: int):
        ctx = multiprocessing.get_context("fork")
        self._pipe, theirs = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(answers, latency, capacity, theirs), daemon=True)

    def __enter__(self) -> Service:
        self._process.start()
        self.url = self._pipe.recv()
        return self

    def busy_answers(self) -> int:
        self._pipe.send("done")
        return self._pipe.recv()

    def __exit__(self, *exc) -> None:
        self._process.join(timeout=30)


def bench_grobid(n_pdfs: int, latency: float, capacity: int, concurrencies: list[int]) -> list[dict]:
    sys.path.insert(0, str(ROOT / "tests"))
    from support.grobid_standin import digest

    from agenthop.corpus.convert.grobid import GrobidOptions, convert_pdfs

    work = Path(tempfile.mkdtemp(prefix="bench-pdf-"))
    try:
        pdfs, answers = [], {}
        for i in range(n_pdfs):
            name = PAPERS[i % len(PAPERS)]
            path = work / f"{i:03d}-{name}.pdf"
            path.write_bytes((FIXTURES / "pdf" / f"{name}.pdf").read_bytes() + f"\n% copy {i}\n".encode())
            pdfs.append(path)
            answers[digest(path.read_bytes())] = (FIXTURES / "tei" / f"{name}.tei.xml").read_bytes()
        rows = []
        for concurrency in concurrencies:
            with Service(answers, latency, capacity) as service:
                cache = work / f"cache-{concurrency}"
                start = time.perf_counter()
                teis, failures, counts = convert_pdfs(
                    pdfs, cache, GrobidOptions(service.url, concurrency=concurrency), echo=lambda _: None
                )
                seconds = time.perf_counter() - start
                assert len(teis) == n_pdfs and not failures, failures
                warm = None
                if concurrency == concurrencies[-1]:
                    start = time.perf_counter()
                    convert_pdfs(pdfs, cache, GrobidOptions(service.url, concurrency=concurrency), echo=lambda _: None)
                    warm = time.perf_counter() - start
                rows.append(
                    {
                        "concurrency": concurrency,
                        "seconds": seconds,
                        "pdfs_per_s": n_pdfs / seconds,
                        "capacity_used": (n_pdfs / seconds) / (capacity / latency),
                        "busy_503": service.busy_answers(),
                        "retries": counts["retries"],
                    }
                )
            if warm is not None:
                rows.append(
                    {
                        "concurrency": f"{concurrency}, warm cache",
                        "seconds": warm,
                        "pdfs_per_s": n_pdfs / warm,
                        "capacity_used": None,
                        "busy_503": 0,
                        "retries": 0,
                    }
                )
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", type=int, default=24)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the stand-in takes per PDF")
    parser.add_argument("--capacity", type=int, default=4, help="the stand-in's threads")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=2, help="fallback rounds per PDF")
    parser.add_argument("--only", nargs="+", choices=["grobid", "fallback"], default=["grobid", "fallback"])
    args = parser.parse_args()

    if "grobid" in args.only:
        grobid_table(args)
    if "fallback" in args.only:
        fallback_table(args)


def grobid_table(args: argparse.Namespace) -> None:
    print(
        f"GROBID client: {args.pdfs} PDFs, stand-in {args.latency:g} s per PDF with {args.capacity} threads "
        f"(at most {args.capacity / args.latency:.2f} PDFs/s)"
    )
    print("| concurrency | seconds | PDFs/s | share of capacity | 503s answered | retries |")
    print("|---|---|---|---|---|---|")
    for r in bench_grobid(args.pdfs, args.latency, args.capacity, args.concurrency):
        used = f"{r['capacity_used']:.0%}" if r["capacity_used"] is not None else "-"
        print(
            f"| {r['concurrency']} | {r['seconds']:.2f} | {r['pdfs_per_s']:.2f} | {used} | {r['busy_503']} | {r['retries']} |"
        )
    print()


def fallback_table(args: argparse.Namespace) -> None:
    print(f"Fallback parser: median of {args.rounds} rounds, each in its own process")
    print(
        "| PDF | pages | pdfminer layout alone, pages/s | whole fallback, pages/s | fallback / layout time "
        "| whole fallback, pages per CPU second | peak RSS (MiB) | imports only (MiB) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in bench_fallback(args.rounds):
        print(
            f"| {r['pdf']} | {r['pages']} | {r['layout_pages_per_s']:.1f} | {r['fallback_pages_per_s']:.1f} | "
            f"{r['fallback_over_layout']:.2f} | {r['fallback_pages_per_cpu_s']:.1f} | {r['peak_rss_mib']:.0f} | {r['imports_rss_mib']:.0f} |"
        )


if __name__ == "__main__":
    main()
