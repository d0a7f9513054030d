"""Many model replicas behind one URL: a run against a router in front of 4 fake replicas, against one replica.

Each fake replica speaks the chat-completions wire format on loopback and answers every request after
``--latency`` seconds (0.5 s), the 3-turn script of bench_runner.py (get_references -> list_sections ->
submit_answer). Like a real inference engine, a replica works on at most ``--slots`` requests at once
(its batch); the others wait in its queue. So one replica serves at most slots / latency responses a
second, and the runner's workers beyond that wait for it.

The router is a real one installed from the registries, never ours: vLLM's router (``--router vllm-router``,
the vllm-router package, ``--policy`` power_of_two by default), a LiteLLM proxy (``--router litellm``), each
from its own throwaway venv given by ``--venv`` (docs/scale-out.md says which versions and why), or Debian's
nginx (``--router nginx``, a ``least_conn`` upstream). Both configurations run the same
``agenthop-runner --agent raw`` over the first ``--items`` demo items with the same ``--workers``:

    one replica:  --base-url http://127.0.0.1:R1/v1
    router:       --base-url http://127.0.0.1:ROUTER/v1   (in front of R1..R4)

interleaved over ``--repeats`` rounds. The table gives each one's median wall time (run_start to the last
item_end), the replicas' bound (responses x latency / the requests the replicas can work on at once, workers
permitting: the wall time of a harness that costs nothing), the ratio to the ideal (responses x latency /
workers, no queueing at all), the router's CPU per response, and the speed-up of the router over one replica
(one replica's wall time / the router's), median and spread, beside the most the replicas allow.

Usage: .venv/bin/python bench/bench_router.py --router {vllm-router,litellm,nginx} [--venv VENV] [--replicas 4] [--slots 4]
                                              [--latency 0.5] [--items 32] [--workers 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_runner import RUNNER, _tree_cpu, items_file, make_script, measure  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def replica_app(latency: float, slots: int, served, index: int):
    """One replica: at most ``slots`` requests in the works at once, each ``latency`` seconds; counts what it serves."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    batch = asyncio.Semaphore(slots)
    script = make_script(0)

    async def chat(request):
        reply = script(json.loads(await request.body()), None)  # bench_runner.py's 3-turn script, answered at once
        async with batch:
            await asyncio.sleep(latency)
        with served.get_lock():
            served[index] += 1
        return JSONResponse(reply)

    async def models(request):
        return JSONResponse({"object": "list", "data": [{"id": "fake-1", "object": "model"}]})

    async def health(request):  # what vllm serve answers, and the vLLM router checks before it routes
        return JSONResponse({})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models),
            Route("/health", health),
        ]
    )


def serve_replicas(ports: list[int], latency: float, slots: int, served, ready, stop) -> None:
    """The replicas, each its own uvicorn server on its own port (in one child process, off the runner's CPU)."""
    import uvicorn

    servers = [
        uvicorn.Server(
            uvicorn.Config(
                replica_app(latency, slots, served, i), host="127.0.0.1", port=p, log_level="warning", lifespan="off"
            )
        )
        for i, p in enumerate(ports)
    ]
    threads = [threading.Thread(target=s.run, daemon=True) for s in servers]
    for t in threads:
        t.start()
    while not all(s.started for s in servers):
        time.sleep(0.01)  # polling uvicorn's start flag
    ready.set()
    stop.wait()
    for s in servers:
        s.should_exit = True
    for t in threads:
        t.join(timeout=10)


def wait_http(url: str, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited ({proc.returncode}) before it answered {url}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not answer {url} within {timeout:.0f} s")
        time.sleep(0.1)  # polling the router's readiness


def start_litellm(venv: Path, replica_ports: list[int], tmp: Path) -> tuple[subprocess.Popen, str]:
    """A LiteLLM proxy with one deployment per replica under one model name, on loopback, with no credentials:
    only the variables it needs to run, its model price map read from the package (no network), telemetry off."""
    port = free_port()
    config = tmp / "litellm.yaml"
    deployments = "\n".join(
        f"  - model_name: fake-1\n    litellm_params:\n      model: openai/fake-1\n      api_base: http://127.0.0.1:{p}/v1\n"
        f"      api_key: unused\n"
        for p in replica_ports
    )
    config.write_text(
        f"model_list:\n{deployments}\nrouter_settings:\n  routing_strategy: least-busy\n"
        "litellm_settings:\n  telemetry: false\n  drop_params: true\n"
    )
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
        "NO_DOCKER": "True",
    }
    log = open(tmp / "litellm.log", "w")  # noqa: SIM115 - kept open for the proxy's lifetime
    proc = subprocess.Popen(
        [
            str(venv / "bin" / "litellm"),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            "1",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp,
    )
    wait_http(f"http://127.0.0.1:{port}/health/liveliness", proc, "the LiteLLM proxy")
    return proc, f"http://127.0.0.1:{port}/v1"


def start_vllm_router(venv: Path, replica_ports: list[int], policy: str, tmp: Path) -> tuple[subprocess.Popen, str]:
    """vLLM's router (the vllm-router package, in its own venv) in front of the replicas, on loopback."""
    port = free_port()
    log = open(tmp / "vllm-router.log", "w")  # noqa: SIM115 - kept open for the router's lifetime
    proc = subprocess.Popen(
        [
            str(venv / "bin" / "vllm-router"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--policy",
            policy,
            "--worker-urls",
            *[f"http://127.0.0.1:{p}" for p in replica_ports],
            "--log-level",
            "warning",
        ],
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp)},
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp,
    )
    wait_http(f"http://127.0.0.1:{port}/v1/models", proc, "the vLLM router")
    return proc, f"http://127.0.0.1:{port}/v1"


def start_nginx(replica_ports: list[int], tmp: Path) -> tuple[subprocess.Popen, str]:
    """Debian's nginx as a plain HTTP load balancer: least_conn over the replicas, keep-alive to them."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port = free_port()
    upstream = "".join(f"    server 127.0.0.1:{p};\n" for p in replica_ports)
    (tmp / "nginx.conf").write_text(
        f"daemon off;\npid {tmp}/nginx.pid;\nerror_log {tmp}/nginx-error.log warn;\nworker_processes 1;\n"
        "events { worker_connections 4096; }\n"
        # Bodies and replies stay in memory: nginx's workers (another user when started as root) write no temp files.
        f"http {{\n  access_log off;\n  client_body_buffer_size 8m;\n  client_max_body_size 8m;\n  proxy_buffering off;\n"
        f"  upstream replicas {{\n    least_conn;\n{upstream}    keepalive 64;\n  }}\n"
        f"  server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://replicas;\n"
        '      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n      proxy_read_timeout 300s;\n    }\n  }\n}\n'
    )
    proc = subprocess.Popen(
        [nginx, "-c", str(tmp / "nginx.conf"), "-p", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    wait_http(f"http://127.0.0.1:{port}/v1/models", proc, "nginx")
    return proc, f"http://127.0.0.1:{port}/v1"


def run(base_url: str, corpus: Path, items: Path, out: Path, workers: int, latency: float) -> dict:
    cmd = [
        RUNNER,
        "--items",
        str(items),
        "--agent",
        "raw",
        "--model",
        "fake-1",
        "--base-url",
        base_url,
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--no-progress",
        "--no-resume",
        "--retries",
        "0",
    ]
    done = subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": "sk-bench"},
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    row = measure(out, latency, workers)
    if row["not_answered"]:
        from agenthop.runner.records import read_records

        errors = sorted(
            {r.get("error", "")[:300] for r in read_records(out / "runner.jsonl") if r["kind"] == "attempt_error"}
        )
        raise SystemExit(f"{row['not_answered']} item(s) were not answered through {base_url}: {errors[:3]}")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--router", choices=["vllm-router", "litellm", "nginx"], required=True)
    ap.add_argument(
        "--venv", type=Path, help="the venv holding the router (vllm-router, litellm): its own, never the project's"
    )
    ap.add_argument("--policy", default="power_of_two", help="vllm-router's --policy")
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--slots", type=int, default=4, help="requests a replica works on at once (its batch)")
    ap.add_argument("--latency", type=float, default=0.5, help="seconds a replica takes per response")
    ap.add_argument("--items", type=int, default=32)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.router != "nginx" and not (args.venv and (args.venv / "bin" / args.router).exists()):
        raise SystemExit(
            f"--router {args.router} needs --venv VENV, a venv holding it (bin/{args.router}; docs/scale-out.md)"
        )

    ports = [free_port() for _ in range(args.replicas)]
    ctx = mp.get_context("spawn")
    ready, stop, served = ctx.Event(), ctx.Event(), ctx.Array("i", args.replicas)
    replicas = ctx.Process(
        target=serve_replicas, args=(ports, args.latency, args.slots, served, ready, stop), daemon=True
    )
    replicas.start()
    router = None
    rows: dict[str, list[dict]] = {"one replica": [], args.router: []}
    try:
        if not ready.wait(60):
            raise SystemExit("the fake replicas did not start")
        with tempfile.TemporaryDirectory(prefix="agenthop-bench-router-") as tmp:
            tmp = Path(tmp)
            if args.router == "vllm-router":
                router, router_url = start_vllm_router(args.venv, ports, args.policy, tmp)
            elif args.router == "litellm":
                router, router_url = start_litellm(args.venv, ports, tmp)
            else:
                router, router_url = start_nginx(ports, tmp)
            corpus, items = items_file(tmp, args.items)
            urls = {"one replica": f"http://127.0.0.1:{ports[0]}/v1", args.router: router_url}
            for rep in range(args.repeats):
                for name, url in urls.items():
                    before, cpu0 = list(served), _tree_cpu(router.pid)
                    row = run(url, corpus, items, tmp / f"{name.replace(' ', '-')}-{rep}", args.workers, args.latency)
                    row["served_by_replica"] = [after - b for after, b in zip(served, before)]
                    # The router's own CPU per response it passed on: the figure that carries over to another machine.
                    row["router_cpu_ms_per_response"] = round(
                        (_tree_cpu(router.pid) - cpu0) * 1000 / row["responses"], 2
                    )
                    rows[name].append(row)
                    print(json.dumps({"round": rep + 1, "target": name, **row}), flush=True)
    finally:
        if router is not None:
            router.terminate()
            router.wait(timeout=30)
        stop.set()
        replicas.join(timeout=10)
    one, routed = rows["one replica"], rows[args.router]
    speedups = [a["wall_s"] / b["wall_s"] for a, b in zip(one, routed)]
    print()
    print(
        f"{args.items} items, raw agent, {args.workers} workers; each replica {args.latency} s per response, "
        f"{args.slots} at a time; {args.repeats} interleaved rounds"
    )
    # The replicas' own bound: responses x latency / the requests they can work on at once (workers permitting).
    print(f"{'target':28} {'wall s':>7} {'replicas bound s':>16} {'wall/ideal':>10} {'router CPU ms/response':>22}")
    for name, label, n in (
        ("one replica", "one replica", 1),
        (args.router, f"{args.router} -> {args.replicas} replicas", args.replicas),
    ):
        r = rows[name]
        bound = r[0]["responses"] * args.latency / min(args.workers, n * args.slots)
        cpu = f"{statistics.median(x['router_cpu_ms_per_response'] for x in r):.2f}" if name == args.router else "-"
        print(
            f"{label:28} {statistics.median(x['wall_s'] for x in r):>7.2f} {bound:>16.2f} "
            f"{statistics.median(x['ratio'] for x in r):>10.2f} {cpu:>22}"
        )
    print(
        f"the most a router can give here: {min(args.workers, args.replicas * args.slots) / min(args.workers, args.slots):.2f}x"
    )
    print(
        f"speed-up of the router over one replica: {statistics.median(speedups):.2f}x "
        f"(spread {min(speedups):.2f}-{max(speedups):.2f})"
    )


if __name__ == "__main__":
    main()
