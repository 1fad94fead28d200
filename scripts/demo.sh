#!/usr/bin/env bash
# Crawl the bundled demo site (demo/site) and keep only the relevant content of its pages.
# Usage: bash scripts/demo.sh [more `scrapy crawl` options, e.g. -s EDREW_ITEMS=node]
# Writes output/demo.jsonl (the items) and output/demo.log (the crawl log).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
source scripts/lib.sh

mkdir -p output
out=output/demo.jsonl
log=output/demo.log
server_log=output/demo-server.log

# Port 0: the OS picks a free port, and http.server prints the one it got.
python -u -m http.server 0 --bind 127.0.0.1 --directory demo/site >"$server_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
port=$(first_match "$server_log" "$HTTP_SERVER_PORT")
server_started "$port" "the demo web server" "$server_log"
url="http://127.0.0.1:$port/"
echo "Serving demo/site at $url; crawling it with: scrapy crawl edrew -a urls=$url -O $out"

crawl "$log" edrew -a urls="$url" -O "$out" -s LOG_FILE="$log" "$@"

python - "$out" "$log" <<'PY'
import json, re, sys
out, log = sys.argv[1:]
items = [json.loads(line) for line in open(out, encoding="utf-8") if line.strip()]
print(f"\n{len(items)} items in {out} (crawl log: {log})\n")
for item in items:
    path = item.get("url", "").split("/", 3)[-1] or "/"
    kept = len(item.get("nodes") or []) if "nodes" in item else 1
    title = (item.get("title") or "").split(" | ")[0]
    print(f"  {path:<48} {kept:>3} nodes {len(item.get('text') or item.get('content') or ''):>6} chars  {title[:60]}")
stats = {k: int(v) for k, v in re.findall(r"'(edrew/[^']+)': (\d+)", open(log, encoding="utf-8").read())}
if stats.get("edrew/nodes"):
    share = 100 * stats.get("edrew/relevant_nodes", 0) / stats["edrew/nodes"]
    print(f"\nKept {stats.get('edrew/relevant_nodes', 0)} of {stats['edrew/nodes']} text nodes ({share:.0f}%).")
if stats:
    print("EDREW stats: " + ", ".join(f"{k[6:]}={v}" for k, v in sorted(stats.items())))
print(f"One article, in full: grep bike-lanes {out} | python -m json.tool")
PY
