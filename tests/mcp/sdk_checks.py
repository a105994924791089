"""What the Python MCP client checks share: the SDK's version gate and a record of checks."""

from __future__ import annotations

import importlib.metadata
import itertools
import sys
from typing import Any

INSTALL = 'python3 -m pip install "mcp>=1.12"'


def sdk_version() -> str:
    try:
        return importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def too_old(version: str) -> bool:
    """Whether `version` is before 1.12, which cannot page through tools/list."""
    numbers = []
    for part in version.split(".")[:2]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        numbers.append(int(digits) if digits else 0)
    return tuple(numbers) < (1, 12)


def gate(script: str) -> None:
    """Exits 2 when the installed SDK is older than 1.12; with --probe, says that it imports
    and exits 0."""
    if sdk_version() != "(version unknown)" and too_old(sdk_version()):
        print(f"{script}: the MCP Python SDK is version {sdk_version()}, older than 1.12; run: {INSTALL}",
              file=sys.stderr)
        sys.exit(2)
    if "--probe" in sys.argv[1:]:
        print(f"{script}: mcp {sdk_version()} imports")
        sys.exit(0)


class Checks:
    """Records each check; the run fails if any did."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def check(self, condition: bool, what: str, detail: Any = None) -> bool:
        if condition:
            print(f"ok   {what}")
        else:
            suffix = "" if detail is None else f"\n       got: {detail}"
            print(f"FAIL {what}{suffix}")
            self.failures.append(what)
        return condition
