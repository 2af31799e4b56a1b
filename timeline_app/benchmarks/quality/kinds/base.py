"""What every kind of ``bench quality`` session has (pure, seeded): the :class:`Kind` interface
and the random parts its templates share."""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Attachment:
    name: str
    mime: str
    text: str


def alnum(rng: random.Random, n: int, alphabet: str = string.ascii_uppercase + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def one(rng: random.Random, makers: list[Callable[[], str]]) -> str:
    """One of ``makers``' values (each a template with its own random parts)."""
    return rng.choice(makers)()


def hex_digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


FIRST_NAMES = ("Maria", "Jonas", "Aiko", "Pedro", "Fatima", "Liam", "Chen", "Sofia", "Omar", "Greta")
WORDS = [
    "ledger",
    "refund",
    "invoice",
    "cache",
    "parser",
    "router",
    "billing",
    "export",
    "report",
    "session",
    "schema",
    "region",
    "quota",
    "pipeline",
    "sampler",
    "metric",
    "cohort",
    "forecast",
    "churn",
    "latency",
    "storage",
    "tokenizer",
]
LANGUAGES = ("German", "French", "Spanish", "Italian", "Dutch")


# --------------------------------------------------------------------------------------------
# Kinds: the templates each kind draws from


class Kind:
    """One kind of session: its identifiers, tools, instructions, requests and so on."""

    name = ""
    tools: tuple[str, ...] = ()
    file_tools: tuple[tuple[str, str], ...] = ()  # (tool_id, action)

    def __init__(self, rng: random.Random):
        self.rng = rng

    def identifier(self) -> str:
        raise NotImplementedError

    def noise_record(self) -> dict[str, Any]:
        raise NotImplementedError

    def instructions(self) -> list[str]:
        raise NotImplementedError

    def request(self, ids: list[str]) -> str:
        raise NotImplementedError

    def decision(self) -> tuple[str, str]:
        raise NotImplementedError

    def error(self) -> tuple[str, str]:
        """(code, message)."""
        raise NotImplementedError

    def file_path(self) -> str:
        raise NotImplementedError

    def step(self, ids: list[str]) -> str:
        raise NotImplementedError

    def attachment(self) -> Attachment:
        raise NotImplementedError
