"""The bundled Scrapy project, for an installed copy: ``SCRAPY_SETTINGS_MODULE=edrew_scrapy.project.settings
scrapy crawl edrew -a urls=...`` runs the spiders of edrew_scrapy.spiders with the add-on on.

In a clone, scrapy.cfg points at spiders.settings (the top-level spiders/ folder), which takes these
settings with the clone's own spider modules.
"""
