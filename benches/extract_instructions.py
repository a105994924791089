#!/usr/bin/env python3
"""Instructions per input byte of extract_json on the benchmark inputs at 1 KiB, 64 KiB and
1 MiB, counted by callgrind (the difference between 3 calls and 1, halved, so building the
input is not counted). Linear time shows as the same count per byte at every size. Needs
valgrind."""
import os
import pathlib
import re
import subprocess
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
subprocess.run(["cargo", "build", "-q", "--release", "-p", "benches", "--example", "extract_count"],
               cwd=root, check=True)
# Where cargo puts the build: CARGO_TARGET_DIR when set (relative to the workspace root, as
# cargo takes it), else target/.
target = root / os.environ.get("CARGO_TARGET_DIR", "target")
binary = target / "release" / "examples" / "extract_count"
inputs = ["prose", "open_braces", "open_brackets", "backticks", "quotes", "unclosed_tags"]
sizes = [("1 KiB", 1 << 10), ("64 KiB", 64 << 10), ("1 MiB", 1 << 20)]


def run(name, size, n):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             str(binary), name, str(size), str(n)],
            capture_output=True, text=True, check=True)
    return int(re.search(r"refs:\s+([\d,]+)", out.stderr).group(1).replace(",", "")), int(out.stdout)


print("| input | " + " | ".join(label for label, _ in sizes) + " |")
print("|---|" + "---:|" * len(sizes))
for name in inputs:
    cells = []
    for _, size in sizes:
        one, length = run(name, size, 1)
        three, _ = run(name, size, 3)
        cells.append(f"{(three - one) / 2 / length:.1f}")
    print(f"| {name} | " + " | ".join(cells) + " |")
