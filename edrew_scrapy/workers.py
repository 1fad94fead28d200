"""Old import path of the worker process entry point; see edrew_scrapy/scrapy/worker.py."""
from .scrapy.worker import Outcome, PageInput, WorkerStartError, bootstrap, init, process, ready

__all__ = ["Outcome", "PageInput", "WorkerStartError", "bootstrap", "init", "process", "ready"]
