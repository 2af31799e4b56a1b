"""``bench quality`` sessions of the kind coding: commits, tickets, test ids, file paths and stack traces."""

from __future__ import annotations

from typing import Any

from timeline_app.benchmarks.quality.kinds.base import (
    FIRST_NAMES,
    WORDS,
    Attachment,
    Kind,
    hex_digits,
    one,
)


class Coding(Kind):
    name = "coding"
    tools = ("shell.run", "git.log", "ci.status", "code.search")
    file_tools = (("fs.read", "read"), ("fs.write", "written"), ("fs.edit", "edited"))

    def identifier(self) -> str:
        r = self.rng
        return one(
            r,
            [
                lambda: hex_digits(r, 12),
                lambda: f"PROJ-{r.randint(100, 9999)}",
                lambda: f"https://git.example.com/acme/{r.choice(WORDS)}/pull/{r.randint(10, 4000)}",
                lambda: f"build-{r.randint(10000, 99999)}",
                lambda: f"v{r.randint(1, 4)}.{r.randint(0, 20)}.{r.randint(0, 30)}-rc{r.randint(1, 5)}",
                lambda: (
                    f"tests/{r.choice(WORDS)}/test_{r.choice(WORDS)}.py::test_{r.choice(WORDS)}_{r.choice(WORDS)}"
                ),
            ],
        )

    def noise_record(self) -> dict[str, Any]:
        r = self.rng
        return {
            "commit": hex_digits(r, 12),
            "author": r.choice(FIRST_NAMES).lower(),
            "message": f"{r.choice(['fix', 'add', 'refactor', 'bump'])} {r.choice(WORDS)} {r.choice(WORDS)}",
            "files": r.randint(1, 30),
        }

    def instructions(self) -> list[str]:
        r = self.rng
        return [
            "Never touch production.",
            "Do not push to the main branch; open a pull request instead.",
            "Run the full test suite before every commit.",
            f"Keep the code compatible with Python 3.{r.choice([9, 10, 11])}.",
            "Don't add new third-party dependencies.",
            f"Every new function needs a docstring and a test in tests/{r.choice(WORDS)}/.",
        ]

    def request(self, ids: list[str]) -> str:
        r = self.rng
        a, b = ids[0], ids[-1]
        return r.choice(
            [
                f"The nightly build fails since {a}; find the cause and fix it, the ticket is {b}.",
                f"Add retry with backoff to the {r.choice(WORDS)} client and reference {a} in the commit.",
                f"Review the change in {a} and tell me if it breaks {b}.",
                f"Bisect the regression between {a} and {b} and write a failing test first.",
                f"Rename the {r.choice(WORDS)} module as discussed in {a}, keeping the public API stable.",
            ]
        )

    def decision(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("I kept the old function as a deprecated alias", "two other services still import it"),
                ("I used a dataclass instead of a dict", "the fields are fixed and mypy can check them"),
                (
                    f"I pinned the library to {r.randint(1, 5)}.{r.randint(0, 9)}",
                    "the next release drops Python 3.9",
                ),
                ("I split the migration in two", "the table is large and the lock must stay short"),
                ("I skipped the flaky test for now", "it fails on main as well and has its own ticket"),
            ]
        )

    def error(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                (
                    f"AssertionError at src/{r.choice(WORDS)}/core.py:{r.randint(10, 900)}",
                    "expected 3 rows, got 2",
                ),
                (f"ModuleNotFoundError: {r.choice(WORDS)}_utils", "the package is not installed in CI"),
                (f"TimeoutError in tests/test_{r.choice(WORDS)}.py", "the fixture server did not start"),
                (f"exit code {r.choice([1, 2, 137])}", "the build container ran out of memory"),
            ]
        )

    def file_path(self) -> str:
        r = self.rng
        return r.choice(
            [
                f"src/{r.choice(WORDS)}/{r.choice(WORDS)}.py",
                f"tests/{r.choice(WORDS)}/test_{r.choice(WORDS)}.py",
                f"config/{r.choice(WORDS)}.yaml",
                f"docs/{r.choice(WORDS)}.md",
            ]
        )

    def step(self, ids: list[str]) -> str:
        r = self.rng
        return r.choice(
            [
                f"Write a failing test for {ids[0]}",
                f"Patch src/{r.choice(WORDS)}/{r.choice(WORDS)}.py",
                "Run the full test suite",
                f"Open a pull request referencing {ids[-1]}",
                "Update the changelog",
            ]
        )

    def attachment(self) -> Attachment:
        r = self.rng
        body = "\n".join(
            f'  File "src/{r.choice(WORDS)}/{r.choice(WORDS)}.py", line {r.randint(1, 800)}, in {r.choice(WORDS)}'
            for _ in range(r.randint(5, 25))
        )
        return Attachment(
            f"traceback_{r.randint(100, 999)}.log",
            "text/plain",
            "Traceback (most recent call last):\n" + body,
        )
