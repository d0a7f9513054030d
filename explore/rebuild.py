"""Build explore.sqlite from the committed sources with the project's own `corpus build`, and check it is the
committed build, byte for byte (its SHA-256 is in explore/explore.sqlite.sha256).

    python explore/rebuild.py [--out explore.sqlite]      # build, then check the digest (exit 1 if it differs)
    python explore/rebuild.py --write-digest              # after changing the sources or the converters on purpose

Run from anywhere: the build always reads ``explore/sources`` relative to the repository root, since the
corpus records its inputs by their relative paths.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = Path("explore") / "sources"
DIGEST = ROOT / "explore" / "explore.sqlite.sha256"


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def build(out: Path) -> None:
    out = out.resolve()
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "agenthop.server", "corpus", "build", str(SOURCES), "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"corpus build of {SOURCES} failed (exit {done.returncode}); its message is above")
    # The build's warnings and quality table are the committed build's, shown in explore/README.md: one line here.
    wrote = [line for line in done.stderr.splitlines() if line.startswith("wrote ")]
    print(wrote[-1] if wrote else f"built {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "explore.sqlite", help="corpus file to write (default: explore.sqlite)"
    )
    parser.add_argument(
        "--write-digest", action="store_true", help="record the new build's SHA-256 instead of checking it"
    )
    args = parser.parse_args(argv)
    build(args.out)
    found = sha256(args.out)
    if args.write_digest:
        DIGEST.write_text(f"{found}  explore.sqlite\n")
        print(f"{args.out}: {found} (recorded in {DIGEST.relative_to(ROOT)})", file=sys.stderr)
        return 0
    expected = DIGEST.read_text().split()[0]
    if found != expected:
        print(
            f"{args.out}: SHA-256 {found}, but the committed build is {expected} ({DIGEST.relative_to(ROOT)}): "
            "the sources or the converters changed; if on purpose, run python explore/rebuild.py --write-digest",
            file=sys.stderr,
        )
        return 1
    print(f"{args.out}: the committed build, byte for byte (SHA-256 {found})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
