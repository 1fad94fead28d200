"""Distributed crawls through Redis (scrapy-redis), with leased requests: docs/distributed.md.

Needs the ``redis`` extra (``pip install edrew-scrapy[redis]``): scrapy-redis and redis-py.
"""
from .addon import RedisAddon
from .queue import LeaseQueue
from .scheduler import LeasingScheduler

__all__ = ["LeaseQueue", "LeasingScheduler", "RedisAddon"]
