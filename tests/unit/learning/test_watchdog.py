"""The loop's watchdog runs in every worker's heartbeat thread (no beat process): at the first beat, then once
per WATCHDOG_SECONDS, not at every beat, and again at the next beat when it failed (the database away)."""
from __future__ import annotations

import threading
import time

from learning.services import workers


def _run(monkeypatch, watchdog, *, seconds: float) -> None:
    monkeypatch.setattr(workers, "HEARTBEAT_SECONDS", 0.02)
    monkeypatch.setattr(workers, "WATCHDOG_SECONDS", 0.3)
    monkeypatch.setattr(workers, "withdraw", lambda host, pid: None)
    heartbeat = workers.Heartbeat(consumer=None, on_lost=lambda lost: None, watchdog=watchdog)
    beats = []
    monkeypatch.setattr(heartbeat, "beat", lambda: beats.append(time.monotonic()))
    heartbeat.start()
    time.sleep(seconds)
    heartbeat.stop()
    assert len(beats) > 10 * (seconds / 0.3) / 2  # many beats for each watchdog


def test_the_watchdog_is_sent_once_a_period_not_at_every_beat(monkeypatch):
    sent = []
    _run(monkeypatch, lambda: sent.append(time.monotonic()), seconds=1.4)
    # One at once (the worker's start), then one per 0.3 s: 5 in 1.4 s, never two together.
    assert 4 <= len(sent) <= 5
    assert all(later - earlier >= 0.3 for earlier, later in zip(sent, sent[1:]))


def test_a_watchdog_that_could_not_be_sent_is_tried_again_at_the_next_beat(monkeypatch):
    attempts, lock = [], threading.Lock()

    def broker_away_twice():
        with lock:
            attempts.append(time.monotonic())
            if len(attempts) <= 2:
                raise ConnectionError("the database is away")

    started = time.monotonic()
    _run(monkeypatch, broker_away_twice, seconds=0.8)
    # Due at once: two failures at the first beats, then sent; the next is due 0.3 s after that one.
    assert len(attempts) >= 3
    assert attempts[2] - attempts[0] < 0.2 and attempts[0] - started < 0.2
