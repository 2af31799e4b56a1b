"""A render pauses Python's cyclic garbage collector (services/render.py): it must be back on
after every render, nested or on other threads, and stay off when it was off before."""

import gc
import threading
from contextlib import contextmanager

import pytest

from timeline_app.services import render
from timeline_app.services.render import collector_paused


@pytest.fixture(autouse=True)
def _collector_on():
    gc.enable()
    yield
    gc.enable()


def test_off_inside_and_back_on_after_nested_pauses():
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_back_on_after_an_exception():
    with pytest.raises(ValueError), collector_paused():
        raise ValueError
    assert gc.isenabled()


def test_stays_off_when_it_was_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


@contextmanager
def _render_on_another_thread():
    """Another thread holds a pause for the duration of the block."""
    inside, release = threading.Event(), threading.Event()

    def other():
        with collector_paused():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(5)
    try:
        yield
    finally:
        release.set()
        thread.join(5)


def test_one_thread_ending_its_pause_leaves_it_off_for_another():
    with _render_on_another_thread():
        with collector_paused():
            pass
        assert not gc.isenabled()  # the other thread is still rendering
    assert gc.isenabled()


def test_overlapping_renders_still_collect_every_max_pause(monkeypatch):
    now = [100.0]
    collections = []
    monkeypatch.setattr(render, "_clock", lambda: now[0])
    monkeypatch.setattr(render.gc, "collect", lambda *args: collections.append(args))
    with _render_on_another_thread():
        with collector_paused():
            now[0] += render.MAX_PAUSE_SECONDS  # not yet over
        assert collections == []
        with collector_paused():
            now[0] += 0.5
        assert collections == [()]  # over: one full collection, the pause goes on
        assert not gc.isenabled()
        with collector_paused():
            now[0] += 0.5
        assert collections == [()]  # the clock restarted at that collection
    assert gc.isenabled()
