#!/usr/bin/env python3
"""Instructions per call of Runtime::invoke (no-op policy and handler) and of parse_arguments
alone, on the valid create_invoice payload, counted by callgrind. Needs valgrind."""
import os
import pathlib
import re
import subprocess
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
subprocess.run(["cargo", "build", "-q", "--release", "-p", "benches", "--example", "invoke_count"],
               cwd=root, check=True)
# Where cargo puts the build: CARGO_TARGET_DIR when set (relative to the workspace root, as
# cargo takes it), else target/.
target = root / os.environ.get("CARGO_TARGET_DIR", "target")
binary = target / "release" / "examples" / "invoke_count"


def instructions(way, n):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", str(binary), way, str(n)],
            capture_output=True, text=True, check=True)
    return int(re.search(r"refs:\s+([\d,]+)", out.stderr).group(1).replace(",", ""))


n = 2000
counts = {way: (instructions(way, n + 2) - instructions(way, 2)) / n for way in ("parse_arguments", "invoke")}
print("| | instructions per call |")
print("|---|---|")
print(f"| parse_arguments | {counts['parse_arguments']:,.0f} |")
print(f"| invoke | {counts['invoke']:,.0f} |")
print(f"| pipeline overhead (invoke - parse_arguments) | {counts['invoke'] - counts['parse_arguments']:,.0f} |")
