"""agenthop-cli: take a benchmark item from a shell, one command per tool call (``cli``), with the session kept
between commands in a small state file per item (``state``)."""
