"""A study run end to end without a browser: a study file, participants enrolling and answering through the play API,
and the offline baseline on the items they played (for the scorer's people-beside-models tests)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
from click.testing import CliRunner

from agenthop.runner.cli import main as runner_main
from agenthop.server.play.routes import PlayOptions, check_participant
from agenthop.server.play.study import load_study
from agenthop.server.transport.http import ServerThread

CONSENT = "I agree that every action I take on this page is logged for the study."


def write_study(directory: Path, split: Path, *, participants=("p01", "p02", "p03"), per=2, limit=None) -> Path:
    lines = [
        'id = "pilot"',
        'title = "Pilot: people beside models"',
        'code = "heron-42"',
        f"items = {json.dumps(str(split))}",
        f"items_per_participant = {per}",
        "seed = 7",
        'instructions = """Find the evidence for the question in the papers, then choose an option.\n\nWork alone."""',
        f"consent = {json.dumps(CONSENT)}",
        f"participants = {json.dumps(list(participants))}",
    ]
    if limit is not None:
        lines.append(f"time_limit_s = {limit}")
    path = directory / "study.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_study_over_http(
    corpus: Path, log: Path, study_path: Path, answers=("A", "B", "C"), run: str | None = None
) -> dict[str, list[str]]:
    """Each participant enrols and plays their items, reading the seed paper once and answering; returns their items."""
    study = load_study(study_path, check_participant=check_participant)
    played: dict[str, list[str]] = {}
    with ServerThread(str(corpus), str(log), play=PlayOptions(study=study, run=run)) as server:
        for n, name in enumerate(study.participants):
            with httpx2.Client(base_url=server.base_url) as http:
                enrolled = http.post(
                    "/play/api/study/enrol", json={"participant": name, "code": study.code, "consent": True}
                )
                assert enrolled.status_code == 200, enrolled.text
                while True:
                    started = http.post("/play/api/sessions", json={"participant": name})
                    if started.status_code == 409:
                        break
                    state = started.json()
                    sid = state["session_id"]
                    call = f"/play/api/sessions/{sid}/call"
                    http.post(
                        call, json={"tool": "get_references", "arguments": {"paper_id": state["seed"]["paper_id"]}}
                    )
                    http.post(
                        call, json={"tool": "submit_answer", "arguments": {"answer": answers[n % 3], "reasoning": "r"}}
                    )
                    played.setdefault(name, []).append(state["item_id"])
    return played


def baseline_run(corpus: Path, items: list[str], out: Path) -> Path:
    items_file = out.parent / f"{out.name}-items.jsonl"
    items_file.write_text("".join(json.dumps({"id": i}) + "\n" for i in items))
    result = CliRunner().invoke(
        runner_main,
        [
            "--items",
            str(items_file),
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return out
