"""The static toolkit AgentHop's pages share: ``static/`` (base.css, dom.js) and ``assets`` (serving or inlining it).

The play page loads it from ``/static/``; the scorer's trajectory viewer inlines it so that it opens from ``file://``.
"""
