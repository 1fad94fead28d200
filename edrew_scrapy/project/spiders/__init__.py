"""The bundled project's spiders (SPIDER_MODULES of edrew_scrapy.project.settings)."""
