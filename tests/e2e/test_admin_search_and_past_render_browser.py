"""Issue 25 in a real browser (headless Chromium, 1366 px): a support user limited to one tenant
searches the conversation list by a word in the blocks (another tenant's conversation carries the
same word, id and title words: never found), then opens each row of a conversation's render
history — renders before and after a manual hide, a TTL prune and a compaction — and each shows
"exact". Screenshots go to tests/artifacts/."""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from selenium.webdriver.common.by import By

from tests.admin.test_past_render import _history
from tests.e2e.test_admin_browser import BROWSER_TESTS, browser, screenshot
from tests.fixtures.two_tenants import WORD
from timeline_app import roles
from timeline_app.models import RenderRecord, Tenant

__all__ = ["browser"]  # the fixture, shared with test_admin_browser

pytestmark = BROWSER_TESTS


def _login(browser, live_server, username: str, password: str) -> None:
    browser.get(f"{live_server.url}/admin/login/?next=/admin/timeline_app/conversation/")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()


def test_limited_support_user_searches_by_block_text_and_opens_exact_past_renders(
    live_server, browser, two_tenants
):
    roles.ensure_roles()
    user = User.objects.create_user(username="sam", password="sam-password-1", is_staff=True)
    user.groups.add(Group.objects.get(name=roles.SUPPORT))
    acme = Tenant.objects.get(name="acme")
    acme.staff_users.add(user)
    conversation, timeline, _ = _history(acme)
    _login(browser, live_server, "sam", "sam-password-1")

    # One box: a word that only the blocks carry (globex/c1 carries it too: not found).
    box = browser.find_element(By.ID, "searchbar")
    box.send_keys(WORD)
    box.submit()
    rows = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    found = sorted(row.find_element(By.CSS_SELECTOR, "th a").text for row in rows)
    assert found == ["c1", "c2"], found
    page = browser.page_source
    assert "ACMEC1MARK" in page and "GLOBEXC1MARK" not in page and "globex" not in page
    shot = screenshot(browser, "admin-21-search-by-block-text")
    assert shot.stat().st_size > 10_000  # not a blank page

    # The conversation's render history: every row opens its render, rebuilt exactly.
    browser.get(f"{live_server.url}/admin/timeline_app/conversation/{conversation.pk}/change/")
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a.tl-past-render")]
    assert len(links) == RenderRecord.objects.filter(timeline=timeline).count() == 5
    for number, href in enumerate(reversed(links), start=1):  # oldest first
        browser.get(href)
        verdict = browser.find_element(By.ID, "tl-replay-verdict")
        assert verdict.text == "exact", browser.find_element(By.ID, "content-main").text[:2000]
        assert browser.find_element(By.ID, "tl-past-render").text.strip()
        if number in (2, 3, 4):  # after the hide; the TTL prune; after the compaction
            shot = screenshot(browser, f"admin-2{number}-past-render-{number}")
            assert shot.stat().st_size > 10_000
