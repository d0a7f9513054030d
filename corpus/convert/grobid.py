"""PDFs -> TEI through a GROBID service the user runs (its REST API, ``/api/processFulltextDocument``).

Every PDF is sent at most once per content: its TEI is kept in a cache folder under a name that holds
the PDF's SHA-256, so a re-run (or a renamed copy) is served from the cache and sends nothing. A few
requests run at once (GROBID answers 503 when all its threads are busy, so more would only queue);
503, 429, 502, 504, dropped connections and timeouts are retried with exponential backoff; every other
failure is final for that PDF and reported with GROBID's own answer. The cache is written atomically,
so an interrupted run leaves only whole TEI files behind.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx2

from agenthop.corpus.convert.model import ConvertError
from agenthop.corpus.convert.tei import NS as TEI_NS

ENDPOINT = "/api/processFulltextDocument"
ALIVE = "/api/isalive"
_RETRIED_STATUS = frozenset({429, 502, 503, 504})  # GROBID: 503 = every worker busy, try again later
_ANSWER_SHOWN = 300  # characters of GROBID's answer quoted in a failure


@dataclass(frozen=True)
class GrobidOptions:
    url: str  # the service's base URL, e.g. http://localhost:8070
    concurrency: int = 4  # requests in flight; GROBID's default pool has as many threads as cores
    timeout: float = 180.0  # seconds for one PDF, sending to last byte of the answer
    retries: int = 4  # further attempts after a 503, a timeout or a dropped connection
    backoff: float = 2.0  # seconds before the first retry; doubled for each next one (or GROBID's Retry-After)


@dataclass(frozen=True)
class PdfFailure:
    path: Path
    reason: str  # what GROBID answered (status and the start of its body), or what went wrong

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def pdf_digest(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


class TeiCache:
    """A folder of ``<pdf stem>.<sha256 prefix>.tei.xml`` files: the TEI of each PDF content seen so far."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._by_digest = {p.name.rsplit(".", 3)[1]: p for p in folder.glob("*.tei.xml") if p.name.count(".") >= 3}

    @staticmethod
    def key(digest: str) -> str:
        return digest[:24]

    def get(self, digest: str) -> Path | None:
        return self._by_digest.get(self.key(digest))

    def put(self, pdf: Path, digest: str, tei: bytes) -> Path:
        stem = pdf.stem.replace(".", "_") or "paper"
        path = self.folder / f"{stem}.{self.key(digest)}.tei.xml"
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(tei)
        os.replace(tmp, path)  # atomic: a crash leaves the old state, never half a file
        self._by_digest[self.key(digest)] = path
        return path


def check_tei(body: bytes) -> str | None:
    """None if ``body`` is GROBID full-text TEI; else what is wrong with it."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        return f"not XML ({exc})"
    if root.tag != f"{{{TEI_NS}}}TEI":
        return f"XML whose root is <{root.tag}>, not TEI"
    if root.find(f"{{{TEI_NS}}}teiHeader") is None:
        return "TEI without a <teiHeader>"
    return None


def _answer(response: httpx2.Response) -> str:
    body = response.text.strip().replace("\n", " ")
    shown = body[:_ANSWER_SHOWN] + ("..." if len(body) > _ANSWER_SHOWN else "")
    return f"GROBID answered {response.status_code} {response.reason_phrase}" + (
        f": {shown}" if shown else " (empty body)"
    )


def _retry_after(response: httpx2.Response, default: float) -> float:
    try:
        return min(max(float(response.headers.get("retry-after", "")), 0.0), 60.0)
    except ValueError:
        return default


class _Converter:
    def __init__(self, options: GrobidOptions, cache: TeiCache, echo: Callable[[str], None], total: int):
        self.options, self.cache, self.echo, self.total = options, cache, echo, total
        self.done = self.sent = self.retried = 0
        self.failures: list[PdfFailure] = []
        self._every = max(1, total // 20)  # about twenty progress lines whatever the folder's size

    async def one(self, client: httpx2.AsyncClient, pdf: Path, digest: str) -> Path | None:
        reason = None
        delay = self.options.backoff
        for attempt in range(self.options.retries + 1):
            if attempt:
                self.retried += 1
                await asyncio.sleep(delay)
                delay *= 2
            try:
                async with asyncio.timeout(self.options.timeout):
                    response = await client.post(
                        self.options.url.rstrip("/") + ENDPOINT,
                        files={"input": (pdf.name, pdf.read_bytes(), "application/pdf")},
                    )
                self.sent += 1
            except TimeoutError:
                reason = f"no answer from GROBID within {self.options.timeout:g} s"
                continue
            except httpx2.TransportError as exc:
                reason = f"the connection to GROBID failed ({type(exc).__name__}: {exc})"
                continue
            if response.status_code in _RETRIED_STATUS:
                reason = _answer(response)
                delay = max(delay, _retry_after(response, delay))
                continue
            if response.status_code != 200:
                self._failed(pdf, _answer(response))  # 204 no content, 400 bad input, 500 parse failure: final
                return None
            wrong = check_tei(response.content)
            if wrong is not None:
                self._failed(pdf, f"GROBID answered 200 but the body is {wrong}")
                return None
            return self._finished(self.cache.put(pdf, digest, response.content))
        self._failed(pdf, f"{reason}; gave up after {self.options.retries + 1} attempts")
        return None

    def _failed(self, pdf: Path, reason: str) -> None:
        failure = PdfFailure(pdf, reason)
        self.failures.append(failure)
        self.echo(f"  GROBID could not convert {failure}")
        self._finished(None)

    def _finished(self, path: Path | None) -> Path | None:
        self.done += 1
        if self.done % self._every == 0 or self.done == self.total:
            self.echo(f"  GROBID: {self.done}/{self.total} PDFs done ({len(self.failures)} failed)")
        return path


async def _convert(
    pending: list[tuple[Path, str]], options: GrobidOptions, cache: TeiCache, echo: Callable[[str], None]
) -> tuple[dict[Path, Path], _Converter]:
    work = _Converter(options, cache, echo, len(pending))
    converted: dict[Path, Path] = {}
    queue: asyncio.Queue[tuple[Path, str]] = asyncio.Queue()
    for entry in pending:
        queue.put_nowait(entry)

    async def worker(client: httpx2.AsyncClient) -> None:
        while not queue.empty():
            pdf, digest = queue.get_nowait()
            tei = await work.one(client, pdf, digest)
            if tei is not None:
                converted[pdf] = tei

    timeout = httpx2.Timeout(options.timeout)  # the per-file deadline above is the real bound
    limits = httpx2.Limits(max_connections=options.concurrency)
    async with httpx2.AsyncClient(timeout=timeout, limits=limits) as client:
        await _check_alive(client, options.url)
        await asyncio.gather(*(worker(client) for _ in range(min(options.concurrency, len(pending)))))
    return converted, work


async def _check_alive(client: httpx2.AsyncClient, url: str) -> None:
    """Fail at once, naming the URL, when nothing answers there (rather than once per PDF after every retry)."""
    try:
        response = await client.get(url.rstrip("/") + ALIVE, timeout=10)
    except httpx2.HTTPError as exc:
        raise ConvertError(
            f"no GROBID service answers at {url} ({type(exc).__name__}: {exc}); start one "
            "(e.g. docker run -p 8070:8070 grobid/grobid:0.8.1) or leave out the GROBID URL to use "
            "the fallback parser"
        ) from None
    if response.status_code != 200:
        raise ConvertError(f"{url}{ALIVE} answered {response.status_code}: is {url} a GROBID service?")


def convert_pdfs(
    pdfs: list[Path], cache_folder: Path, options: GrobidOptions, echo: Callable[[str], None] = print
) -> tuple[list[Path], list[PdfFailure], dict]:
    """(TEI files in the order of ``pdfs``, the PDFs GROBID could not convert, counts).

    PDFs whose content is in the cache are not sent. Raises ConvertError only when the service
    cannot be reached at all.
    """
    if options.concurrency < 1:
        raise ConvertError(f"GROBID concurrency must be at least 1, not {options.concurrency}")
    cache = TeiCache(cache_folder)
    digests = {pdf: pdf_digest(pdf) for pdf in pdfs}
    pending = [(pdf, digests[pdf]) for pdf in pdfs if cache.get(digests[pdf]) is None]
    cached = len(pdfs) - len(pending)
    echo(
        f"GROBID at {options.url}: {len(pdfs)} PDFs, {cached} already converted in {cache_folder}, "
        f"{len(pending)} to send ({options.concurrency} at a time)"
    )
    converted: dict[Path, Path] = {}
    sent = retried = 0
    failures: list[PdfFailure] = []
    if pending:
        converted, work = asyncio.run(_convert(pending, options, cache, echo))
        sent, retried, failures = work.sent, work.retried, work.failures
    teis = [converted.get(pdf) or cache.get(digests[pdf]) for pdf in pdfs]
    failed = {f.path for f in failures}
    order = {pdf: i for i, pdf in enumerate(pdfs)}
    failures.sort(key=lambda f: order[f.path])
    counts = {"from_cache": cached, "requests": sent, "retries": retried}
    return [tei for pdf, tei in zip(pdfs, teis) if pdf not in failed and tei is not None], failures, counts
