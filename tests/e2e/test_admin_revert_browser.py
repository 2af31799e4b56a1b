"""Issue 35 in a real browser (headless Chromium, 1366 px): an operator opens a compacted
conversation, sees the compaction's public id and the "Revert this compaction" button, dismisses
the confirmation once (nothing happens), accepts it the second time; the page then says so, the
summary panel is gone and the compaction's page shows who reverted it. Screenshots go to
tests/artifacts/."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from tests.e2e.test_admin_browser import (
    BROWSER_TESTS,
    browser,
    operator_on_compacted_conversation,
    screenshot,
)

__all__ = ["browser"]  # the fixture, shared with test_admin_browser

pytestmark = BROWSER_TESTS


def test_operator_reverts_the_newest_compaction_after_confirming(live_server, browser):
    row = operator_on_compacted_conversation(live_server, browser)

    section = browser.find_element(By.CSS_SELECTOR, "section.tl-compacted")
    assert row.public_id in section.text
    button = section.find_element(By.CSS_SELECTOR, "form.tl-revert-form input[type=submit]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    screenshot(browser, "admin-35-revert-button", section)

    button.click()  # the confirmation: dismissed, nothing happens
    alert = browser.switch_to.alert
    assert row.public_id in alert.text
    alert.dismiss()
    row.refresh_from_db()
    assert row.status == "applied"

    section.find_element(By.CSS_SELECTOR, "form.tl-revert-form input[type=submit]").click()
    browser.switch_to.alert.accept()
    message = browser.find_element(By.CSS_SELECTOR, "ul.messagelist li.success")
    assert f"Compaction {row.public_id} of “main” reverted" in message.text
    assert not browser.find_elements(By.CSS_SELECTOR, "section.tl-compacted")
    screenshot(browser, "admin-35-after-revert")
    row.refresh_from_db()
    assert (row.status, row.reverted_by) == ("reverted", "staff:olga")

    message.find_element(By.TAG_NAME, "a").click()  # the compaction's own page
    assert "staff:olga" in browser.page_source and row.public_id in browser.page_source
    screenshot(browser, "admin-35-reverted-compaction")
