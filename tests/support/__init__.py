"""Helpers the tests share: fixture corpora and releases, fake models on loopback, MCP and browser helpers.

pytest puts tests/ on sys.path (``pythonpath`` in pyproject.toml), so a test imports them as
``from support.fake_openai import FakeOpenAI``; the bench scripts put tests/ on sys.path themselves.
"""
