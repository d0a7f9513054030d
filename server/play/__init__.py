"""Play: a person attempts an item through a web page, metered and logged as any agent is.

- ``routes``: the page and its JSON API under /play (mounted by the HTTP app of every ``serve --transport http``).
- ``serve``: ``agenthop-server play``, the HTTP app on a loopback port with a browser opened on /play.
- ``keys``: who holds each participant name (key hashes in the log database).
- ``study``, ``study_gate``: study mode (the study file, the assignment; enrolment, order and time limit on /play).
- ``static/``: the page itself (HTML, CSS, JS; no build step); ``study.js`` and ``study.css`` for study mode.
"""
