"""A scrapy-redis request queue whose requests are leased, not popped.

scrapy-redis's queues pop a request when a process takes it: a process killed with SIGKILL loses
every request it held. Here a request taken moves, in one Lua script, from the pending sorted set to
a lease: a token with a deadline (the server's clock, so machines need not agree on the time). The
process renews its leases while it works on them and acknowledges each one when its response has
been fully processed; a lease whose deadline passes (its process died or hung) is put back in the
pending set by whichever process looks next. Keys, next to scrapy-redis's queue key K:

* ``K``: pending requests, a sorted set scored by -priority (as scrapy_redis.queue.PriorityQueue);
* ``K:leases``: lease token -> deadline in ms (sorted set);
* ``K:leased`` and ``K:leased-scores``: lease token -> the request and its score (hashes);
* ``K:lease-seq``: the counter that names lease tokens.

An acknowledgement can also add keys to a set in the same script (the page items exported under
the lease), so "acknowledged" and "exported" never disagree in Redis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional

from scrapy_redis.queue import Base

# The server's clock in ms; Redis >= 5 replicates a script's effects, so TIME may precede writes.
_NOW = """
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# KEYS: pending, leases, leased, scores, seq; ARGV: lease ms, how many
_LEASE = _NOW + """
local items = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #items, 2 do
  local member, score = items[i], items[i + 1]
  redis.call('ZREM', KEYS[1], member)
  local token = tostring(redis.call('INCR', KEYS[5]))
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), token)
  redis.call('HSET', KEYS[3], token, member)
  redis.call('HSET', KEYS[4], token, score)
  out[#out + 1] = token
  out[#out + 1] = member
end
return out
"""

# KEYS: leases, leased, scores, exported; ARGV: token, exported keys...
_ACK = """
local held = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
for i = 2, #ARGV do redis.call('SADD', KEYS[4], ARGV[i]) end
return held
"""

# KEYS: leases; ARGV: lease ms, tokens...  (only leases still held are renewed: ZADD XX)
_RENEW = _NOW + """
local renewed = 0
for i = 2, #ARGV do
  renewed = renewed + redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[i])
end
return renewed
"""

# Put leases back in the pending set. KEYS: pending, leases, leased, scores;
# ARGV: 'expired', limit  |  'these', tokens...
_REQUEUE = _NOW + """
local tokens
if ARGV[1] == 'expired' then
  tokens = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
else
  tokens = {}
  for i = 2, #ARGV do tokens[#tokens + 1] = ARGV[i] end
end
local requeued = 0
for _, token in ipairs(tokens) do
  if redis.call('ZREM', KEYS[2], token) == 1 then
    local member = redis.call('HGET', KEYS[3], token)
    local score = redis.call('HGET', KEYS[4], token)
    if member then
      redis.call('ZADD', KEYS[1], score or 0, member)
      requeued = requeued + 1
    end
  end
  redis.call('HDEL', KEYS[3], token)
  redis.call('HDEL', KEYS[4], token)
end
return requeued
"""


@dataclass(frozen=True)
class QueueCounts:
    pending: int
    leased: int

    @property
    def drained(self) -> bool:
        return not self.pending and not self.leased


class LeaseQueue(Base):
    """scrapy-redis queue (``server, spider, key, serializer``) with leases; see the module docstring.

    `pop` returns a request and leaves its lease token in ``request.meta[LEASE_META]``; the caller
    must `ack` or `release` it (or let it expire). `push` takes requests as scrapy-redis's
    PriorityQueue does, so a crawl may switch between the two on one Redis.
    """

    lease_ms = 60_000

    def __init__(self, server, spider, key, serializer=None):
        super().__init__(server, spider, key, serializer)
        self.leases_key = f"{self.key}:leases"
        self.leased_key = f"{self.key}:leased"
        self.scores_key = f"{self.key}:leased-scores"
        self.seq_key = f"{self.key}:lease-seq"
        self._lease = server.register_script(_LEASE)
        self._ack = server.register_script(_ACK)
        self._renew = server.register_script(_RENEW)
        self._requeue = server.register_script(_REQUEUE)

    # ---------------------------------------------------------- scrapy-redis's queue interface

    def __len__(self) -> int:
        """Pending requests (not those leased)."""
        return self.server.zcard(self.key)

    def push(self, request) -> None:
        self.server.execute_command("ZADD", self.key, -request.priority, self._encode_request(request))

    def pop(self, timeout=0):
        """The next request, leased (never blocks: `timeout` is accepted for the interface only)."""
        taken = self.lease(1)
        return taken[0] if taken else None

    def clear(self) -> None:
        self.server.delete(self.key, self.leases_key, self.leased_key, self.scores_key, self.seq_key)

    # ---------------------------------------------------------- leases

    def lease(self, count: int = 1) -> List:
        """Up to `count` requests, highest priority first, each with its token in meta."""
        reply = self._lease(keys=[self.key, self.leases_key, self.leased_key, self.scores_key, self.seq_key],
                            args=[int(self.lease_ms), int(count)])
        requests = []
        for token, data in zip(reply[::2], reply[1::2]):
            request = self._decode_request(data)
            request.meta[LEASE_META] = _text(token)
            requests.append(request)
        return requests

    def ack(self, token: str, exported: Iterable[str] = (), exported_key: Optional[str] = None) -> bool:
        """End a lease; False when it had already expired and gone back to the pending set (then the
        request will be fetched again). `exported` keys are added to the set `exported_key`."""
        exported = list(exported)
        if exported and not exported_key:
            raise ValueError("exported keys need exported_key")
        held = self._ack(keys=[self.leases_key, self.leased_key, self.scores_key, exported_key or self.key],
                         args=[token, *exported])
        return bool(held)

    def renew(self, tokens: Iterable[str]) -> int:
        """Push the deadline of these leases forward; returns how many were still held."""
        tokens = list(tokens)
        if not tokens:
            return 0
        return int(self._renew(keys=[self.leases_key], args=[int(self.lease_ms), *tokens]))

    def requeue_expired(self, limit: int = 1000) -> int:
        """Put leases whose deadline has passed back in the pending set; returns how many."""
        return int(self._requeue(keys=self._requeue_keys(), args=["expired", int(limit)]))

    def release(self, tokens: Iterable[str]) -> int:
        """Put these leases back in the pending set now (a process that stops before finishing them)."""
        tokens = list(tokens)
        if not tokens:
            return 0
        return int(self._requeue(keys=self._requeue_keys(), args=["these", *tokens]))

    def started(self) -> bool:
        """Whether any request was ever leased from this queue (its keys not deleted since)."""
        return bool(self.server.exists(self.seq_key))

    def counts(self) -> QueueCounts:
        with self.server.pipeline(transaction=True) as pipe:
            pipe.zcard(self.key)
            pipe.zcard(self.leases_key)
            pending, leased = pipe.execute()
        return QueueCounts(int(pending), int(leased))

    def _requeue_keys(self) -> List[str]:
        return [self.key, self.leases_key, self.leased_key, self.scores_key]


LEASE_META = "edrew_redis_lease"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
