"""The bundled Scrapy project (``scrapy.cfg`` -> ``spiders.settings``): ``scrapy crawl edrew -a urls=...``."""
