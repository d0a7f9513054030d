"""python -m agenthop.server: the same as agenthop-server."""

from agenthop.server.cli import main

if __name__ == "__main__":
    main()
