"""`scrapy crawl articles -a urls=LISTING_URL[,...] [-a depth=N]`: PDF articles from listing pages, the
spider of edrew_scrapy.spiders.articles."""
from edrew_scrapy.spiders import ArticlesSpider as _ArticlesSpider


class ArticlesSpider(_ArticlesSpider):
    # Defined here, not imported: Scrapy's spider loader only takes the classes a module defines.
    __doc__ = _ArticlesSpider.__doc__
