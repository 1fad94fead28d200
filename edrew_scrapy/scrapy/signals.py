"""The add-on's own Scrapy signal, for components that follow the items of each response.

``page_items_sent`` (arguments: ``items``, ``response``, ``spider``) is sent when EdrewSpiderMiddleware
hands a page's items straight to the item pipelines instead of yielding them in the spider's output:
a callback that raised before returning any output has no output to carry them. It is sent before
any of them enters the pipelines, so a handler can count them as pending before their item_scraped,
item_dropped or item_error arrives (the Redis lease book does, so that the page's lease waits for them).
"""

page_items_sent = object()
