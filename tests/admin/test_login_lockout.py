"""The admin login locks a username out from one client address after AXES_FAILURE_LIMIT (5) wrong
passwords, until AXES_COOLOFF_MINUTES (15) pass without a try; other usernames and addresses, and
the API, go on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User
from django.test import Client, override_settings

LOGIN = "/admin/login/"
START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def staff(db) -> list[User]:
    return [
        User.objects.create_user(username=name, password=f"right-{name}", is_staff=True, is_superuser=True)
        for name in ("sam", "kim")
    ]


def login(username: str, password: str, ip: str = "10.0.0.1", **headers: str):
    """POST the admin login form from ``ip``; the response and whether a session was opened."""
    client = Client(REMOTE_ADDR=ip, **headers)
    response = client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"})
    return response, "_auth_user_id" in client.session


def test_five_wrong_passwords_lock_that_username_from_that_address_for_15_minutes(staff, owner, conversation):
    with time_machine.travel(START, tick=False) as clock:
        for _ in range(4):
            response, logged_in = login("sam", "wrong")
            assert response.status_code == 200 and not logged_in, "the form again, with its error"
        response, logged_in = login("sam", "wrong")
        assert response.status_code == 429 and not logged_in, "the fifth failure locks"

        response, logged_in = login("sam", "right-sam")
        assert response.status_code == 429 and not logged_in, "locked: even the right password is refused"
        response, logged_in = login("kim", "right-kim")
        assert response.status_code == 302 and logged_in, "another username from the same address"
        response, logged_in = login("sam", "right-sam", ip="10.0.0.2")
        assert response.status_code == 302 and logged_in, "the same username from another address"
        api = owner.get(f"/api/v1/conversations/{conversation.public_id}/")
        assert api.status_code == 200, "API keys are not passwords: the API is not affected"

        probe = START + timedelta(minutes=14, seconds=59)
        clock.move_to(probe)
        response, _ = login("sam", "right-sam")
        assert response.status_code == 429, "still inside the cool-off (and this try starts it again)"
        clock.move_to(probe + timedelta(minutes=15, seconds=1))
        response, logged_in = login("sam", "right-sam")
        assert response.status_code == 302 and logged_in, "after the cool-off the right password works"


def test_a_successful_login_resets_the_count(staff):
    with time_machine.travel(START, tick=False):
        for _ in range(4):
            login("sam", "wrong")
        assert login("sam", "right-sam")[1]
        for _ in range(4):
            login("sam", "wrong")
        response, logged_in = login("sam", "right-sam")
        assert response.status_code == 302 and logged_in, "4 + 4 failures with a success between"


@override_settings(TIMELINE_BEHIND_TLS_PROXY=True)
def test_behind_the_proxy_the_address_it_appended_counts_not_one_the_client_sent(staff):
    with time_machine.travel(START, tick=False):
        for n in range(5):  # a different spoofed first entry each time, appended by the proxy after it
            login("sam", "wrong", ip="127.0.0.1", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.7")
        locked, _ = login("sam", "right-sam", ip="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7")
        assert locked.status_code == 429
        response, logged_in = login("sam", "right-sam", ip="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.8")
        assert response.status_code == 302 and logged_in, "another client behind the same proxy"
