#!/usr/bin/env bash
# Crawl the bundled PDF articles demo (demo/articles/serve.py on 127.0.0.1) with `scrapy crawl articles`.
# Usage: bash scripts/pdf-demo.sh [more `scrapy crawl` options]
# Writes output/pdf-demo.jsonl (one item per PDF), output/pdf-demo.log and the PDFs under output/pdf-demo-files.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
source scripts/lib.sh

out_dir=${EDREW_DEMO_OUT:-output}
mkdir -p "$out_dir"
out=$out_dir/pdf-demo.jsonl
log=$out_dir/pdf-demo.log
server_log=$out_dir/pdf-demo-server.log

python -u demo/articles/serve.py 0 >"$server_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
url=$(first_match "$server_log" 's/^serving on \(http:[^ ]*\)$/\1/p')
server_started "$url" "the demo server" "$server_log"
echo "Serving the PDF demo at $url; crawling it with: scrapy crawl articles -a urls=$url -O $out"
crawl "$log" articles -a urls="$url" -O "$out" -s LOG_FILE="$log" -s FILES_STORE="$out_dir/pdf-demo-files" "$@"

python - "$out" "$log" <<'PY'
import json, re, sys
out, log = sys.argv[1:]
items = [json.loads(line) for line in open(out, encoding="utf-8") if line.strip()]
print(f"\n{len(items)} articles in {out} (crawl log: {log})\n")
for item in sorted(items, key=lambda i: i["url"]):
    sections = len(item.get("sections") or [])
    print(f"  {item['url'].split('/', 3)[-1]:<22} {item.get('title') or '-':<52} {', '.join(item.get('authors') or [])}"
          f"  ({sections} sections, {len(item.get('references') or [])} references)")
stats = {k: int(v) for k, v in re.findall(r"'(edrew/pdf/[^']+)': (\d+)", open(log, encoding="utf-8").read())}
print("\nstats: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())))
PY
