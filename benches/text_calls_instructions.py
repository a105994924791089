#!/usr/bin/env python3
"""Instructions per byte of text_calls::parse_calls on the BFCL v4 reply mix
(benches/text_calls_corpus.rs), per dialect named and detected, prose detected and the whole
mix, counted by callgrind: (instructions for 3 passes - instructions for 1) / 2 / bytes, so
loading and rendering the corpus is not counted. Needs valgrind. An argument names another
build of the text_calls_count example to count (a copy kept from before a change, say)."""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
if len(sys.argv) > 1:
    binary = pathlib.Path(sys.argv[1])
else:
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "benches", "--example", "text_calls_count"],
                   cwd=root, check=True)
    # Where cargo puts the build: CARGO_TARGET_DIR when set (relative to the workspace root, as
    # cargo takes it), else target/.
    target = root / os.environ.get("CARGO_TARGET_DIR", "target")
    binary = target / "release" / "examples" / "text_calls_count"
dialects = ["json", "hermes", "llama3", "mistral", "granite", "deepseek", "pythonic"]


def run(way, subset, n):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             str(binary), way, subset, str(n)],
            capture_output=True, text=True, check=True)
    refs = re.search(r"refs:\s+([\d,]+)", out.stderr).group(1).replace(",", "")
    return int(refs), int(out.stdout)


def per_byte(way, subset):
    one, length = run(way, subset, 1)
    three, _ = run(way, subset, 3)
    return (three - one) / 2 / length


print("| replies | named | detected | detected / named |")
print("|---|---:|---:|---:|")
for subset in dialects + ["all"]:
    named, detected = per_byte("named", subset), per_byte("detected", subset)
    print(f"| {subset} | {named:.1f} | {detected:.1f} | {detected / named:.2f}× |")
print(f"| prose | | {per_byte('detected', 'prose'):.1f} | |")
