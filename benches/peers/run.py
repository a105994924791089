#!/usr/bin/env python3
"""Side by side with other libraries, in one run: the Rust ways (benches/examples/peers_rust.rs),
Ajv 8 and Zod 4 on Node (peers.mjs), pydantic 2 and DBOS on Python (peers.py), on the same
payloads, each group of implementations in a fresh process, interleaved pass after pass.

    python3 benches/peers/run.py [--passes 3] [--budget-ms 500] [--no-callgrind] [--per-pass]

Prints markdown tables: per payload, the median time per call of each way and its ratio to the
floor measured in the same pass (the median of the passes' ratios, with their range), then the
Rust ways' callgrind instruction counts ((N+2 calls - 2 calls) / N). Before measuring, checks
that every way accepts each valid payload and refuses each invalid one.

Set-up (once):
    cd benches/peers && npm ci                       # Ajv, Zod into benches/peers/node_modules
    python3 -m venv .venv && .venv/bin/pip install -r benches/peers/requirements.txt
The Python peers run under .venv/bin/python at the workspace root when it exists, else under
$PEERS_PYTHON, else under this interpreter.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# Where cargo puts the build: CARGO_TARGET_DIR when set (relative to the workspace root, as
# cargo takes it), else target/.
TARGET = ROOT / os.environ.get("CARGO_TARGET_DIR", "target")
BINARY = TARGET / "release" / "examples" / "peers_rust"

SETUP = """\
Set up the peers once, from the workspace root:
    (cd benches/peers && npm ci)
    python3 -m venv .venv && .venv/bin/pip install -r benches/peers/requirements.txt
(Node 20 or later; any Python 3.9+ for the venv.)"""

# What each way is called in the tables, in the order of the rows; the first of each group is
# the floor its ratios are taken to.
CONTRACT = [
    ("floor", "`serde_json::from_str::<Twin>` (floor)"),
    ("zero_copy", "zero-copy twin (strings borrowed)"),
    ("jsonschema", "`Value` + `jsonschema` + `from_value`"),
    ("parse_arguments", "**`parse_arguments`**"),
    ("ajv", "Ajv 8 (2020-12, allErrors) on `JSON.parse`"),
    ("zod", "Zod 4 on `JSON.parse`"),
    ("zod_compiled", "Zod 4 `z.compile()` on `JSON.parse`"),
    ("pydantic", "pydantic 2 strict `model_validate_json`"),
]
UNIONS = [
    ("floor", "serde `#[serde(tag = \"type\")]` derive (1.0)"),
    ("jsonschema", "`Value` + `jsonschema` + `from_value`"),
    ("parse_arguments", "**`parse_arguments`**"),
    ("ajv", "Ajv 8 `oneOf` on `JSON.parse`"),
    ("ajv_discriminator", "Ajv 8 `oneOf` + `discriminator` on `JSON.parse`"),
    ("zod", "Zod 4 `discriminatedUnion` on `JSON.parse`"),
    ("zod_compiled", "Zod 4 `discriminatedUnion`, `z.compile()`"),
    ("pydantic", "pydantic 2 strict discriminated union"),
]
LEDGER = [
    ("plain_sqlite", "hand-written rusqlite claim-and-settle (1.0)"),
    ("sqlite_ledger", "**`invoke` with `SqliteLedger`**"),
    ("invoke", "`invoke` without a ledger"),
    ("python_plain_sqlite", "the same claim-and-settle in Python's `sqlite3`"),
    ("dbos", "DBOS 1-step workflow, SQLite system database"),
]


def python_for_peers():
    venv = ROOT / ".venv" / "bin" / "python"
    if venv.exists():
        return str(venv)
    return os.environ.get("PEERS_PYTHON", sys.executable)


def check_setup(python):
    missing = []
    node = shutil.which("node")
    if node is None:
        missing.append("node is not on PATH")
    else:
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
        if int(version.lstrip("v").split(".")[0]) < 20:
            missing.append(f"node {version.strip()} is older than 20")
    for package in ("ajv", "ajv-formats", "zod"):
        if not (HERE / "node_modules" / package).exists():
            missing.append(f"benches/peers/node_modules/{package} is missing")
    probe = subprocess.run([python, "-c", "import pydantic, dbos"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        missing.append(f"{python} cannot import pydantic and dbos")
    if missing:
        sys.exit("\n".join(missing) + "\n\n" + SETUP)


def run_lines(command):
    out = subprocess.run(command, capture_output=True, text=True, cwd=HERE)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed:\n{out.stderr}")
    for note in out.stderr.splitlines():
        if note.strip():
            print(f"<!-- {note.strip()} -->", file=sys.stderr)
    return [json.loads(text) for text in out.stdout.splitlines() if text.startswith("{")]


def measure_pass(groups, export, python, budget_ms):
    """One pass: each group of implementations in a fresh process, Rust, then Node, then
    Python. Returns {(group, tool, payload, impl): (ns, accepted)}."""
    found = {}
    for group in groups:
        commands = [[str(BINARY), "time", group, str(budget_ms)]]
        if group != "ledger":
            commands.append(["node", "peers.mjs", group, export, str(budget_ms)])
        commands.append([python, "peers.py", group, export, str(budget_ms)])
        for command in commands:
            for entry in run_lines(command):
                key = (group, entry["tool"], entry["payload"], entry["impl"])
                found[key] = (entry["ns_median"], entry["accepted"], entry.get("cpu_ns"))
    return found


def check_agreement(found):
    """A valid payload is accepted by every way, an invalid one refused by every way."""
    wrong = []
    for (group, tool, payload, impl), (_, accepted, _) in sorted(found.items()):
        expected = payload.startswith("valid")
        if accepted != expected:
            wrong.append(f"{group} {tool}/{payload}: {impl} {'accepts' if accepted else 'refuses'}"
                         f" it, expected {'acceptance' if expected else 'refusal'}")
    if wrong:
        sys.exit("The ways disagree on validity:\n" + "\n".join(wrong))


def fmt_ns(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:,.1f} µs"
    return f"{ns:,.0f} ns"


def table(title, rows, group, columns, passes, floor):
    """Rows: ways; columns: (tool, payload); cell: the median over passes of the way's median
    time, then the median of its per-pass ratios to `floor` with their range."""
    print(f"\n### {title}\n")
    print("| | " + " | ".join(f"{tool} {payload}" for tool, payload in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for impl, label in rows:
        cells = []
        for tool, payload in columns:
            ratios, times = [], []
            for found in passes:
                mine = found.get((group, tool, payload, impl))
                base = found.get((group, tool, payload, floor))
                if mine is None or base is None:
                    continue
                times.append(mine[0])
                ratios.append(mine[0] / base[0])
            if not ratios:
                cells.append("")
                continue
            ratio = f"{statistics.median(ratios):.2f}×"
            if len(ratios) > 1:
                ratio += f" ({min(ratios):.2f}–{max(ratios):.2f})"
            cells.append(f"{fmt_ns(statistics.median(times))}, {ratio}")
        if any(cells):
            print(f"| {label} | " + " | ".join(cells) + " |")


def ledger_table(passes, suffix):
    """The ledger: elapsed and processor time per call, each with its ratio to the hand-written
    transaction within the pass."""
    print(f"\n### Ledger (one call: claim, run, settle){suffix}\n")
    print("| | elapsed per call | / hand-written | processor time per call | / hand-written |")
    print("|---|---:|---:|---:|---:|")
    for impl, label in LEDGER:
        cells = []
        for index in (0, 2):
            values, ratios = [], []
            for found in passes:
                mine = found.get(("ledger", "invoice", "valid", impl))
                base = found.get(("ledger", "invoice", "valid", "plain_sqlite"))
                if mine is None or base is None or mine[index] is None or not base[index]:
                    continue
                values.append(mine[index])
                ratios.append(mine[index] / base[index])
            if not values:
                cells += ["", ""]
                continue
            ratio = f"{statistics.median(ratios):.2f}×"
            if len(ratios) > 1:
                ratio += f" ({min(ratios):.2f}–{max(ratios):.2f})"
            cells += [fmt_ns(statistics.median(values)), ratio]
        if any(cells):
            print(f"| {label} | " + " | ".join(cells) + " |")


def instructions(args):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             str(BINARY), "count", *map(str, args)],
            capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", out.stderr) or re.search(r"I\s+refs:\s+([\d,]+)",
                                                                     out.stderr)
    return int(match.group(1).replace(",", ""))


def per_call(way, tool, payload, n):
    base = instructions([way, tool, payload, 2])
    return (instructions([way, tool, payload, n + 2]) - base) / n


def callgrind_tables(groups):
    print("\n### Instructions per call of the Rust ways (callgrind, (N+2 − 2 calls) / N)\n")
    rows = []
    if "contract" in groups:
        for tool in ("invoice", "flights"):
            for payload in ("valid", "invalid3"):
                rows.append(("contract", tool, payload,
                             ["floor", "zero_copy", "jsonschema", "parse_arguments"], 2000))
    if "unions" in groups:
        for payload in ("valid", "invalid3"):
            rows.append(("unions", "edit_file", payload,
                         ["floor", "jsonschema", "parse_arguments"], 2000))
    if rows:
        print("| payload | floor | zero-copy | `Value` + `jsonschema` | `parse_arguments` "
              "| zero-copy / floor | `parse_arguments` / floor |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for _, tool, payload, ways, n in rows:
            counts = {way: per_call(way, tool, payload, n) for way in ways}
            floor = counts["floor"]
            zero = counts.get("zero_copy")
            print(f"| {tool} {payload} | {floor:,.0f} | "
                  + (f"{zero:,.0f}" if zero else "") + f" | {counts['jsonschema']:,.0f} | "
                  f"{counts['parse_arguments']:,.0f} | "
                  + (f"{zero / floor:.2f}×" if zero else "")
                  + f" | {counts['parse_arguments'] / floor:.2f}× |")
    if "ledger" in groups:
        n = 200
        counts = {way: per_call(way, "ledger", "valid", n)
                  for way in ("plain_sqlite", "sqlite_ledger", "invoke")}
        plain = counts["plain_sqlite"]
        print("\n| ledger (per call) | instructions | / hand-written |")
        print("|---|---:|---:|")
        for way, label in LEDGER[:3]:
            print(f"| {label} | {counts[way]:,.0f} | {counts[way] / plain:.2f}× |")
        overhead = counts["sqlite_ledger"] - counts["invoke"]
        print(f"| `SqliteLedger` overhead (with − without) | {overhead:,.0f} | "
              f"{overhead / plain:.2f}× |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--budget-ms", type=int, default=500,
                        help="time spent measuring each way on each payload, per pass")
    parser.add_argument("--groups", default="contract,unions,ledger")
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--per-pass", action="store_true", help="also print each pass's tables")
    args = parser.parse_args()
    groups = [g for g in args.groups.split(",") if g]
    python = python_for_peers()
    check_setup(python)
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "benches", "--example",
                    "peers_rust"], cwd=ROOT, check=True)
    versions = {
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True,
                               cwd=HERE).stdout.strip(),
        "python": subprocess.run([python, "-c",
                                  "import sys, pydantic, dbos, importlib.metadata as m; "
                                  "print(sys.version.split()[0], pydantic.VERSION, "
                                  "m.version('dbos'))"],
                                 capture_output=True, text=True).stdout.split(),
    }
    npm = {name: json.loads((HERE / "node_modules" / name / "package.json").read_text())["version"]
           for name in ("ajv", "zod")}
    with tempfile.TemporaryDirectory() as tmp:
        export = str(pathlib.Path(tmp) / "export.json")
        subprocess.run([str(BINARY), "export", export], check=True)
        passes = []
        for number in range(args.passes):
            print(f"pass {number + 1} of {args.passes}", file=sys.stderr)
            found = measure_pass(groups, export, python, args.budget_ms)
            check_agreement(found)
            passes.append(found)
    py_version, pydantic_version, dbos_version = (versions["python"] + ["?"] * 3)[:3]
    print(f"Node {versions['node']}, Ajv {npm['ajv']}, Zod {npm['zod']}; Python {py_version}, "
          f"pydantic {pydantic_version}, DBOS {dbos_version}; {args.passes} passes, "
          f"{args.budget_ms} ms per way and payload per pass. Each cell: the median time per "
          "call (median of the passes), then the median of the per-pass ratios to the first "
          "row (their range). Every way accepted each valid payload and refused each invalid "
          "one.")
    shown = [passes] + ([[p] for p in passes] if args.per_pass else [])
    for number, chosen in enumerate(shown):
        suffix = "" if number == 0 else f" (pass {number})"
        if "contract" in groups:
            table("Contract" + suffix, CONTRACT, "contract",
                  [(t, p) for t in ("invoice", "flights") for p in ("valid", "invalid3")],
                  chosen, "floor")
        if "unions" in groups:
            table("Unions (edit_file, 20 tagged edits)" + suffix, UNIONS, "unions",
                  [("edit_file", "valid"), ("edit_file", "invalid3")], chosen, "floor")
        if "ledger" in groups:
            ledger_table(chosen, suffix)
    if not args.no_callgrind:
        if shutil.which("valgrind") is None:
            print("\n(valgrind not found: no instruction counts)")
        else:
            callgrind_tables(groups)


if __name__ == "__main__":
    main()
