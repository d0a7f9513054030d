"""The static toolkit AgentHop's pages share (``static/`` beside this module: base.css, dom.js).

The play page loads the files from ``/static/NAME`` on the server; the trajectory viewer
(agenthop.scorer.view) inlines them so that it opens from ``file://``. The scorer may
import this module; nothing in the server imports the scorer.
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

SHARED = {"base.css": "text/css", "dom.js": "text/javascript"}
PATH = "/static"
HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}


def read_asset(name: str) -> str:
    """The text of one shared file; KeyError for a name that is not one of SHARED."""
    if name not in SHARED:
        raise KeyError(f"no shared web asset {name!r}; they are {sorted(SHARED)}")
    return resources.files("agenthop.server.web").joinpath("static", name).read_text(encoding="utf-8")


def asset_routes() -> list[Route]:
    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in SHARED:
            return JSONResponse(
                {"error": f"no such file; {PATH}/ serves {', '.join(sorted(SHARED))}"}, 404, headers=HEADERS
            )
        return Response(read_asset(name), media_type=f"{SHARED[name]}; charset=utf-8", headers=HEADERS)

    return [Route(PATH + "/{name}", asset, methods=["GET"])]
