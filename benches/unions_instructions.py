#!/usr/bin/env python3
"""Instructions per call for the three ways of checking each payload of the unions, defaults
and formats benchmark, counted by callgrind.

Each count is (instructions for N+2 calls - instructions for 2 calls) / N, so set-up such as
compiling the jsonschema validators is excluded. Needs valgrind.
"""
import os
import pathlib
import re
import subprocess
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
subprocess.run(["cargo", "build", "-q", "--release", "-p", "benches", "--example", "unions_count"],
               cwd=root, check=True)
# Where cargo puts the build: CARGO_TARGET_DIR when set (relative to the workspace root, as
# cargo takes it), else target/.
target = root / os.environ.get("CARGO_TARGET_DIR", "target")
binary = target / "release" / "examples" / "unions_count"


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
for tool, payloads in (("edit_file", ("valid", "valid_tag_last", "invalid3")),
                       ("create_event", ("valid", "invalid3"))):
    for payload in payloads:
        n = 2000
        per_call = []
        for way in ("floor", "value_jsonschema", "parse_arguments"):
            base = instructions(way, tool, payload, 2)
            per_call.append((instructions(way, tool, payload, n + 2) - base) / n)
        a, b, c = per_call
        print(f"| {tool} {payload} | {a:,.0f} | {b:,.0f} | {c:,.0f} | {c / a:.2f}× | {b / c:.2f}× |")
