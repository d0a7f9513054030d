"""Answer a construction batch file by hand (a person, or an agent standing in for a model), checked as the run checks.

A run with ``--batch`` writes its model requests to ``OUT/work/batch/STAGE-NN.jsonl``. This tool splits such a file
among several answerers, shows one request at a time, checks each reply with the pipeline's own rules before keeping
it (so no retry round is needed), and packs the kept replies into the Batch API's output format for
``--batch-output``. It adds no rule of its own: the run checks every reply again when it reads the output.

    python tools/answer_batch.py split RUN/work/batch/qa-01.jsonl --parts 7 --out parts/
    python tools/answer_batch.py split RUN/work/batch/distractors-01.jsonl --parts 9 --by-kind --out parts/
    python tools/answer_batch.py list parts/qa-01.part3.jsonl
    python tools/answer_batch.py show parts/qa-01.part3.jsonl --id qa-c-0123456789ab-a1   # or --next 5
    python tools/answer_batch.py answer RUN --corpus CORPUS parts/qa-01.part3.jsonl qa-c-0123456789ab-a1 --reply-file reply.json
    python tools/answer_batch.py answer RUN --corpus CORPUS parts/qa-01.part3.jsonl --replies-file replies.jsonl
    python tools/answer_batch.py pack parts/qa-01.part*.jsonl --out qa-01.out.jsonl

Replies are kept beside each part (``PART.replies.jsonl``: one ``{"custom_id", "reply"}`` line each, a later line for
the same request replacing an earlier one), so an answerer who stops can go on where they left off.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.option_checks import (
    grounded_texts,
    validate_grounded,
    validate_informed,
    validate_option,
    validate_restated,
    wrong_kinds,
)
from agenthop.construct.prompts import BadReply, parse_json
from agenthop.construct.qa import validate_qa
from agenthop.construct.settings import Settings


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def replies_path(part: Path) -> Path:
    return part.with_name(part.name.removesuffix(".jsonl") + ".replies.jsonl")


def kept_replies(part: Path) -> dict[str, str]:
    path = replies_path(part)
    return {r["custom_id"]: r["reply"] for r in _lines(path)} if path.exists() else {}


def split(batch: Path, parts: int, out: Path, by_kind: bool = False) -> None:
    """Deal the requests round-robin by candidate, so each part holds every request of the candidates it has; or,
    ``by_kind``, by the request's kind (its source: ``seed_only``, ``shortcut``, ...) first, so that no part holds
    two kinds of request about one candidate and no answerer sees what another source gave for the same question.
    """
    rows = _lines(batch)
    out.mkdir(parents=True, exist_ok=True)
    rank = {c: i for i, c in enumerate(sorted({_candidate(r["custom_id"]) for r in rows}))}
    if by_kind:
        kinds = sorted({_kind(r["custom_id"]) for r in rows})
        if parts % len(kinds):
            sys.exit(f"error: --by-kind needs a number of parts that {len(kinds)} kinds divide ({', '.join(kinds)})")
        per_kind = parts // len(kinds)

        def place(cid: str) -> int:
            return kinds.index(_kind(cid)) * per_kind + rank[_candidate(cid)] % per_kind
    else:

        def place(cid: str) -> int:
            return rank[_candidate(cid)] % parts

    for k in range(parts):
        mine = [r for r in rows if place(r["custom_id"]) == k]
        _write(out / f"{batch.stem}.part{k + 1}.jsonl", mine)
        print(f"{out / f'{batch.stem}.part{k + 1}.jsonl'}: {len(mine)} requests")


def _candidate(cid: str) -> str:
    """The candidate a request is about (``c-0123456789ab``), from its custom_id."""
    return cid.split("-c-", 1)[1].split("-")[0] if "-c-" in cid else cid


def _kind(cid: str) -> str:
    """The request's kind within its stage: what follows the candidate in its custom_id (``seed_only``,
    ``shortcut-MODEL``), or the stage alone."""
    rest = cid.split("-c-", 1)[1].split("-", 1)[1] if "-c-" in cid else ""
    kind = rest.rsplit("-", 1)[0] if "-" in rest else ""
    return kind.split("-", 1)[0] if kind else cid.split("-", 1)[0]


def show(part: Path, cid: str | None, following: int = 0) -> None:
    """List the part's requests (no ``cid``), or print one request's messages, or the next ``following`` open ones."""
    rows = _lines(part)
    done = kept_replies(part)
    if following:
        chosen = [r for r in rows if r["custom_id"] not in done][:following]
    elif cid is None:
        for r in rows:
            print(f"{r['custom_id']}\t{'answered' if r['custom_id'] in done else 'open'}")
        return
    else:
        chosen = [r for r in rows if r["custom_id"] == cid]
        if not chosen:
            sys.exit(f"error: {cid} is not in {part}")
    for row in chosen:
        print(f"################ REQUEST {row['custom_id']} ################")
        for message in row["body"]["messages"]:
            print(f"===== {message['role']} =====\n{message['content']}\n")


def _check(run: Path, view: CorpusView, cid: str, reply: str, done: dict[str, str], body: dict) -> None:
    """Raise BadReply if the run would not accept ``reply`` for ``cid`` (the pipeline's checks)."""
    stage, cand_id = cid.split("-", 1)[0], "c-" + _candidate(cid)
    if stage == "distractors" and _kind(cid) == "restate":  # the options to restate are the request's own
        asked = next(m["content"] for m in body["messages"] if m["role"] == "user")  # a retry adds more after it
        options = re.findall(r"^\(([ABCD])\) (.+)$", asked, re.M)
        validate_restated(reply, [text for _, text in options], Settings().too_close)
    elif stage == "qa":
        chain = next(json.loads(line) for line in (run / "work" / "chains.jsonl").open() if f'"{cand_id}"' in line)
        validate_qa(view, chain, reply)
    elif stage == "distractors" and _kind(cid) == "grounded":  # sources: the request's papers, in order
        cand = next(json.loads(line) for line in (run / "work" / "qa.jsonl").open() if f'"{cand_id}"' in line)
        asked = next(m["content"] for m in body["messages"] if m["role"] == "user")
        ids = re.findall(r'<paper id="([^"]+)">', asked)
        texts = grounded_texts(view, ids[0], ids[1], ids[2:])
        validate_grounded(reply, cand["answer"], cand.get("evidence") or [], texts, Settings().too_close)
    elif stage == "distractors" and _kind(cid) == "informed":  # the writer was shown the gold
        cand = next(json.loads(line) for line in (run / "work" / "qa.jsonl").open() if f'"{cand_id}"' in line)
        validate_informed(reply, wrong_kinds(Settings().same_paper), cand["answer"], Settings().too_close)
    elif stage == "distractors":
        cand = next(json.loads(line) for line in (run / "work" / "qa.jsonl").open() if f'"{cand_id}"' in line)
        others = [
            parse_json(r).get("answer", "") for c, r in done.items() if c != cid and _candidate(c) == _candidate(cid)
        ]
        try:
            validate_option(reply, cand["answer"], [cand["answer"], *others], Settings().too_close)
        except BadReply as exc:
            if exc.reason == "distractor_too_close":  # the run names the option; a stand-in must not see the gold
                raise BadReply(
                    "that answer is nearly the same as another option of this item; give a different one"
                ) from None
            raise
    else:
        parse_json(reply)


def answer(run: Path, corpus: Path, part: Path, replies: list[tuple[str, str]], give_up: bool = False) -> int:
    """Check each (custom_id, reply) in turn and keep those that pass; 1 if any did not."""
    requests = {r["custom_id"]: r["body"] for r in _lines(part)}
    asked = set(requests)
    done = kept_replies(part)
    view = CorpusView(corpus)
    failed = 0
    for cid, reply in replies:
        if cid not in asked:
            print(f"NOT KEPT: {cid} is not in {part}")
            failed += 1
            continue
        try:
            _check(run, view, cid, reply, done, requests[cid])
        except BadReply as exc:
            print(f"NOT KEPT {cid} ({exc.reason}): {exc}" + ("; kept anyway (--give-up)" if give_up else ""))
            if not give_up:
                failed += 1
                continue
        done[cid] = reply
        print(f"kept: {cid}")
    _write(replies_path(part), [{"custom_id": c, "reply": r} for c, r in sorted(done.items())])
    print(f"{len(done)} of {len(asked)} answered in this part")
    return 1 if failed else 0


def _replies_from(args) -> list[tuple[str, str]]:
    if args.replies_file:  # JSON lines {"custom_id": ..., "reply": {the JSON object asked for}}
        rows = _lines(args.replies_file)
        return [(r["custom_id"], r["reply"] if isinstance(r["reply"], str) else json.dumps(r["reply"])) for r in rows]
    if args.id is None:
        sys.exit("error: give the request's custom_id with --reply or --reply-file")
    reply = args.reply if args.reply is not None else args.reply_file.read_text(encoding="utf-8")
    return [(args.id, reply)]


def pack(parts: list[Path], out: Path) -> None:
    """Every kept reply as a line of the Batch API's output format; usage is unknown for a hand answer, so zero."""
    rows = []
    for part in parts:
        bodies = {r["custom_id"]: r["body"] for r in _lines(part)}
        for cid, reply in sorted(kept_replies(part).items()):
            rid = hashlib.sha256(cid.encode()).hexdigest()[:24]
            rows.append(
                {
                    "id": f"batch_req_{rid}",
                    "custom_id": cid,
                    "response": {
                        "status_code": 200,
                        "request_id": rid,
                        "body": {
                            "id": f"chatcmpl-{rid}",
                            "object": "chat.completion",
                            "model": bodies[cid]["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": reply},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                        },
                    },
                    "error": None,
                }
            )
    _write(out, rows)
    print(f"{out}: {len(rows)} answers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("split", help="deal a batch file's requests into parts")
    p.add_argument("batch", type=Path)
    p.add_argument("--parts", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--by-kind", action="store_true", help="no part holds two kinds of request about one candidate")
    p = sub.add_parser("list", help="the requests of a part, open or answered")
    p.add_argument("part", type=Path)
    p = sub.add_parser("show", help="one request's messages, or the next open ones")
    p.add_argument("part", type=Path)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--id")
    which.add_argument("--next", type=int, help="the next N requests not yet answered")
    p = sub.add_parser("answer", help="check a reply as the run would, and keep it if it passes")
    p.add_argument("run", type=Path, help="the run's --out folder")
    p.add_argument("--corpus", type=Path, required=True, help="the run's --corpus")
    p.add_argument("part", type=Path)
    p.add_argument("id", nargs="?", help="the request's custom_id (not with --replies-file)")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--reply", help="the reply text (the JSON object the request asks for)")
    group.add_argument("--reply-file", type=Path)
    group.add_argument(
        "--replies-file", type=Path, help='JSON lines {"custom_id": ..., "reply": {...}}, several at once'
    )
    p.add_argument(
        "--give-up", action="store_true", help="keep a reply that fails, so the run drops it with the reason"
    )
    p = sub.add_parser("pack", help="kept replies -> a Batch output file for --batch-output")
    p.add_argument("parts", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "split":
        split(args.batch, args.parts, args.out, args.by_kind)
    elif args.command in ("list", "show"):
        show(args.part, getattr(args, "id", None), getattr(args, "next", None) or 0)
    elif args.command == "answer":
        return answer(args.run, args.corpus, args.part, _replies_from(args), args.give_up)
    else:
        pack(args.parts, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
