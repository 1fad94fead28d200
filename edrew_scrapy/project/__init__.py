"""The bundled Scrapy project (``scrapy.cfg`` -> ``edrew_scrapy.project.settings``): ``scrapy crawl edrew -a urls=...``.

Inside the package, not a top-level ``spiders`` package: a wheel installed one into site-packages, where
it would shadow (or be shadowed by) any other project's ``spiders``. Outside a clone, name the settings:
``SCRAPY_SETTINGS_MODULE=edrew_scrapy.project.settings scrapy crawl edrew -a urls=...``.
"""
