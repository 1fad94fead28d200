"""A real headless browser for the report tests: Debian's chromium, which scripts/test.sh installs.

Where it is missing the tests that need it skip with the reason, except in CI (CI=true), where a missing
browser fails them: the set-up script was meant to install it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# headless, without a sandbox (tests may run as root, which chromium's sandbox refuses), GPU or first-run
# chores, and no network beyond the files given
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--hide-scrollbars", "--force-device-scale-factor=1",
         "--virtual-time-budget=3000"]


def browser() -> str:
    """The chromium executable; a skip (or, in CI, a failure) that says why when there is none."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    reason = "chromium is not installed (apt-get install chromium; scripts/test.sh installs it as root or in CI)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the browser tests")
    pytest.skip(reason)


def _run(args: List[str], home: Path) -> subprocess.CompletedProcess:
    # a profile of its own per call: chromium keeps state (and a lock) in its user data directory
    env = dict(os.environ, HOME=str(home))
    return subprocess.run([browser(), *FLAGS, f"--user-data-dir={home / 'profile'}", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def dump_dom(path: Path, home: Path) -> str:
    """The DOM of a local HTML file after the browser has loaded it and run whatever it lets run."""
    proc = _run(["--dump-dom", path.resolve().as_uri()], home)
    assert proc.returncode == 0 and "<html" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def screenshot(path: Path, out: Path, home: Path, width: int = 1200, height: int = 1400) -> Path:
    """A PNG of the file as the browser renders it in a window of width x height."""
    proc = _run([f"--screenshot={out}", f"--window-size={width},{height}", path.resolve().as_uri()], home)
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return out
