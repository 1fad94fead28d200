# What scripts/demo.sh, pdf-demo.sh and redis-demo.sh share: `source scripts/lib.sh` from the repository root.

# retry TRIES COMMAND...: run COMMAND every 0.1 s until it succeeds, TRIES times at most; status 1 if it never did.
retry() {
    local tries=$1 _
    shift
    for _ in $(seq "$tries"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

_has_match() {
    [ -n "$(sed -n "$2" "$1" | head -n 1)" ]
}

# first_match FILE SED_SCRIPT: the first line `sed -n SED_SCRIPT FILE` prints, waiting up to 10 s for a server
# started in the background to write it to its log FILE; empty if it never does.
first_match() {
    retry 100 _has_match "$1" "$2" || true
    sed -n "$2" "$1" | head -n 1
}

# the port `python -m http.server 0` says it listens on, for first_match
HTTP_SERVER_PORT='s/.* port \([0-9][0-9]*\).*/\1/p'

# server_started VALUE WHAT LOG: where VALUE (what first_match read) is empty, say that WHAT did not start,
# show its LOG and exit 1.
server_started() {
    if [ -z "$1" ]; then
        echo "$(basename "$0"): $2 did not start:" >&2
        cat "$3" >&2
        exit 1
    fi
}

# crawl LOG ARGS...: `scrapy crawl ARGS...`, whose ARGS set LOG_FILE=LOG; if it fails, the end of LOG and exit 1.
crawl() {
    local log=$1
    shift
    if ! scrapy crawl "$@"; then
        echo "$(basename "$0"): the crawl failed; the end of $log:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}
