#!/usr/bin/env bash
# Crawl the bundled demo site (demo/site) and keep only the relevant content of its pages.
# Usage: bash scripts/demo.sh [more `scrapy crawl` options, e.g. -s EDREW_ITEMS=node]
# Writes output/demo.jsonl (the items) and output/demo.log (the crawl log).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh

mkdir -p output
out=output/demo.jsonl
log=output/demo.log
server_log=output/demo-server.log

# Port 0: the OS picks a free port, and http.server prints the one it got.
python -u -m http.server 0 --bind 127.0.0.1 --directory demo/site >"$server_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/.* port \([0-9][0-9]*\).*/\1/p' "$server_log" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    echo "demo.sh: the demo web server did not start:" >&2
    cat "$server_log" >&2
    exit 1
fi
url="http://127.0.0.1:$port/"
echo "Serving demo/site at $url; crawling it with: scrapy crawl edrew -a urls=$url -O $out"

if ! scrapy crawl edrew -a urls="$url" -O "$out" -s LOG_FILE="$log" "$@"; then
    echo "demo.sh: the crawl failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
fi

python - "$out" "$log" <<'PY'
import json, re, sys
out, log = sys.argv[1:]
items = [json.loads(line) for line in open(out, encoding="utf-8") if line.strip()]
print(f"\n{len(items)} items in {out} (crawl log: {log})\n")
for item in items:
    url = item.get("url", "")
    body = item.get("text") or item.get("content") or ""
    first = body.splitlines()[0] if body else ""
    print(f"  {url.split('/', 3)[-1] or '/':<48} {len(body):>6} chars  {first[:70]}")
stats = dict(re.findall(r"'(edrew/[^']+)': (\d+)", open(log, encoding="utf-8").read()))
if stats:
    print("\nEDREW stats: " + ", ".join(f"{k[6:]}={v}" for k, v in sorted(stats.items())))
PY
