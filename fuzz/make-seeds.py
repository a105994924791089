#!/usr/bin/env python3
"""Builds the seed corpora in fuzz/seeds/<target>/ from the repository's test data.

Sources:
  - the string literals of tests/*.rs, examples/*.rs and tool-core/src/**/*.rs (argument texts,
    model replies, JSON-RPC lines),
  - the provider recordings vendored in tests/data/providers (SSE bodies, JSON-lines chunks,
    cassettes, whole responses), written in the provider targets' input layout (see
    fuzz/src/lib.rs),
  - the JSON-Schema-Test-Suite vendored in tests/data/json-schema-test-suite (schema + instance
    pairs for dynamic tools).

Usage (from the repository root or from fuzz/):
    python3 fuzz/make-seeds.py [--data PATH]

PATH defaults to the repository's tests/data, which holds everything; another folder of the same
layout (`providers/`, `json-schema-test-suite/`) may be given instead.
The output is deterministic (file names are content hashes), so rerunning it changes nothing
unless the test data changed.
"""

import argparse
import hashlib
import json
import pathlib
import re
import shutil
import sys

FUZZ = pathlib.Path(__file__).resolve().parent
REPO = FUZZ.parent
SEEDS = FUZZ / "seeds"

# Caps that keep the committed set small.
MAX_SEED_BYTES = 16 * 1024
MAX_PER_TARGET = 120

TARGETS = [
    "example_tools", "dynamic_tools", "extract_json", "sse_decoder",
    "openai_chat", "openai_responses", "anthropic", "gemini", "mcp_server",
]

# Header bytes of the provider layout: mode (0 whole, 1 SSE, 2 JSON lines; bits 3-4 target
# options), then the split lengths. A few variants of each recording.
def headers(mode):
    return [
        bytes([mode, 0]),
        bytes([mode | 0x08, 3, 1, 7, 64]),
        bytes([mode | 0x18 | 0x04, 4, 5, 1, 13, 2]),
    ]


def rust_strings(text):
    """The string literals of Rust source, decoded."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        m = re.match(r'b?r(#*)"', text[i:])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = m.group(1)
            start = i + m.end()
            end = text.find('"' + hashes, start)
            if end < 0:
                break
            out.append(text[start:end])
            i = end + 1 + len(hashes)
            continue
        if c == "'":
            # A char literal ('"', '\'', '\u{..}') or a lifetime.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            i += m.end() if m else 1
            continue
        if c == '"':
            j = i + 1
            buf = []
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    e = text[j + 1]
                    if e == "\n":
                        j += 2
                        while j < n and text[j] in " \t\n\r":
                            j += 1
                        continue
                    simple = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
                    if e in simple:
                        buf.append(simple[e])
                        j += 2
                    elif e == "x":
                        buf.append(chr(int(text[j + 2:j + 4], 16)))
                        j += 4
                    elif e == "u":
                        close = text.index("}", j)
                        buf.append(chr(int(text[j + 3:close], 16)))
                        j = close + 1
                    else:
                        buf.append(e)
                        j += 2
                else:
                    buf.append(text[j])
                    j += 1
            out.append("".join(buf))
            i = j + 1
            continue
        i += 1
    return out


def is_json(text):
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


class Seeds:
    def __init__(self):
        self.by_target = {t: {} for t in TARGETS}

    def add(self, target, data):
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        if not data or len(data) > MAX_SEED_BYTES:
            return
        name = hashlib.sha1(data).hexdigest()[:16]
        self.by_target[target][name] = data

    def write(self):
        if SEEDS.exists():
            shutil.rmtree(SEEDS)
        for target, seeds in self.by_target.items():
            folder = SEEDS / target
            folder.mkdir(parents=True)
            # When there are too many, keep a sample spread over all sources (by content hash).
            kept = sorted(seeds.items())[:MAX_PER_TARGET]
            for name, data in kept:
                (folder / name).write_bytes(data)
            print(f"{target}: {len(kept)} seeds, {sum(len(d) for _, d in kept)} bytes")


def from_repository(seeds):
    literals = []
    for pattern in ["tests/*.rs", "examples/*.rs", "tool-core/src/**/*.rs", "README.md"]:
        for path in sorted(REPO.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".md":
                literals += re.findall(r"```(?:json)?\n(.*?)```", text, re.S)
            else:
                literals += rust_strings(text)
    for s in literals:
        stripped = s.strip()
        looks_json = is_json(stripped) and stripped[:1] in "{["
        if looks_json:
            seeds.add("example_tools", s)
            tool = int(hashlib.sha1(s.encode()).hexdigest(), 16) % 5
            seeds.add("dynamic_tools", bytes([tool]) + s.encode())
        if "{" in s or "[" in s or "```" in s or "<tool_call>" in s:
            seeds.add("extract_json", s)
        if '"jsonrpc"' in s:
            seeds.add("mcp_server", b"\x00" + s.encode() + b"\n")
        if s.startswith(("data:", "event:")):
            seeds.add("sse_decoder", b"\x01\x00" + s.encode())
            seeds.add("sse_decoder", b"\x01\x03\x01\x07\x40" + s.encode())


PROVIDERS = {
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


def from_fixtures(seeds, data):
    root = data / "providers"
    if not root.is_dir():
        sys.exit(f"make-seeds: no provider recordings at {root}")
    import yaml  # only needed for the cassettes

    for folder, target in PROVIDERS.items():
        for path in sorted((root / folder).glob("*")):
            data = path.read_bytes()
            if path.name.endswith(".sse.txt"):
                for h in headers(1):
                    seeds.add(target, h + data)
                whole = assembled(target, data)
                if whole is not None:
                    for h in headers(0):
                        seeds.add(target, h + json.dumps(whole).encode())
                seeds.add("sse_decoder", headers(1)[1] + data)
                seeds.add("sse_decoder", headers(1)[2] + data.replace(b"\n", b"\r\n"))
            elif path.name.endswith(".chunks.txt"):
                for h in headers(2):
                    seeds.add(target, h + data)
                framed = b"".join(b"data: " + line + b"\n\n" for line in data.splitlines())
                seeds.add(target, headers(1)[0] + framed)
                # Each chunk alone is a whole response for Gemini (and a stream event for all).
                for line in data.splitlines()[:4]:
                    for h in headers(0):
                        seeds.add(target, h + line)
            elif path.name.endswith(".json"):
                for h in headers(0):
                    seeds.add(target, h + data)
            elif path.name.endswith(".cassette.yaml"):
                cassette = yaml.safe_load(data)
                for interaction in cassette.get("interactions", []):
                    response = interaction.get("response", {})
                    body = response.get("parsed_body")
                    if body is not None:
                        for h in headers(0):
                            seeds.add(target, h + json.dumps(body).encode())
                    stream = (response.get("body") or {}).get("string")
                    if isinstance(stream, str) and stream.strip():
                        for h in headers(1):
                            seeds.add(target, h + stream.encode())
                        seeds.add("sse_decoder", headers(1)[1] + stream.encode())
    mcp = root / "mcp" / "examples"
    for path in sorted(mcp.glob("*/*.json")):
        value = json.loads(path.read_text())
        schema = value.get("inputSchema") if isinstance(value, dict) else None
        if isinstance(schema, dict):
            seeds.add("dynamic_tools", b"\x05" + json.dumps(schema).encode() + b"\x00{}")
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": value.get("name", "get_weather"), "arguments": {}}}
            seeds.add("mcp_server", b"\x00" + json.dumps(call).encode() + b"\n")


def sse_data(body):
    """The JSON payloads of an SSE body."""
    values = []
    for line in body.decode("utf-8").splitlines():
        if line.startswith("data:"):
            try:
                values.append(json.loads(line[5:].strip()))
            except ValueError:
                pass
    return values


def assembled(target, body):
    """The whole response a recorded stream adds up to (Chat Completions and Anthropic), so
    the whole-response mode starts from real calls too."""
    events = sse_data(body)
    if target == "openai_chat":
        calls = {}
        for chunk in events:
            for choice in chunk.get("choices") or []:
                for fragment in (choice.get("delta") or {}).get("tool_calls") or []:
                    call = calls.setdefault(fragment.get("index", 0), {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                    call["id"] = fragment.get("id") or call["id"]
                    function = fragment.get("function") or {}
                    call["function"]["name"] += function.get("name") or ""
                    call["function"]["arguments"] += function.get("arguments") or ""
        if not calls:
            return None
        message = {"role": "assistant", "content": None, "tool_calls": [calls[i] for i in sorted(calls)]}
        return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    if target == "anthropic":
        blocks = {}
        for event in events:
            if event.get("type") == "content_block_start":
                blocks[event["index"]] = dict(event["content_block"], _json="")
            elif event.get("type") == "content_block_delta":
                delta = event["delta"]
                block = blocks.get(event["index"])
                if block is None:
                    continue
                if delta.get("type") == "input_json_delta":
                    block["_json"] += delta.get("partial_json", "")
                elif delta.get("type") == "text_delta":
                    block["text"] = block.get("text", "") + delta.get("text", "")
        content = []
        for index in sorted(blocks):
            block = blocks[index]
            text = block.pop("_json")
            if block.get("type") == "tool_use":
                try:
                    block["input"] = json.loads(text) if text.strip() else {}
                except ValueError:
                    continue
            content.append(block)
        if not any(b.get("type") == "tool_use" for b in content):
            return None
        return {"role": "assistant", "stop_reason": "tool_use", "content": content}
    return None


def from_schema_suite(seeds, data):
    root = data / "json-schema-test-suite" / "tests" / "draft2020-12"
    if not root.is_dir():
        sys.exit(f"make-seeds: no JSON-Schema-Test-Suite at {root}")
    for path in sorted(root.glob("*.json")):
        for group in json.loads(path.read_text()):
            schema = json.dumps(group["schema"]).encode()
            # One valid and one invalid instance per group is plenty.
            picked = {}
            for test in group["tests"]:
                picked.setdefault(test["valid"], test["data"])
            for data in picked.values():
                seeds.add("dynamic_tools", b"\x05" + schema + b"\x00" + json.dumps(data).encode())


def mcp_lines(seeds):
    """Requests as the MCP tests send them (the harness does the handshake for flag 0)."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "bogus"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "get_weather", "arguments": {"city": "Paris", "units": "celsius"}}},
        {"jsonrpc": "2.0", "id": "c4", "method": "tools/call",
         "params": {"name": "create_invoice", "arguments": {"customerId": "cus_42", "amount": "120.5", "currency": "USD"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "never", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "check_stock", "arguments": {"sku": "ABC-1234"}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_weather", "arguments": {"city": "Atlantis", "units": "celsius"}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "gave up"}},
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    seeds.add("mcp_server", b"\x00" + body)
    seeds.add("mcp_server", b"\x02" + body)
    for line in lines:
        seeds.add("mcp_server", b"\x00" + json.dumps(line).encode() + b"\n")
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "seed", "version": "0"}}}
    seeds.add("mcp_server", b"\x01" + json.dumps(init).encode() + b"\n"
              + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + body)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, default=REPO / "tests" / "data")
    args = parser.parse_args()
    seeds = Seeds()
    from_repository(seeds)
    from_fixtures(seeds, args.data)
    from_schema_suite(seeds, args.data)
    mcp_lines(seeds)
    seeds.write()


if __name__ == "__main__":
    main()
