"""A stand-in for ``vllm serve MODEL --host H --port P ...`` in tests of the job files (docs/scale-out/).

It serves the OpenAI chat-completions wire format on the given host and port, as vLLM does, with a
model that looks at the seed's references once and then answers B. It exits when the job script kills it.
"""

from __future__ import annotations

import argparse
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from support.fake_openai import seed_id, tool_calls, turn_index


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="vllm")
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args(argv)  # the tool-call options vLLM needs mean nothing here

    async def models(request: Request):
        return JSONResponse({"object": "list", "data": [{"id": args.model, "object": "model"}]})

    async def chat(request: Request):
        body = await request.json()
        if turn_index(body) == 0:
            return JSONResponse(tool_calls(("get_references", {"paper_id": seed_id(body)})))
        return JSONResponse(tool_calls(("submit_answer", {"answer": "B", "reasoning": "stub"})))

    app = Starlette(routes=[Route("/v1/models", models), Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main(sys.argv[1:])
