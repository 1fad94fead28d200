"""The ``request.meta`` / ``response.meta`` keys through which the downloader middleware hands a page to
the spider middleware (and to spider callbacks, which may read the first two)."""

META_KEY = "edrew_page"  # the serialised Page
EXTRACTION_KEY = "edrew_extraction"  # its Extraction, once scored
PARSED_KEY = "_edrew_parsed"  # set by EdrewSpiderMiddleware when the response reaches its callback
ITEMS_SENT_KEY = "_edrew_items_sent"  # set once the page's items have left, so that no path sends them twice
OPT_OUT_KEY = "edrew"  # a request with meta["edrew"] = False is left alone
