"""Old import path of the worker process pool; see processpool.py."""
from .processpool import MAX_RESTARTS, ProcessPool, WorkerError, main_module_problem

__all__ = ["MAX_RESTARTS", "ProcessPool", "WorkerError", "main_module_problem"]
