"""agenthop.llm: talking to a model over the OpenAI wire format, shared by the runner's agents and construction.

``wire`` holds the message shapes and sampling settings every OpenAI-compatible server accepts; ``retry``
tells transient from hard errors and retries in place; ``pricing`` turns token counts into cost from
``prices.json``.
"""
