#!/usr/bin/env python3
"""Prints the contract benchmark as a Markdown table of medians and ratios.

Reads criterion's estimates from target/criterion after
`cargo bench -p benches --bench contract`; with the argument `unions`, those of
`cargo bench -p benches --bench unions`.
"""
import json
import os
import pathlib
import sys

workspace = pathlib.Path(__file__).resolve().parent.parent
root = workspace / os.environ.get("CARGO_TARGET_DIR", "target") / "criterion"
if sys.argv[1:] == ["unions"]:
    cases = [("edit_file", payload) for payload in ("valid", "valid_tag_last", "invalid3")]
    cases += [("create_event", payload) for payload in ("valid", "invalid3")]
else:
    cases = [(tool, payload) for tool in ("invoice", "flights") for payload in ("valid", "invalid3", "64k")]
ways = ("floor", "value_jsonschema", "parse_arguments")


def median_ns(tool, payload, way):
    path = root / f"{tool}_{payload}" / way / "new" / "estimates.json"
    if not path.exists():
        sys.exit(f"missing {path}: run the benchmark first")
    return json.loads(path.read_text())["median"]["point_estimate"]


def show(ns):
    return f"{ns / 1000:,.1f} µs" if ns >= 10_000 else f"{ns:,.0f} ns"


print("| payload | (a) floor: serde twin | (b) Value + jsonschema + from_value | (c) parse_arguments | (c)/(a) | (b)/(c) |")
print("|---|---|---|---|---|---|")
for tool, payload in cases:
    a, b, c = (median_ns(tool, payload, way) for way in ways)
    print(f"| {tool} {payload} | {show(a)} | {show(b)} | {show(c)} | {c / a:.2f}× | {b / c:.2f}× |")
