"""The [inspect] extra stays optional: without inspect-ai every other module imports, and the task says what to install.

Runs in the main test venv (no inspect-ai there); inspect_ai is also blocked in the
child process, so the check holds wherever it runs.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

CHILD = r"""
import importlib, pkgutil, sys

class BlockInspect:
    def find_spec(self, name, path=None, target=None):
        if name == "inspect_ai" or name.startswith("inspect_ai."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, BlockInspect())
imported = []
for package in ("agenthop.server", "agenthop.corpus", "agenthop.runner", "agenthop.scorer"):
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
            imported.append(info.name)
assert not [m for m in sys.modules if m.split(".")[0] == "inspect_ai"]
print("imported", len(imported))
try:
    import agenthop.inspect_task
except ImportError as exc:
    print("task:", exc)
"""


@pytest.mark.slow
def test_everything_but_the_inspect_task_imports_without_inspect_ai():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("imported ") and int(lines[0].split()[1]) > 40
    assert lines[1] == (
        "task: agenthop.inspect_task needs inspect-ai, which is not installed. "
        'Install the extra: pip install -e ".[inspect]"'
    )


def test_the_task_is_registered_through_the_inspect_ai_entry_point():
    [ep] = [ep for ep in entry_points(group="inspect_ai") if ep.name == "agenthop"]
    assert ep.value == "agenthop.inspect_task"
