"""Issue 35 in a real browser (headless Chromium, 1366 px): an operator's conversation page lists
the context's operations log newest first beside the "Revert this compaction" button; after the
revert the log's newest entry is the revert, by the operator, with the compaction's tokens going
back. Screenshots go to tests/artifacts/."""

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


def log_rows(browser) -> list[list[str]]:
    rows = browser.find_elements(By.CSS_SELECTOR, ".tl-operations tr.tl-operation")
    return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]


def test_the_operations_log_and_the_revert_button_on_the_conversation_page(live_server, browser):
    row = operator_on_compacted_conversation(live_server, browser)

    applied, created = log_rows(browser)  # newest first
    assert created[1:3] == ["context_created", "system"]
    at, kind, actor, tokens, seqs, _paths, compaction, why = applied
    assert (kind, actor) == ("compaction_applied", "system") and at.endswith(" UTC")
    assert tokens == f"{row.before_tokens:,} → {row.after_tokens:,}"
    assert seqs == f"{row.covered_from_seq}–{row.covered_to_seq}" and row.public_id in compaction
    assert f"threshold {row.threshold_tokens:,}" in why
    log = browser.find_element(By.CSS_SELECTOR, ".tl-operations")
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", log)
    screenshot(browser, "admin-35-operations-log")
    section = browser.find_element(By.CSS_SELECTOR, "section.tl-compacted")
    button = section.find_element(By.CSS_SELECTOR, "form.tl-revert-form input[type=submit]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    screenshot(browser, "admin-35-operations-log-and-revert-button")

    button.click()
    browser.switch_to.alert.accept()
    browser.find_element(By.CSS_SELECTOR, "ul.messagelist li.success")
    reverted, *before = log_rows(browser)  # newest first
    assert reverted[1:4] == [
        "compaction_reverted",
        "staff:olga",
        f"{row.after_tokens:,} → {row.before_tokens:,}",
    ]
    assert before == [applied, created]
    screenshot(
        browser,
        "admin-35-operations-log-after-revert",
        browser.find_element(By.CSS_SELECTOR, ".tl-operations"),
    )
