#!/usr/bin/env python3
"""Instructions per call for the three ways of checking each payload, counted by callgrind.

Each count is (instructions for N+K calls - instructions for K calls) / N, so set-up such as
compiling the jsonschema validator is excluded. Needs valgrind.
"""
import os
import pathlib
import re
import subprocess
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
subprocess.run(["cargo", "build", "-q", "--release", "-p", "benches", "--example", "count"],
               cwd=root, check=True)
# Where cargo puts the build: CARGO_TARGET_DIR when set (relative to the workspace root, as
# cargo takes it), else target/.
target = root / os.environ.get("CARGO_TARGET_DIR", "target")
binary = target / "release" / "examples" / "count"


def instructions(way, tool, payload, n):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             str(binary), way, tool, payload, str(n)],
            capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", out.stderr) or re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    return int(match.group(1).replace(",", ""))


print("| payload | (a) floor | (b) Value + jsonschema | (c) parse_arguments | (c)/(a) | (b)/(c) |")
print("|---|---|---|---|---|---|")
for tool, payloads in (("invoice", ("valid", "invalid3", "64k")),
                      ("flights", ("valid", "invalid3", "invalid3_container", "64k"))):
    for payload in payloads:
        n = 20 if payload == "64k" else 2000
        per_call = []
        for way in ("floor", "value_jsonschema", "parse_arguments"):
            base = instructions(way, tool, payload, 2)
            per_call.append((instructions(way, tool, payload, n + 2) - base) / n)
        a, b, c = per_call
        print(f"| {tool} {payload} | {a:,.0f} | {b:,.0f} | {c:,.0f} | {c / a:.2f}× | {b / c:.2f}× |")
