"""The shard a cluster engine gives this task: Slurm job arrays and Kubernetes Indexed Jobs.

Each task of a Slurm job array, or each pod of a Kubernetes Indexed Job, runs the same command; the
engine tells it which task it is through environment variables. ``shard_from_environment`` turns them
into a ``Shard`` (1-based index, count), so N tasks run the N shards of one run with no per-task
arguments:

- Slurm (``sbatch --array=MIN-MAX[:STEP]``): ``SLURM_ARRAY_TASK_ID`` is the task's array index and
  ``SLURM_ARRAY_TASK_COUNT`` the number of tasks. The array may start anywhere
  (``SLURM_ARRAY_TASK_MIN``) and step by more than one (``SLURM_ARRAY_TASK_STEP``): shard K is the
  K-th index of the range. An array whose indices are not a regular range (``--array=1,4,9``) cannot
  be mapped to shards and is refused, as is a one-task array above index 1 (``--array=3``: one task of a
  larger array submitted again, whose count Slurm does not give). Slurm sets the count itself; a count
  given as well must agree.
- Kubernetes (``completionMode: Indexed``): ``JOB_COMPLETION_INDEX`` is 0-based. Kubernetes does not
  tell the pod how many completions there are, so the count is given, or read from
  ``AGENTHOP_SHARD_COUNT`` (the job manifest sets it to ``spec.completions``).

A variable that is missing, not a number or inconsistent with the others is an error that names it
and says what to do; so is an environment of both engines, or of neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agenthop.runner.sharding import Shard, ShardError

#: Where a Kubernetes pod (or anything else) can give the number of shards.
COUNT_VARIABLE = "AGENTHOP_SHARD_COUNT"
K8S_INDEX = "JOB_COMPLETION_INDEX"
SLURM_TASK_ID = "SLURM_ARRAY_TASK_ID"
SLURM_TASK_COUNT = "SLURM_ARRAY_TASK_COUNT"
SLURM_TASK_MIN = "SLURM_ARRAY_TASK_MIN"
SLURM_TASK_MAX = "SLURM_ARRAY_TASK_MAX"
SLURM_TASK_STEP = "SLURM_ARRAY_TASK_STEP"


class EngineShardError(ShardError):
    """The engine's variables do not give a shard. ``needs_count``: only the number of shards is missing."""

    def __init__(self, message: str, needs_count: bool = False):
        super().__init__(message)
        self.needs_count = needs_count


@dataclass(frozen=True)
class EngineShard:
    """A shard and where it came from (``engine``: "slurm" or "kubernetes"; ``source``: the variables, for messages)."""

    shard: Shard
    engine: str
    source: str

    @property
    def dir_name(self) -> str:
        """The shard's directory inside the run's folder: the same name on every engine."""
        return f"shard-{self.shard.index}-of-{self.shard.count}"


def _int(env: Mapping[str, str], name: str, minimum: int, why: str) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        raise EngineShardError(f"{name} is not set: {why}")
    try:
        value = int(raw.strip())
    except ValueError:
        raise EngineShardError(f"{name}={raw!r} is not a whole number: {why}") from None
    if value < minimum:
        raise EngineShardError(f"{name}={value} is below {minimum}: {why}")
    return value


def _optional_int(env: Mapping[str, str], name: str, minimum: int, why: str) -> int | None:
    return _int(env, name, minimum, why) if (env.get(name) or "").strip() else None


def _check_count(given: int | None, engine_count: int, source: str) -> None:
    if given is not None and given != engine_count:
        raise EngineShardError(
            f"{source} gives {engine_count} shards, but {given} were asked for: give the count the "
            f"engine runs (or none). To run some shards of a run again, submit its whole array "
            f"again (shards already finished find nothing left and end at once), or give the shard as K/N"
        )


def slurm_shard(env: Mapping[str, str], count: int | None = None) -> EngineShard:
    """The shard of a Slurm job-array task (see the module docstring)."""
    array = "Slurm sets it in every task of a job array (sbatch --array=1-N)"
    task = _int(env, SLURM_TASK_ID, 0, array)
    n = _int(env, SLURM_TASK_COUNT, 1, array)
    # The array's first index: arrays may start anywhere, so 0- and 1-based cannot be guessed from the ID alone.
    low = _int(env, SLURM_TASK_MIN, 0, array)
    high = _optional_int(env, SLURM_TASK_MAX, 0, array)
    step = _optional_int(env, SLURM_TASK_STEP, 1, array) or 1
    if high is None:
        high = low + (n - 1) * step
    regular = f"submit the array as a regular range (sbatch --array=1-{n})"
    if high < low:
        raise EngineShardError(f"{SLURM_TASK_MAX}={high} is below {SLURM_TASK_MIN}={low}: {regular}")
    if (high - low) % step or (high - low) // step + 1 != n:
        raise EngineShardError(
            f"the array's indices are not a regular range: {SLURM_TASK_COUNT}={n} tasks do not fill "
            f"{SLURM_TASK_MIN}={low} to {SLURM_TASK_MAX}={high} in steps of {step} (an index list such as "
            f"--array=1,4,9 cannot be mapped to shards): {regular}"
        )
    if not low <= task <= high or (task - low) % step:
        raise EngineShardError(
            f"{SLURM_TASK_ID}={task} is not an index of the array {low}-{high}"
            f"{f':{step}' if step > 1 else ''}: the variables do not come from one array; {regular}"
        )
    if n == 1 and task > 1:
        # sbatch --array=3 (how Slurm users run one failed task again) would otherwise be shard 1 of 1: every item.
        raise EngineShardError(
            f"{SLURM_TASK_ID}={task} is the only task of its array ({SLURM_TASK_COUNT}=1): that is one task of a "
            f"larger array submitted again, and Slurm does not say how many shards the run has. Submit the whole "
            f"array again (shards already finished find nothing left and end at once), or give the shard as K/N"
        )
    source = f"the Slurm job array {low}-{high}{f':{step}' if step > 1 else ''} ({SLURM_TASK_COUNT}={n})"
    _check_count(count, n, source)
    return EngineShard(Shard((task - low) // step + 1, n), "slurm", f"{SLURM_TASK_ID}={task} of {source}")


def kubernetes_shard(env: Mapping[str, str], count: int | None = None) -> EngineShard:
    """The shard of a pod of a Kubernetes Indexed Job (see the module docstring)."""
    index = _int(env, K8S_INDEX, 0, "Kubernetes sets it in every pod of a Job with completionMode: Indexed")
    from_env = _optional_int(env, COUNT_VARIABLE, 1, "it is the number of shards (the Job's spec.completions)")
    if count is not None and from_env is not None and count != from_env:
        raise EngineShardError(f"{COUNT_VARIABLE}={from_env} but {count} shards were asked for: give one count")
    n = count if count is not None else from_env
    if n is None:
        raise EngineShardError(
            f"{K8S_INDEX}={index} says which pod of a Kubernetes Indexed Job this is, but not how many there are: "
            f"set {COUNT_VARIABLE} in the pod to the Job's spec.completions, or give the number of shards",
            needs_count=True,
        )
    if index >= n:
        raise EngineShardError(
            f"{K8S_INDEX}={index} is not below the number of shards, {n}: the count must equal "
            f"the Job's spec.completions (indices 0 to {n - 1})"
        )
    return EngineShard(Shard(index + 1, n), "kubernetes", f"{K8S_INDEX}={index} of {n} completions")


def shard_from_environment(env: Mapping[str, str], count: int | None = None) -> EngineShard:
    """The shard this task runs, from a Slurm job array's or a Kubernetes Indexed Job's variables in ``env``.

    ``count`` is the number of shards when the engine does not say it (Kubernetes); where it does
    (Slurm), a count given must agree. EngineShardError names the variable that is missing or wrong."""
    slurm = bool((env.get(SLURM_TASK_ID) or "").strip())
    k8s = bool((env.get(K8S_INDEX) or "").strip())
    if slurm and k8s:
        raise EngineShardError(
            f"both {SLURM_TASK_ID} (Slurm) and {K8S_INDEX} (Kubernetes) are set, so the shard "
            "is ambiguous: unset the one that does not belong to this task"
        )
    if slurm:
        return slurm_shard(env, count)
    if k8s:
        return kubernetes_shard(env, count)
    if (env.get("SLURM_JOB_ID") or "").strip():
        raise EngineShardError(
            f"this Slurm job is not a job array ({SLURM_TASK_ID} is not set): submit it with "
            "sbatch --array=1-N (one task per shard), or give the shard as K/N"
        )
    raise EngineShardError(
        f"no cluster engine gives a shard here: neither {SLURM_TASK_ID} (a Slurm job array) nor "
        f"{K8S_INDEX} (a Kubernetes Indexed Job) is set. Run inside one of them, or give the shard as K/N"
    )
