"""Scale-out on cluster engines (docs/scale-out.md): ``--shard auto`` and the job files.

- the shard a Slurm array task or a Kubernetes Indexed Job pod runs, from the engine's variables, and
  an error naming the variable for each one missing or inconsistent;
- three shards run as three processes with Slurm's variables into one folder, scored from that folder:
  item for item what one process scores;
- docs/scale-out/agenthop.sbatch: judged by ``sbatch --test-only`` and run as a job array on a one-node Slurm
  cluster the tests start;
- docs/scale-out/*.yaml: validated against Kubernetes' schemas (offline), and the pods' commands run here.
"""

from __future__ import annotations

import ctypes
import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner
from support.demo_runs import demo_ids, normalised_items
from support.paths import REPO, TESTS

from agenthop.runner import run_items
from agenthop.runner.cli import main as runner_main
from agenthop.runner.engine_shard import EngineShardError, shard_from_environment
from agenthop.runner.sharding import Shard
from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.gold import Gold
from agenthop.scorer.runs import load_run
from agenthop.scorer.summary import score_run

ENGINE_VARIABLES = (
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_JOB_ID",
    "JOB_COMPLETION_INDEX",
    "AGENTHOP_SHARD_COUNT",
)


@pytest.fixture(autouse=True)
def no_engine(monkeypatch):
    """Whatever engine runs the test suite, its variables are not the test's."""
    for name in ENGINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def slurm(task: int, low: int, high: int, step: int | None = None, count: int | None = None) -> dict[str, str]:
    """The variables Slurm sets in task ``task`` of ``sbatch --array=low-high[:step]``. As Slurm 22.05 sets them
    (seen on the cluster below): ``--array=5-9:2`` gives MIN 5, MAX 9, STEP 2, COUNT 3; ``--array=1,4,9`` gives
    MIN 1, MAX 9, STEP 1, COUNT 3; ``--array=0-3%2`` gives COUNT 4; a job that is no array has only SLURM_JOB_ID."""
    n = count if count is not None else (high - low) // (step or 1) + 1
    env = {
        "SLURM_JOB_ID": str(4000 + task),
        "SLURM_ARRAY_JOB_ID": "4000",
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_COUNT": str(n),
        "SLURM_ARRAY_TASK_MIN": str(low),
        "SLURM_ARRAY_TASK_MAX": str(high),
    }
    if step is not None:
        env["SLURM_ARRAY_TASK_STEP"] = str(step)
    return env


@pytest.mark.parametrize(
    "low, high, step", [(1, 4, None), (0, 3, None), (0, 3, 1), (10, 13, None), (5, 11, 2), (1, 1, None), (0, 0, None)]
)
def test_slurm_array_tasks_run_every_shard_once(low, high, step):
    indices = range(low, high + 1, step or 1)
    shards = [shard_from_environment(slurm(task, low, high, step)) for task in indices]
    assert [s.shard for s in shards] == [Shard(k, len(indices)) for k in range(1, len(indices) + 1)]
    assert {s.engine for s in shards} == {"slurm"}
    assert shards[0].dir_name == f"shard-1-of-{len(indices)}"
    # Slurm sets the count itself: a count given as well must agree.
    assert shard_from_environment(slurm(high, low, high, step), count=len(indices)).shard.index == len(indices)


def test_kubernetes_indexed_job_pods_run_every_shard_once():
    pods = [shard_from_environment({"JOB_COMPLETION_INDEX": str(i), "AGENTHOP_SHARD_COUNT": "3"}) for i in range(3)]
    assert [p.shard for p in pods] == [Shard(1, 3), Shard(2, 3), Shard(3, 3)] and pods[0].engine == "kubernetes"
    # The count may be given instead of the variable, or as well when they agree.
    assert shard_from_environment({"JOB_COMPLETION_INDEX": "2"}, count=4).shard == Shard(3, 4)
    assert shard_from_environment({"JOB_COMPLETION_INDEX": "0", "AGENTHOP_SHARD_COUNT": "2"}, count=2).shard == Shard(
        1, 2
    )


def without(env: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != name}


@pytest.mark.parametrize(
    "env, count, names",
    [
        # Slurm: each variable missing, not a number, or not consistent with the others
        (without(slurm(2, 1, 3), "SLURM_ARRAY_TASK_COUNT"), None, ["SLURM_ARRAY_TASK_COUNT is not set", "--array=1-N"]),
        (without(slurm(2, 1, 3), "SLURM_ARRAY_TASK_MIN"), None, ["SLURM_ARRAY_TASK_MIN is not set"]),
        ({**slurm(2, 1, 3), "SLURM_ARRAY_TASK_ID": "two"}, None, ["SLURM_ARRAY_TASK_ID='two' is not a whole number"]),
        ({**slurm(2, 1, 3), "SLURM_ARRAY_TASK_COUNT": "0"}, None, ["SLURM_ARRAY_TASK_COUNT=0 is below 1"]),
        (slurm(4, 1, 3), None, ["SLURM_ARRAY_TASK_ID=4 is not an index of the array 1-3"]),
        (slurm(6, 5, 11, 2), None, ["SLURM_ARRAY_TASK_ID=6 is not an index of the array 5-11:2"]),
        (
            slurm(4, 1, 9, step=1, count=3),
            None,
            ["not a regular range", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MAX=9", "--array=1-3"],
        ),  # --array=1,4,9
        (
            {**slurm(2, 1, 3), "SLURM_ARRAY_TASK_MAX": "0"},
            None,
            ["SLURM_ARRAY_TASK_MAX=0 is below SLURM_ARRAY_TASK_MIN=1"],
        ),
        (slurm(2, 1, 3), 4, ["gives 3 shards, but 4 were asked for", "whole array"]),
        ({"SLURM_JOB_ID": "77"}, None, ["not a job array", "SLURM_ARRAY_TASK_ID is not set", "sbatch --array=1-N"]),
        (
            slurm(3, 3, 3),
            None,
            ["SLURM_ARRAY_TASK_ID=3 is the only task of its array", "whole array", "as K/N"],
        ),  # sbatch --array=3
        (slurm(3, 3, 3), 4, ["SLURM_ARRAY_TASK_ID=3 is the only task of its array"]),
        # Kubernetes
        ({"JOB_COMPLETION_INDEX": "1"}, None, ["JOB_COMPLETION_INDEX=1", "AGENTHOP_SHARD_COUNT", "spec.completions"]),
        (
            {"JOB_COMPLETION_INDEX": "3", "AGENTHOP_SHARD_COUNT": "3"},
            None,
            ["JOB_COMPLETION_INDEX=3 is not below the number of shards, 3"],
        ),
        ({"JOB_COMPLETION_INDEX": "-1", "AGENTHOP_SHARD_COUNT": "3"}, None, ["JOB_COMPLETION_INDEX=-1 is below 0"]),
        (
            {"JOB_COMPLETION_INDEX": "0", "AGENTHOP_SHARD_COUNT": "three"},
            None,
            ["AGENTHOP_SHARD_COUNT='three' is not a whole number"],
        ),
        (
            {"JOB_COMPLETION_INDEX": "0", "AGENTHOP_SHARD_COUNT": "3"},
            2,
            ["AGENTHOP_SHARD_COUNT=3 but 2 shards were asked for"],
        ),
        # neither, or both
        ({}, None, ["neither SLURM_ARRAY_TASK_ID", "nor JOB_COMPLETION_INDEX"]),
        (
            {**slurm(1, 1, 2), "JOB_COMPLETION_INDEX": "0"},
            None,
            ["both SLURM_ARRAY_TASK_ID (Slurm) and JOB_COMPLETION_INDEX"],
        ),
    ],
)
def test_a_missing_or_inconsistent_variable_is_named(env, count, names):
    with pytest.raises(EngineShardError) as info:
        shard_from_environment(env, count)
    for words in names:
        assert words in str(info.value), str(info.value)
    assert info.value.needs_count == (names[0] == "JOB_COMPLETION_INDEX=1")


def invoke_runner(args: list[str], env: dict[str, str]):
    return CliRunner().invoke(runner_main, args, env=env)


def test_cli_shard_auto_errors_name_the_variable_and_the_flag(demo, tmp_path):
    corpus, split = demo
    base = [
        "--items",
        str(split),
        "--agent",
        "baseline",
        "--corpus",
        str(corpus),
        "--out",
        str(tmp_path / "run"),
        "--shard",
        "auto",
    ]
    result = invoke_runner(base, {"JOB_COMPLETION_INDEX": "0"})
    assert result.exit_code == 2 and "Invalid value for '--shard'" in result.output
    assert "AGENTHOP_SHARD_COUNT" in result.output and "(--shard-count N)" in result.output
    result = invoke_runner(base, {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"})
    assert (
        result.exit_code == 2
        and "SLURM_ARRAY_TASK_MIN is not set" in result.output
        and "(--shard K/N)" in result.output
    )
    result = invoke_runner(base[:-2] + ["--shard", "1/2", "--shard-count", "2"], {})
    assert result.exit_code == 2 and "--shard-count goes with --shard auto" in result.output
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_a_kubernetes_pod_writes_its_shard_into_the_run_folder(demo, tmp_path):
    corpus, split = demo
    args = [
        "--items",
        str(split),
        "--limit",
        "4",
        "--agent",
        "baseline",
        "--corpus",
        str(corpus),
        "--out",
        str(tmp_path / "qwen"),
        "--shard",
        "auto",
        "--shard-count",
        "2",
        "--no-progress",
    ]
    result = invoke_runner(args, {"JOB_COMPLETION_INDEX": "1"})
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "qwen" / "shard-2-of-2" / "run.json").read_text())
    assert manifest["run"] == "qwen" and manifest["shard"]["index"] == 2 and manifest["shard"]["count"] == 2


@pytest.mark.slow
def test_three_slurm_tasks_in_one_folder_score_like_one_process(demo, tmp_path):
    """``sbatch --array=1-3``: three processes, each with its task's variables and the same command, write
    runs/<name>/shard-K-of-3; the scorer, given the folder, scores what a single process scores, item for item."""
    corpus, split = demo
    n = 9
    command = [
        sys.executable,
        "-m",
        "agenthop.runner.cli",
        "--items",
        str(split),
        "--limit",
        str(n),
        "--agent",
        "baseline",
        "--corpus",
        str(corpus),
        "--shard",
        "auto",
        "--workers",
        "2",
        "--no-progress",
    ]
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARIABLES}
    tasks = [
        subprocess.Popen(
            command,
            cwd=tmp_path,
            env={**env, **slurm(task, 1, 3)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for task in (1, 2, 3)
    ]
    try:
        for task in tasks:
            _, err = task.communicate(timeout=180)
            assert task.returncode == 0, err[-3000:]
    finally:  # a task that failed or hung takes none of the others' processes past the test
        for task in tasks:
            task.kill()
            task.wait()
    folder = tmp_path / "runs" / "baseline-baseline"  # the default name: the same on every task
    assert sorted(d.name for d in folder.iterdir()) == ["shard-1-of-3", "shard-2-of-3", "shard-3-of-3"]
    labels = {json.loads((d / "run.json").read_text())["run"] for d in folder.iterdir()}
    assert labels == {"baseline-baseline"}

    whole = run_items(
        demo_ids(split, n), agent="baseline", corpus=corpus, out=tmp_path / "whole", workers=2, progress=False
    )
    result = CliRunner().invoke(scorer_main, [str(folder), "--corpus", str(corpus), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    merged = json.loads((tmp_path / "report" / "summary.json").read_text())
    gold = Gold(str(corpus))
    try:
        reference = score_run(load_run(whole.out), gold)
    finally:
        gold.close()
    assert merged["items"]["n"] == n and normalised_items(merged) == normalised_items(reference)
    assert merged["headline"] == reference["headline"]


# --- the Slurm batch script (docs/scale-out/agenthop.sbatch) -------------------------------------------

SBATCH = REPO / "docs" / "scale-out" / "agenthop.sbatch"


def free_ports(n: int) -> list[int]:
    """n distinct ports the OS has free now (the sockets are held together, so it cannot hand one out twice)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def slurm_command(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """A Slurm client command, bounded: a controller too busy to answer fails the command, never hangs the test."""
    try:
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(args, -1, "", f"{args[0]} did not answer within {exc.timeout} s")


def die_with_parent() -> None:
    """In the child before exec: the kernel sends it SIGTERM if pytest dies, even by SIGKILL (no daemon outlives it)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def poll(check, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f} s"
        time.sleep(0.1)  # polling interval
    return result


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A Slurm cluster of our own, from Debian's slurmctld and slurmd (``make slurm`` installs them), on free ports:

    - partition ``local``: this machine as a real node, which runs jobs (one CPU, shared by up to 8 jobs);
    - partition ``gpu`` (the default): a cloud node the size of a GPU node that no slurmd serves, so that
      ``sbatch --test-only`` judges the script's own requests (4 CPUs, 32 GB, a GPU) without running anything.
    """
    for daemon in ("slurmctld", "slurmd", "sbatch"):
        assert shutil.which(daemon) or Path("/usr/sbin", daemon).exists(), (
            "Slurm is not installed: 'make slurm' installs Debian's slurmctld, slurmd and slurm-client"
        )
    d = tmp_path_factory.mktemp("slurm")
    (d / "state").mkdir()
    (d / "spool").mkdir()
    host = socket.gethostname().split(".")[0]
    conf = d / "slurm.conf"
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARIABLES} | {"SLURM_CONF": str(conf)}
    log_files = (d / "slurmctld.log", d / "slurmd.log")

    def write_conf(ctld_port: int, slurmd_port: int) -> None:
        conf.write_text(
            "\n".join(
                [
                    "ClusterName=agenthoptest",
                    f"SlurmctldHost={host}(127.0.0.1)",
                    f"SlurmctldPort={ctld_port}",
                    f"SlurmdPort={slurmd_port}",
                    f"SlurmUser={getpass.getuser()}",
                    "AuthType=auth/none",
                    "CredType=cred/none",
                    f"StateSaveLocation={d / 'state'}",
                    f"SlurmdSpoolDir={d / 'spool'}",
                    f"SlurmctldPidFile={d / 'slurmctld.pid'}",
                    f"SlurmdPidFile={d / 'slurmd.pid'}",
                    f"SlurmctldLogFile={log_files[0]}",
                    f"SlurmdLogFile={log_files[1]}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "GresTypes=gpu",
                    "SuspendProgram=/bin/true",
                    "ResumeProgram=/bin/true",
                    "SuspendTime=600",
                    f"NodeName={host} NodeAddr=127.0.0.1 CPUs=1 RealMemory=1000 State=UNKNOWN",
                    "NodeName=gpunode CPUs=64 RealMemory=512000 Gres=gpu:8 State=CLOUD",
                    "PartitionName=gpu Nodes=gpunode Default=YES MaxTime=INFINITE State=UP",
                    f"PartitionName=local Nodes={host} MaxTime=INFINITE State=UP OverSubscribe=FORCE:8",
                    "",
                ]
            )
        )

    def logs() -> str:
        return "\n".join(p.read_text()[-1500:] for p in log_files if p.exists())

    def stop(daemons: list[subprocess.Popen]) -> None:
        for p in daemons:
            p.terminate()
        for p in daemons:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    daemons: list[subprocess.Popen] = []

    def node_idle() -> bool:  # the daemons of the current attempt
        assert all(p.poll() is None for p in daemons), logs()
        return slurm_command(["sinfo", "-h", "-p", "local", "-o", "%t"], env).stdout.strip() == "idle"

    try:
        # A port chosen free may be taken by another process before the daemon binds it: then start again on others.
        for attempt in range(3):
            write_conf(*free_ports(2))
            for log in log_files:
                log.unlink(missing_ok=True)  # this attempt's logs only, for the check below
            # slurmd is told its node's name (-N) rather than left to derive it from the host name as the config does.
            daemons = [
                subprocess.Popen(
                    [shutil.which(name) or f"/usr/sbin/{name}", "-D", *extra, "-f", str(conf)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=die_with_parent,
                )
                for name, extra in (("slurmctld", ["-i"]), ("slurmd", ["-N", host]))
            ]
            try:
                poll(node_idle, "the local node did not come up idle")
                break
            except AssertionError:
                if attempt == 2 or "Address already in use" not in logs():
                    raise
                stop(daemons)
        yield env
    finally:
        # Jobs a failed test left are cancelled, and their processes ended by slurmd, before the daemons stop.
        slurm_command(["scancel", "--full", "--partition=local"], env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and slurm_command(["squeue", "-h", "-p", "local"], env).stdout.strip():
            time.sleep(0.2)  # polling interval; bounded, and a failed test's own error stays the one reported
        stop(daemons)


def test_the_sbatch_script_is_accepted_by_a_slurm_controller(slurm_cluster, tmp_path):
    assert subprocess.run(["bash", "-n", str(SBATCH)]).returncode == 0
    for array in ([], ["--array=1-8"], ["--array=0-3"]):
        done = subprocess.run(
            ["sbatch", "--test-only", *array, str(SBATCH)],
            env=slurm_cluster,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == 0 and "to start at" in done.stderr, done.stderr
    # The controller judges the directives: a request no node can meet, or an option sbatch does not know, is refused.
    for bad in ("#SBATCH --cpus-per-task=4096", "#SBATCH --no-such-option"):
        script = tmp_path / "bad.sbatch"
        script.write_text(SBATCH.read_text().replace("#SBATCH --cpus-per-task=4", bad))
        done = subprocess.run(
            ["sbatch", "--test-only", str(script)], env=slurm_cluster, capture_output=True, text=True, timeout=60
        )
        assert done.returncode != 0, done.stderr


@pytest.mark.slow
def test_the_sbatch_script_runs_as_a_slurm_array_into_one_folder(slurm_cluster, demo, tmp_path):
    """``sbatch --array=1-3`` of the script on the real node: Slurm sets each task's variables and runs its two
    steps with srun; a stub ``vllm`` serves a loopback model on the task's port. Each task waits for its replica,
    runs its shard into the one folder, and the folder scores as one run."""
    corpus, split = demo
    n = 6
    items = tmp_path / "items.jsonl"
    items.write_text("".join(split.read_text().splitlines(keepends=True)[:n]))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vllm").write_text(f'#!/bin/bash\nexec "{sys.executable}" "{TESTS / "support" / "stub_vllm.py"}" "$@"\n')
    (bin_dir / "vllm").chmod(0o755)
    script = tmp_path / "agenthop.sbatch"  # this node has no GPU to give
    script.write_text(SBATCH.read_text().replace("#SBATCH --gres=gpu:1\n", ""))
    env = slurm_cluster | {
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:{slurm_cluster['PATH']}",
        "PYTHONPATH": str(TESTS),
        "RUN_NAME": "stubbed",
        "ITEMS": str(items),
        "CORPUS": str(corpus),
        "MODEL": "stub-model",
        "WORKERS": "2",
        "PROCESSES": "1",
        "READY_POLL_SECONDS": "0.2",
    }
    # --time: Slurm itself ends a task that hangs (waiting for a replica that never answers, say) after 5 minutes.
    submitted = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--array=1-3",
            "--partition=local",
            "--cpus-per-task=1",
            "--mem=200M",
            "--time=5",
            str(script),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip().split(";")[0]

    def finished() -> bool:
        queued = slurm_command(["squeue", "-h", "-j", job], env)
        return queued.returncode == 0 and not queued.stdout.strip()  # a controller that did not answer says nothing

    poll(finished, "the array did not finish", timeout=300)
    logs = "\n".join(p.read_text()[-2000:] for p in sorted(tmp_path.glob("agenthop-*.log")))
    for task in (1, 2, 3):
        state = slurm_command(["scontrol", "show", "job", f"{job}_{task}"], env).stdout
        assert "JobState=COMPLETED" in state and "ExitCode=0:0" in state, state + logs
    folder = tmp_path / "runs" / "stubbed"
    assert sorted(d.name for d in folder.iterdir()) == ["shard-1-of-3", "shard-2-of-3", "shard-3-of-3"], logs
    result = CliRunner().invoke(scorer_main, [str(folder), "--corpus", str(corpus), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["run"]["name"] == "stubbed" and summary["items"]["n"] == n
    assert {r["termination"] for r in summary["item_results"]} == {"answer"}


# --- the Kubernetes manifests (docs/scale-out/*.yaml) ----------------------------------------------------

K8S_DIR = SBATCH.parent
K8S_VERSIONS = ("1.29", "1.33", "1.37")  # backoffLimitPerIndex needs 1.29; the validator ships schemas up to 1.37


def manifests(name: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all((K8S_DIR / name).read_text()) if doc]


@pytest.mark.parametrize("name", ["job.yaml", "volumes.yaml", "score.yaml"])
def test_the_kubernetes_manifests_validate_against_the_schemas(name):
    docs = manifests(name)
    assert docs
    for doc in docs:
        for version in K8S_VERSIONS:  # strict: a misspelt or misplaced field is an error, not ignored
            kubernetes_validate.validate(doc, version, strict=True)
    # The validator can fail: the same documents with a field in the wrong place, or of the wrong type, do not pass.
    broken = json.loads(json.dumps(docs[0]))
    broken["spec"]["replicas"] = 4
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)
    broken = json.loads(json.dumps(docs[0]))
    broken["metadata"]["name"] = ["not", "a", "name"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)


def pod(job: dict) -> tuple[dict, dict]:
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    return spec, container


def test_the_indexed_job_is_what_the_docs_say(demo):
    (job,) = manifests("job.yaml")
    (score,) = manifests("score.yaml")
    claims = {doc["metadata"]["name"]: doc for doc in manifests("volumes.yaml")}
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    spec, container = pod(job)
    env = {e["name"]: e for e in container["env"]}
    assert env["AGENTHOP_SHARD_COUNT"]["value"] == str(job["spec"]["completions"])  # the count the pods are told
    assert env["OPENAI_API_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "agenthop-model",
        "key": "api-key",
    }  # from a Secret
    assert "value" not in env["OPENAI_API_KEY"]
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v["persistentVolumeClaim"] for v in spec["volumes"]}
    assert mounts["data"]["readOnly"] is True and volumes["data"]["readOnly"] is True  # the corpus, read-only
    assert not mounts["runs"].get("readOnly") and {v["claimName"] for v in volumes.values()} == set(claims)
    args = dict(a[2:].split("=", 1) for a in container["args"] if "=" in a)
    assert args["shard"] == "auto" and "server" not in args  # the sandbox server runs inside the pod
    assert args["corpus"].startswith(mounts["data"]["mountPath"] + "/") and args["items"].startswith(
        mounts["data"]["mountPath"] + "/"
    )
    assert args["out"].startswith(mounts["runs"]["mountPath"] + "/")
    _, scorer = pod(score)
    assert scorer["args"][0] == args["out"]  # the scoring step reads the run folder the pods write


@pytest.mark.slow
def test_the_indexed_job_pods_run_and_score_as_the_manifests_say(demo, tmp_path):
    """Each pod's command and environment from job.yaml, run here with the volumes as folders and a loopback
    model in place of the API; then score.yaml's command over the run folder."""
    from support.fake_openai import FakeOpenAI, seed_id, tool_calls, turn_index

    corpus, split = demo
    (job,) = manifests("job.yaml")
    (score,) = manifests("score.yaml")
    _, container = pod(job)
    data, runs = tmp_path / "data", tmp_path / "runs"
    (data / "qa").mkdir(parents=True)
    runs.mkdir()
    n = 2 * job["spec"]["completions"]
    (data / "qa" / "full.jsonl").write_text("".join(split.read_text().splitlines(keepends=True)[:n]))
    (data / "corpus.sqlite").symlink_to(corpus)

    def on_host(arg: str) -> str:
        """The argument with the pod's mount points replaced by the folders that stand for the volumes."""
        flag, eq, value = arg.rpartition("=") if arg.startswith("--") else ("", "", arg)
        for mount, folder in (("/data/", data), ("/runs/", runs)):
            if value.startswith(mount):
                value = f"{folder}/{value[len(mount) :]}"
        return flag + eq + value

    def model(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}))
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "r"}))

    env = {e["name"]: e.get("value", "secret-from-the-secret") for e in container["env"]}
    with FakeOpenAI(model) as fake:
        for index in range(job["spec"]["completions"]):
            assert container["command"] == ["agenthop-runner"]
            result = CliRunner().invoke(
                runner_main,
                [on_host(a) for a in container["args"]],
                env=env | {"JOB_COMPLETION_INDEX": str(index), "OPENAI_BASE_URL": fake.base_url},
            )
            assert result.exit_code == 0, result.output
    assert {b["model"] for b in fake.requests} == {"gpt-4.1-mini"}
    _, scorer = pod(score)
    assert scorer["command"] == ["agenthop-scorer"]
    result = CliRunner().invoke(scorer_main, [on_host(a) for a in scorer["args"]])
    assert result.exit_code == 0, result.output
    summary = json.loads((runs / "reports" / "gpt41mini" / "summary.json").read_text())
    assert summary["run"]["name"] == "gpt41mini" and summary["items"]["n"] == n
    assert {r["termination"] for r in summary["item_results"]} == {"answer"}
