"""Worker start-up: a worker that dies or hangs while it loads the model, and Ctrl-C while the crawl
waits for it. Each case is a real `scrapy crawl edrew` subprocess against a server on 127.0.0.1; the test
finds the crawl's worker process in /proc and kills or stops it while it loads (importing torch and
reading the model take seconds; the test looks every 20 ms). Subprocess timeouts only guard against hangs.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import ROOT, RecordingServer, crawl_command, crawl_env, model_missing_reason, read_jsonl  # noqa: E402

pytestmark = [pytest.mark.crawl,
              pytest.mark.skipif(model_missing_reason() is not None, reason=str(model_missing_reason()))]

ARTICLE = (b"<!DOCTYPE html><html><head><title>Story %d</title></head><body><article><h1>Story %d</h1>"
           b"<p>Reporters found that story %d was about the river, the bridge and the people of the town, "
           b"who met on Tuesday to talk about the flood defences for the coming winter.</p></article></body></html>")
HTML = {"Content-Type": "text/html; charset=utf-8"}
GUARD_S = 240


@pytest.fixture(scope="module")
def site():
    routes = {f"/{i}": (200, HTML, ARTICLE % (i, i, i)) for i in range(1, 4)}
    routes["/"] = (200, HTML, b"<html><body><a href='/1'>1</a> <a href='/2'>2</a> <a href='/3'>3</a>"
                              b"<p>The stories of the day, with words enough to read.</p></body></html>")
    with RecordingServer(routes) as server:
        yield server


def spawned_workers(pid: int) -> List[int]:
    kids: List[str] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            kids += (task / "children").read_text().split()
    except OSError:  # the crawl or one of its threads ended meanwhile
        return []
    found = []
    for kid in kids:
        try:
            if b"spawn_main" in Path(f"/proc/{kid}/cmdline").read_bytes():
                found.append(int(kid))
        except OSError:
            pass
    return found


def first_worker(crawl: subprocess.Popen) -> int:
    """The crawl's first worker process, as soon as it exists (it is loading the model then)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and crawl.poll() is None:
        found = spawned_workers(crawl.pid)
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("no worker process appeared")


def start_crawl(site, tmp_path: Path, *args: str) -> subprocess.Popen:
    command = crawl_command(site.url + "/", tmp_path / "stats.json", "-s", "EDREW_WORKERS=1",
                            "-o", str(tmp_path / "out.jsonl"), *args)
    return subprocess.Popen(command, cwd=str(ROOT), env=crawl_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(crawl: subprocess.Popen) -> str:
    try:
        _, stderr = crawl.communicate(timeout=GUARD_S)
    except subprocess.TimeoutExpired:
        # a hang: the crawl and its workers go, or a stopped worker would hold the output pipes open
        for pid in [*spawned_workers(crawl.pid), crawl.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        crawl.communicate(timeout=30)
        raise
    return stderr


def stats_of(tmp_path: Path) -> dict:
    import json

    return json.loads((tmp_path / "stats.json").read_text("utf-8"))


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def test_a_worker_killed_while_loading_is_replaced_and_the_crawl_goes_on(site, tmp_path):
    crawl = start_crawl(site, tmp_path)
    os.kill(first_worker(crawl), signal.SIGKILL)
    stderr = finish(crawl)
    assert crawl.returncode == 0, stderr[-3000:]
    stats = stats_of(tmp_path)
    assert stats.get("edrew/workers/died") == 1 and stats.get("edrew/workers/restarts") == 1, stats
    assert "while loading the model; starting a new one" in stderr
    assert "cannot load its model" not in stderr  # the model is not blamed
    assert {item["url"] for item in read_jsonl(tmp_path / "out.jsonl")} >= {f"{site.url}/{i}" for i in range(1, 4)}


def test_a_worker_hung_while_loading_is_timed_out_and_replaced(site, tmp_path):
    crawl = start_crawl(site, tmp_path, "-s", "EDREW_WORKER_TIMEOUT=30")
    stopped = first_worker(crawl)
    os.kill(stopped, signal.SIGSTOP)
    stderr = finish(crawl)
    assert crawl.returncode == 0, stderr[-3000:]
    stats = stats_of(tmp_path)
    assert stats.get("edrew/workers/timeouts") == 1 and stats.get("edrew/workers/restarts") == 1, stats
    assert "gave no sign of life in 30 s (EDREW_WORKER_TIMEOUT) while loading the model" in stderr
    assert {item["url"] for item in read_jsonl(tmp_path / "out.jsonl")} >= {f"{site.url}/{i}" for i in range(1, 4)}
    assert gone(stopped)  # killed, not left stopped


def test_ctrl_c_during_a_hung_start_up_stops_the_crawl_and_its_worker(site, tmp_path):
    crawl = start_crawl(site, tmp_path)  # EDREW_WORKER_TIMEOUT's 300 s: only Ctrl-C ends the wait
    stopped = first_worker(crawl)
    os.kill(stopped, signal.SIGSTOP)
    time.sleep(1)
    crawl.send_signal(signal.SIGINT)
    try:
        stderr = finish(crawl)
    finally:
        deadline = time.monotonic() + 10  # SIGKILLed by the crawl; reaped by init once the crawl is gone
        while not gone(stopped) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not gone(stopped):
            os.kill(stopped, signal.SIGKILL)
            raise AssertionError("the stopped worker outlived the interrupted crawl")
    assert crawl.returncode != 0
    assert "EDREW start-up interrupted: SIGINT while a worker process was loading the model" in stderr, stderr[-3000:]
    assert read_jsonl(tmp_path / "out.jsonl") == []
