"""The support admin in a real browser (headless Chromium): a support user logs in, opens a
compacted conversation, a summary's digest and a hidden block. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from tests.admin.builders import compacted_conversation, rendered_history
from timeline_app import roles
from timeline_app.models import Block, Compaction, Tenant

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
# A laptop screen: what support staff have when a ticket comes in.
NARROW = 1366

# The marks of every admin browser test.
BROWSER_TESTS = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason="needs Debian chromium and chromium-driver (make test installs them)",
    ),
]
pytestmark = BROWSER_TESTS


@pytest.fixture
def browser() -> Iterator[object]:
    profile = tempfile.mkdtemp(prefix="tl-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--window-size={NARROW},1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    # The console, so a test can say the page logged no error.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver, name: str, element=None, width: int = NARROW) -> Path:
    """A full-page screenshot, or one element whole (the window grows to the page's height first)."""
    ARTIFACTS.mkdir(exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(max(int(height), 800), 12000))
    target = ARTIFACTS / f"{name}.png"
    save = driver.save_screenshot if element is None else element.screenshot
    assert save(str(target)), f"could not save {target}"
    driver.set_window_size(width, 1000)
    return target


def test_support_user_browses_a_compacted_conversation(live_server, browser):
    roles.ensure_roles()
    user = User.objects.create_user(username="sam", password="sam-password-1", is_staff=True)
    user.groups.add(Group.objects.get(name=roles.SUPPORT))
    conversation, _ = compacted_conversation(Tenant.objects.create(name="acme"))

    browser.get(f"{live_server.url}/admin/login/?next=/admin/timeline_app/conversation/")
    browser.find_element(By.NAME, "username").send_keys("sam")
    browser.find_element(By.NAME, "password").send_keys("sam-password-1")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    # The list, with the conversation and its numbers.
    assert browser.find_element(By.ID, "result_list")
    assert "Dinner plans" in browser.page_source
    screenshot(browser, "admin-01-conversation-list")
    browser.find_element(By.LINK_TEXT, conversation.public_id).click()

    # The conversation page: compacted turns collapsed under the summary; no operator controls.
    section = browser.find_element(By.CSS_SELECTOR, "section.tl-compacted")
    compacted_turns = section.find_element(By.CSS_SELECTOR, "details.tl-compacted-turns")
    assert compacted_turns.get_attribute("open") is None
    assert not compacted_turns.find_element(By.CSS_SELECTOR, ".tl-turn").is_displayed()
    assert not browser.find_elements(By.CSS_SELECTOR, "form.tl-compact-form")
    assert not browser.find_elements(By.CSS_SELECTOR, "a.tl-export-link")
    screenshot(browser, "admin-02-conversation")

    # Open the summary's digest: readable tables, the hidden block listed.
    digest = section.find_element(By.CSS_SELECTOR, "details.tl-digest-details")
    digest.find_element(By.TAG_NAME, "summary").click()
    hidden_table = digest.find_element(By.XPATH, ".//h4[starts-with(normalize-space(), 'Hidden blocks')]")
    assert hidden_table.is_displayed()
    assert "tc:turn_t001.tc_t001x0.result" in digest.text
    compacted_turns.find_element(By.TAG_NAME, "summary").click()
    assert compacted_turns.find_element(By.CSS_SELECTOR, ".tl-turn").is_displayed()
    screenshot(browser, "admin-03-summary-digest-and-compacted-turns", section)

    # A hidden block in the visible window: reason, replacement text, the original on demand.
    row = browser.find_element(By.CSS_SELECTOR, "section.tl-compacted ~ .tl-turn tr.tl-hidden")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    assert "hidden · ttl" in row.text.lower()
    assert "Replaced by:" in row.text
    row.find_element(By.CSS_SELECTOR, "details.tl-hidden-original summary").click()
    assert "Result 8" in row.text
    turn = row.find_element(By.XPATH, "./ancestor::div[contains(@class, 'tl-turn')]")
    screenshot(browser, "admin-04-hidden-block-in-its-turn", turn)

    # The hidden block's own page (read-only, no save button).
    row.find_element(By.CSS_SELECTOR, "td a").click()
    assert "[pruned: tool output, read it by path]" in browser.page_source
    assert not browser.find_elements(By.NAME, "_save")
    screenshot(browser, "admin-05-hidden-block")

    # The render preview with cache points marked.
    browser.back()
    browser.find_element(By.CSS_SELECTOR, ".object-tools a[href*='/render/']").click()
    marks = browser.find_elements(By.CSS_SELECTOR, "pre.tl-render mark")
    assert marks and marks[0].text.startswith("=>[")
    screenshot(browser, "admin-06-render-preview")


def _login(browser, live_server, next_url: str, username: str = "sam", group: str = roles.SUPPORT) -> None:
    """A new staff user ``username`` of ``group`` signs in and lands on ``next_url``."""
    roles.ensure_roles()
    password = f"{username}-password-1"
    user = User.objects.create_user(username=username, password=password, is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    browser.get(f"{live_server.url}/admin/login/?next={next_url}")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()


def operator_on_compacted_conversation(live_server, browser) -> Compaction:
    """Operator "olga" signed in on the change page of acme's compacted conversation; its applied
    compaction."""
    conversation, timeline = compacted_conversation(Tenant.objects.create(name="acme"))
    next_url = f"/admin/timeline_app/conversation/{conversation.pk}/change/"
    _login(browser, live_server, next_url, username="olga", group=roles.OPERATOR)
    return Compaction.objects.get(timeline=timeline, status="applied")


def _long_values(tenant: Tenant) -> None:
    """The widest values a list meets: a long title, a failed compaction with a long error and
    model name, long paths."""
    _, timeline = compacted_conversation(
        tenant, public_id="conv-2026-03-01-support-ticket-48151623", title="Trip planning " * 12
    )
    Compaction.objects.create(
        timeline=timeline,
        trigger="background",
        status="failed",
        summarizer="anthropic",
        model="claude-sonnet-4-5-20250929-extended-context",
        error="APITimeoutError: " + "the provider did not answer in time; " * 8,
        before_tokens=123456,
        duration_ms=30000,
        started_at=timezone.now(),
        finished_at=timezone.now(),
    )
    Block.objects.filter(timeline=timeline, type="react.tool.result").update(
        path="tc:turn_2026_03_01_with_a_long_id.tc_web_search_0123456789abcdef.result"
    )


def test_list_pages_fit_a_1366px_window_with_their_status_columns(live_server, browser):
    _long_values(Tenant.objects.create(name="acme-international-holdings"))
    _login(browser, live_server, "/admin/timeline_app/conversation/")
    browser.set_window_size(NARROW, 900)
    lists = {
        "conversation": "column-compactions",
        "compaction": "column-status_badge",
        "block": "column-hidden_display",
    }
    for model, status_column in lists.items():
        browser.get(f"{live_server.url}/admin/timeline_app/{model}/")
        viewport = browser.execute_script("return document.documentElement.clientWidth")
        assert viewport <= NARROW
        screenshot(browser, f"admin-1366-{model}-list")
        # The page does not scroll sideways, nor does the table inside it.
        page = browser.execute_script("return document.documentElement.scrollWidth")
        assert page <= viewport, (model, page, viewport)
        results = browser.find_element(By.CSS_SELECTOR, "#changelist .results")
        scroll, visible = browser.execute_script(
            "return [arguments[0].scrollWidth, arguments[0].clientWidth]", results
        )
        assert scroll <= visible, (model, scroll, visible)
        header = browser.find_element(By.CSS_SELECTOR, f"#result_list th.{status_column}")
        right = browser.execute_script("return arguments[0].getBoundingClientRect().right", header)
        assert header.is_displayed() and right <= viewport, (model, right, viewport)


def test_charts_and_render_history_of_a_compacted_and_pruned_conversation(live_server, browser):
    conversation, timeline = compacted_conversation(Tenant.objects.create(name="acme"))
    conversation.settings = {**conversation.settings, "ttl_keep_recent_turns": 1}
    conversation.save()
    statuses = rendered_history(timeline, start=datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    assert statuses[-1] == "pruned"

    _login(browser, live_server, f"/admin/timeline_app/conversation/{conversation.public_id}/change/")
    browser.get_log("browser")  # the login page's entries are not this page's
    browser.get(f"{live_server.url}/admin/timeline_app/conversation/{conversation.public_id}/change/")

    charts = browser.find_element(By.ID, "tl-charts")
    turn_chart = browser.find_element(By.CSS_SELECTOR, "#tl-turn-chart svg")
    render_chart = browser.find_element(By.CSS_SELECTOR, "#tl-render-chart svg")
    # Drawn, at a readable size, inside a 1366 px window (no horizontal scrolling).
    for chart in (turn_chart, render_chart):
        assert chart.size["width"] > 600 and chart.size["height"] > 100
        assert chart.location["x"] + chart.size["width"] <= NARROW
    assert len(turn_chart.find_elements(By.CSS_SELECTOR, "g.tl-turn-bar")) == 9
    assert len(turn_chart.find_elements(By.CSS_SELECTOR, "g.tl-compaction-marker")) == 1
    assert turn_chart.find_elements(By.CSS_SELECTOR, "rect.tl-bar-compacted")
    assert len(render_chart.find_elements(By.CSS_SELECTOR, "g.tl-render-bar")) == 3
    assert render_chart.find_elements(By.CSS_SELECTOR, "rect.tl-bar-reused")
    browser.execute_script("arguments[0].scrollIntoView()", charts)
    screenshot(browser, "admin-charts-01-charts", charts)

    history = browser.find_element(By.ID, "tl-render-history")
    rows = history.find_elements(By.CSS_SELECTOR, "tr.tl-render-row")
    assert len(rows) == 3
    assert "ttl_expired" in rows[0].text and "cache expired: old bulky blocks are pruned" in rows[0].text
    assert "first_render" in rows[-1].text and " UTC" in rows[-1].text
    assert history.size["width"] <= NARROW
    screenshot(browser, "admin-charts-02-render-history", history)
    screenshot(browser, "admin-charts-03-conversation-page")

    # The first changed path opens the block list filtered to that block.
    link = history.find_element(By.CSS_SELECTOR, "a.tl-changed-path")
    path = link.text
    link.click()
    result = browser.find_element(By.ID, "result_list")
    assert path in result.text

    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == [], severe
