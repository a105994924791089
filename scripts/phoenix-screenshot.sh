#!/usr/bin/env bash
# A picture of one agent run's trace in Arize Phoenix: starts Phoenix on a loopback port with a
# throwaway working directory, runs the agent example exporting its spans over OTLP to it, and
# takes a screenshot of the run's trace with headless Chromium.
#
# Usage: scripts/phoenix-screenshot.sh [OUT.png]      (default docs/phoenix-trace.png)
#
# Needs: python3 -m pip install arize-phoenix; Chromium (Debian: apt-get install chromium).
# Set PHOENIX_PORT to use another port than 6006.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${1:-docs/phoenix-trace.png}
port=${PHOENIX_PORT:-6006}
base="http://127.0.0.1:$port"
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[[ -n $chromium ]] || { echo "phoenix-screenshot: no Chromium found (apt-get install chromium)" >&2; exit 1; }
python3 -c 'import phoenix.server.main' 2>/dev/null ||
    { echo "phoenix-screenshot: Phoenix is not installed (python3 -m pip install arize-phoenix)" >&2; exit 1; }

dir=$(mktemp -d)
PHOENIX_WORKING_DIR="$dir" PHOENIX_TELEMETRY_ENABLED=false PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_GRPC_PORT=$((port + 1)) \
    python3 -m phoenix.server.main serve >"$dir/phoenix.log" 2>&1 &
phoenix=$!
trap 'kill $phoenix 2>/dev/null || true; wait $phoenix 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 120); do
    curl -fsS "$base/healthz" >/dev/null 2>&1 && break
    sleep 0.5
done
curl -fsS "$base/healthz" >/dev/null || { cat "$dir/phoenix.log" >&2; echo "phoenix-screenshot: Phoenix did not start" >&2; exit 1; }

# The scripted agent run (a parallel batch, a repaired call, an approval, a guard), exported.
OTEL_EXPORTER_OTLP_ENDPOINT="$base" OTEL_SERVICE_NAME=weather-agent \
    cargo run -q -p examples --example agent --features otel >/dev/null

# The run with the most spans (the agent example makes several runs).
trace=
for _ in $(seq 40); do
    trace=$(curl -fsS "$base/v1/projects/default/spans?limit=1000" | python3 -c '
import json, sys
spans = json.load(sys.stdin).get("data", [])
runs = {s["context"]["trace_id"] for s in spans if s.get("name", "").startswith("invoke_agent")}
size = lambda t: sum(1 for s in spans if s["context"]["trace_id"] == t)
print(max(sorted(runs), key=size) if runs else "")
' || true)
    [[ -n $trace ]] && break
    sleep 0.5
done
[[ -n $trace ]] || { echo "phoenix-screenshot: no invoke_agent span reached Phoenix" >&2; exit 1; }
project=$(printf 'Project:1' | base64)

mkdir -p "$(dirname "$out")"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1600,1000 \
    --virtual-time-budget=20000 --screenshot="$out" "$base/projects/$project/traces/$trace" 2>/dev/null
echo "phoenix-screenshot: trace $trace written to $out"
