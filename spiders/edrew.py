"""`scrapy crawl edrew -a urls=...`: the generic crawler of edrew_scrapy.spiders.edrew."""
from edrew_scrapy.spiders import EdrewSpider as _EdrewSpider


class EdrewSpider(_EdrewSpider):
    # Defined here, not imported: Scrapy's spider loader only takes the classes a module defines.
    __doc__ = _EdrewSpider.__doc__
