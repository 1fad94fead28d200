"""The EDREW_REDIS_ settings: defaults and one validated view of them per crawler.

The Redis server itself is scrapy-redis's setting, ``REDIS_URL`` (or ``REDIS_HOST``/``REDIS_PORT``).
"""
from __future__ import annotations

import math
import os
import socket
from dataclasses import dataclass

DEFAULTS = {
    "EDREW_REDIS_ENABLED": True,
    "EDREW_REDIS_LEASE_TIMEOUT": 60,       # seconds a lease lives without renewal before it is re-queued
    "EDREW_REDIS_POLL_INTERVAL": 0.5,      # seconds between looks at the shared queue while this process idles
    "EDREW_REDIS_CLOSE_WHEN_DONE": True,   # close once nothing is pending or leased; False: wait for more URLs
    "EDREW_REDIS_PROCESS": None,           # this process's name in the Redis stats; None: host:pid
    "EDREW_REDIS_EXPORTED_KEY": "%(spider)s:edrew:exported",
    "EDREW_REDIS_STATS_KEY": "%(spider)s:edrew:stats",
}


@dataclass(frozen=True)
class RedisSettings:
    enabled: bool
    lease_timeout: float
    poll_interval: float
    close_when_done: bool
    process: str
    exported_key: str
    stats_key: str

    @classmethod
    def from_settings(cls, settings) -> "RedisSettings":
        def get(name):
            return settings.get(name, DEFAULTS[name])

        lease_timeout = _positive(settings, "EDREW_REDIS_LEASE_TIMEOUT")
        poll_interval = _positive(settings, "EDREW_REDIS_POLL_INTERVAL")
        if poll_interval > lease_timeout:
            raise ValueError(f"EDREW_REDIS_POLL_INTERVAL ({poll_interval}) must not exceed "
                             f"EDREW_REDIS_LEASE_TIMEOUT ({lease_timeout})")
        for name in ("EDREW_REDIS_EXPORTED_KEY", "EDREW_REDIS_STATS_KEY"):
            if not isinstance(get(name), str) or not get(name).strip():
                raise ValueError(f"{name} must be a Redis key (\"%(spider)s\" is the spider's name), "
                                 f"not {get(name)!r}")
        return cls(
            enabled=settings.getbool("EDREW_REDIS_ENABLED", DEFAULTS["EDREW_REDIS_ENABLED"]),
            lease_timeout=lease_timeout,
            poll_interval=poll_interval,
            close_when_done=settings.getbool("EDREW_REDIS_CLOSE_WHEN_DONE", DEFAULTS["EDREW_REDIS_CLOSE_WHEN_DONE"]),
            process=str(get("EDREW_REDIS_PROCESS") or f"{socket.gethostname()}:{os.getpid()}"),
            exported_key=get("EDREW_REDIS_EXPORTED_KEY"),
            stats_key=get("EDREW_REDIS_STATS_KEY"),
        )


def _positive(settings, name: str) -> float:
    value = settings.get(name, DEFAULTS[name])
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name} must be a number of seconds > 0, not {value!r}")
    return number
