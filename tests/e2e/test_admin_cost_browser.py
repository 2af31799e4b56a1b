"""The cost panel in a real browser (headless Chromium at 1366 px): a support user opens a
conversation with reported usage, reads cost, savings and cache-read share, sees the forecast vs
actual chart with the unexplained miss marked, and follows the miss to the first changed block.
Screenshots go to tests/artifacts/."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from django.contrib.auth.models import Group, User
from selenium.webdriver.common.by import By

from tests.admin.builders import compacted_conversation, reported_usage
from tests.e2e.test_admin_browser import BROWSER_TESTS, NARROW, browser, screenshot  # noqa: F401
from timeline_app import roles
from timeline_app.models import RenderUsage, Tenant

pytestmark = BROWSER_TESTS


def test_support_reads_the_cost_panel_and_follows_a_miss(live_server, browser):  # noqa: F811
    roles.ensure_roles()
    user = User.objects.create_user(username="sam", password="sam-password-1", is_staff=True)
    user.groups.add(Group.objects.get(name=roles.SUPPORT))
    conversation, timeline = compacted_conversation(Tenant.objects.create(name="acme"), turns=8)
    reported_usage(timeline, start=datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    total = sum(row.cost_usd for row in RenderUsage.objects.all())

    browser.get(f"{live_server.url}/admin/login/?next=/admin/timeline_app/conversation/")
    browser.find_element(By.NAME, "username").send_keys("sam")
    browser.find_element(By.NAME, "password").send_keys("sam-password-1")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    # The list: cost and cache-read share columns.
    cost_cell = browser.find_element(By.CSS_SELECTOR, "td.field-cost")
    assert cost_cell.text == format(total.quantize(Decimal("0.0001")), "f")
    assert browser.find_element(By.CSS_SELECTOR, "td.field-cache_read_share").text.endswith("%")
    screenshot(browser, "cost-01-conversation-list")

    browser.find_element(By.LINK_TEXT, conversation.public_id).click()
    panel = browser.find_element(By.ID, "tl-cost")
    browser.execute_script("arguments[0].scrollIntoView()", panel)
    assert browser.find_element(By.ID, "tl-cost-usd").text == f"${format(total.normalize(), 'f')}"
    assert browser.find_element(By.ID, "tl-miss-count").text == "1"
    chart = browser.find_element(By.ID, "tl-usage-chart")
    assert chart.size["width"] <= NARROW and chart.is_displayed()
    bars = chart.find_elements(By.CSS_SELECTOR, "g.tl-usage-bar")
    assert len(bars) == 3
    assert len(chart.find_elements(By.CSS_SELECTOR, "g.tl-usage-miss")) == 1
    # Nothing in the panel overflows the 1366 px window.
    assert browser.execute_script("return document.getElementById('tl-cost').scrollWidth") <= NARROW
    screenshot(browser, "cost-02-cost-panel", panel)

    # The miss links to the first changed block.
    browser.find_element(By.CSS_SELECTOR, "a.tl-miss-path").click()
    assert "/admin/timeline_app/block/" in browser.current_url
    assert browser.find_element(By.ID, "result_list")
    screenshot(browser, "cost-03-first-changed-block")
    # The pages logged no error (the browser's own favicon request aside).
    errors = [
        entry
        for entry in browser.get_log("browser")
        if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]
    ]
    assert not errors, errors
