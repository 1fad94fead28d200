"""The repository's Scrapy project (scrapy.cfg -> spiders.settings): `scrapy crawl NAME` from the clone.

One thin module per spider over its class in edrew_scrapy.spiders, where installed users import it
from. Not installed with the package: a top-level ``spiders`` in site-packages would shadow (or be
shadowed by) any other project's.
"""
