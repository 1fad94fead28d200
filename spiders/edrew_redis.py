"""`scrapy crawl edrew-redis`: a crawl shared by processes through Redis (edrew_scrapy.spiders.edrew_redis,
docs/distributed.md)."""
from edrew_scrapy.spiders.edrew_redis import EdrewRedisSpider as _EdrewRedisSpider


class EdrewRedisSpider(_EdrewRedisSpider):
    # Defined here, not imported: Scrapy's spider loader only takes the classes a module defines.
    __doc__ = _EdrewRedisSpider.__doc__
