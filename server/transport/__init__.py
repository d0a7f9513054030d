"""How clients reach the sandbox: MCP over stdio and Streamable HTTP, and the HTTP session API.

- ``mcp_app``: the MCP face (tools, prompts, resources) on a low-level mcp Server; every ``tools/call`` reaches ``Session.call``.
- ``serving``: ``serve(...)``, what ``agenthop-server serve`` does, over either transport.
- ``stdio_frames``: stdio lines the SDK's parser drops, re-read or answered.
- ``frame_checks``: the JSON-RPC frame rules both transports apply before the SDK sees a request.
- ``http``: the HTTP app (MCP at /mcp, the session API, /play), its guards, and ``ServerThread``.
- ``front``: ``GET /`` (a page naming the endpoints) and ``GET /items``.
- ``web``: what every HTTP route shares (JSON bodies, ports, uvicorn options).
- ``timeouts``: deadlines for slow HTTP clients.
- ``client_log``: the server's warnings relayed to MCP clients that ask for them.
"""
