"""The five kinds of ``bench quality`` sessions (pure, seeded): the templates each draws from.

Every value an agent would meet (identifiers, instructions, requests, decisions, errors, file
paths, plan steps, attachments, the records of a tool's listing) is a template with random parts.
"""

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


def _alnum(rng: random.Random, n: int, alphabet: str = string.ascii_uppercase + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _one(rng: random.Random, makers: list[Callable[[], str]]) -> str:
    """One of ``makers``' values (each a template with its own random parts)."""
    return rng.choice(makers)()


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


_FIRST_NAMES = ("Maria", "Jonas", "Aiko", "Pedro", "Fatima", "Liam", "Chen", "Sofia", "Omar", "Greta")
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
_LANGUAGES = ("German", "French", "Spanish", "Italian", "Dutch")


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


class Support(Kind):
    name = "support"
    tools = ("crm.lookup_order", "billing.invoice", "shipping.track", "crm.tickets")
    file_tools = (("crm.export_case", "exported"), ("docs.read_policy", "read"))

    def identifier(self) -> str:
        r = self.rng
        return _one(
            r,
            [
                lambda: f"ORD-{r.randint(100000, 999999)}",
                lambda: f"INV-{r.randint(2023, 2026)}-{r.randint(1, 9999):04d}",
                lambda: f"SUP-{r.randint(1000, 99999)}",
                lambda: "1Z" + _alnum(r, 16),
                lambda: f"txn_{_hex(r, 10)}",
                lambda: f"https://help.shopco.example/tickets/{r.randint(10000, 99999)}",
                lambda: f"RMA{r.randint(100000, 999999)}",
            ],
        )

    def noise_record(self) -> dict[str, Any]:
        r = self.rng
        return {
            "order": f"ORD-{r.randint(100000, 999999)}",
            "status": r.choice(["shipped", "pending", "delivered", "cancelled"]),
            "amount": f"{r.randint(5, 900)}.{r.randint(0, 99):02d} EUR",
            "note": r.choice(["gift wrap", "express", "", "address changed", "split shipment"]),
        }

    def instructions(self) -> list[str]:
        r = self.rng
        return [
            f"Always answer in {r.choice(_LANGUAGES)}.",
            f"Never offer a refund above {r.choice([20, 30, 50, 75])} EUR without asking me first.",
            f"Please keep every reply to the customer under {r.choice([80, 100, 120, 150])} words.",
            "Do not contact the customer by phone, only by email.",
            f"Address the customer as {r.choice(_FIRST_NAMES)} in every reply.",
            "Escalate anything about chargebacks to the payments team instead of answering it yourself.",
        ]

    def request(self, ids: list[str]) -> str:
        r = self.rng
        a, b = ids[0], ids[-1]
        return r.choice(
            [
                f"The customer says order {a} arrived damaged; check {b} and propose a replacement.",
                f"Find out why the refund for {a} has not reached the customer yet, see {b}.",
                f"Merge ticket {a} into {b} and draft the reply that tells the customer what happens next.",
                f"Can you check whether {a} was charged twice and fix it if so? The receipt is {b}.",
                f"Please cancel {a} before it ships and confirm the cancellation against {b}.",
            ]
        )

    def decision(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                (
                    "I offered a replacement instead of a refund",
                    "the item is still in stock and the customer asked for it",
                ),
                (
                    f"I issued a {r.randint(10, 45)} EUR store credit",
                    "the delay was our warehouse's fault",
                ),
                ("I escalated the case to tier 2", "the payment provider has to reverse the charge"),
                (
                    "I kept the ticket open for another day",
                    "the carrier has not confirmed the delivery yet",
                ),
                (
                    "I sent the return label by email",
                    f"the customer cannot print at home ({r.randint(2, 9)} days left)",
                ),
            ]
        )

    def error(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("ERR_REFUND_WINDOW_CLOSED", "the refund window of 30 days has passed"),
                ("E_CARD_DECLINED", "the card issuer declined the reversal"),
                (f"HTTP_{r.choice([502, 503, 504])}_CARRIER", "the carrier API did not answer"),
                ("ERR_ADDRESS_UNVERIFIED", "the shipping address could not be verified"),
            ]
        )

    def file_path(self) -> str:
        r = self.rng
        return r.choice(
            [
                f"cases/case_{r.randint(1000, 9999)}_export.pdf",
                f"policies/{r.choice(['refunds', 'returns', 'warranty'])}_{r.randint(2023, 2026)}.md",
            ]
        )

    def step(self, ids: list[str]) -> str:
        r = self.rng
        return r.choice(
            [
                f"Verify the payment for {ids[0]}",
                f"Email the customer the new tracking number for {ids[0]}",
                f"Issue a credit note against {ids[-1]}",
                f"Close ticket {ids[-1]} once the customer confirms",
                "Ask the warehouse for photos of the returned parcel",
            ]
        )

    def attachment(self) -> Attachment:
        r = self.rng
        name = (
            r.choice(["receipt", "damage_report", "chat_log", "delivery_note"])
            + f"_{r.randint(100, 999)}.txt"
        )
        return Attachment(name, "text/plain", " ".join(r.choice(WORDS) for _ in range(r.randint(60, 300))))


class Coding(Kind):
    name = "coding"
    tools = ("shell.run", "git.log", "ci.status", "code.search")
    file_tools = (("fs.read", "read"), ("fs.write", "written"), ("fs.edit", "edited"))

    def identifier(self) -> str:
        r = self.rng
        return _one(
            r,
            [
                lambda: _hex(r, 12),
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
            "commit": _hex(r, 12),
            "author": r.choice(_FIRST_NAMES).lower(),
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


class Travel(Kind):
    name = "travel"
    tools = ("flights.search", "hotels.search", "booking.status", "rail.search")
    file_tools = (("docs.save_itinerary", "saved"), ("docs.read_pdf", "read"))

    def identifier(self) -> str:
        r = self.rng
        return _one(
            r,
            [
                lambda: _alnum(r, 6, string.ascii_uppercase) if r.random() < 0.3 else "PNR" + _alnum(r, 5),
                lambda: f"{r.choice(['LH', 'LX', 'OS', 'SK', 'TP'])}{r.randint(100, 9999)}",
                lambda: f"HTL-{r.randint(100000, 999999)}",
                lambda: f"https://book.travel.example/trip/{_alnum(r, 8).lower()}",
                lambda: f"TKT-{r.randint(10**9, 10**10 - 1)}",
            ],
        )

    def noise_record(self) -> dict[str, Any]:
        r = self.rng
        return {
            "flight": f"{r.choice(['LH', 'LX', 'OS', 'SK', 'TP', 'UA'])}{r.randint(100, 9999)}",
            "departs": f"{r.randint(5, 22):02d}:{r.choice(['05', '20', '35', '50'])}",
            "price": f"{r.randint(60, 900)} EUR",
            "stops": r.randint(0, 2),
        }

    def instructions(self) -> list[str]:
        r = self.rng
        return [
            f"The budget is {r.choice([90, 120, 150, 200])} EUR per night for hotels.",
            "I only fly with Star Alliance carriers.",
            f"No flights departing before {r.choice([7, 8, 9])}am.",
            "I need an aisle seat on every flight.",
            "Book refundable fares only.",
            f"My partner is vegetarian, so mention the meal options for {r.choice(_FIRST_NAMES)} too.",
        ]

    def request(self, ids: list[str]) -> str:
        r = self.rng
        a, b = ids[0], ids[-1]
        city = r.choice(["Lisbon", "Vienna", "Oslo", "Zurich", "Kyoto", "Porto"])
        return r.choice(
            [
                f"Rebook {a} to a later departure to {city} and keep {b} as it is.",
                f"Find a hotel in {city} for three nights near the venue; the conference code is {a}.",
                f"Check whether booking {a} includes luggage and add a bag if not, reference {b}.",
                f"Cancel {a} and ask for the refund to go to the card used for {b}.",
                f"Plan the train from the airport to {city} centre for the arrival of {a}.",
            ]
        )

    def decision(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("I picked the 14:05 connection", "the earlier one leaves only a 35 minute layover"),
                (f"I chose the hotel at {r.randint(80, 140)} EUR", "it is a ten minute walk from the venue"),
                ("I held the fare without paying", "the price is guaranteed for 24 hours"),
                ("I booked the train instead of the flight", "door to door it is faster"),
                ("I left the return open", f"the meeting may move to day {r.randint(2, 6)}"),
            ]
        )

    def error(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("FARE_NO_LONGER_AVAILABLE", "the fare class sold out"),
                (f"GDS_TIMEOUT_{r.randint(10, 99)}", "the reservation system timed out"),
                ("SEAT_MAP_UNAVAILABLE", "the airline does not publish the seat map yet"),
                ("ERR_CARD_3DS_FAILED", "the card verification failed"),
            ]
        )

    def file_path(self) -> str:
        r = self.rng
        return r.choice(
            [
                f"trips/itinerary_{r.choice(['lisbon', 'vienna', 'oslo', 'kyoto'])}_{r.randint(2026, 2027)}.pdf",
                f"trips/boarding_pass_{_alnum(r, 6)}.pdf",
                f"trips/hotel_voucher_{r.randint(1000, 9999)}.pdf",
            ]
        )

    def step(self, ids: list[str]) -> str:
        r = self.rng
        return r.choice(
            [
                f"Confirm the seat on {ids[0]}",
                f"Pay the deposit for {ids[-1]}",
                "Send the itinerary to the traveller",
                "Book the airport transfer",
                f"Add the frequent flyer number to {ids[0]}",
            ]
        )

    def attachment(self) -> Attachment:
        r = self.rng
        return Attachment(
            f"visa_letter_{r.randint(100, 999)}.txt",
            "text/plain",
            " ".join(r.choice(WORDS) for _ in range(r.randint(60, 250))),
        )


class Research(Kind):
    name = "research"
    tools = ("scholar.search", "web.fetch", "pdf.extract", "notes.search")
    file_tools = (("pdf.download", "downloaded"), ("notes.write", "written"), ("fs.read", "read"))

    def identifier(self) -> str:
        r = self.rng
        return _one(
            r,
            [
                lambda: (
                    f"10.{r.randint(1000, 9999)}/{r.choice(WORDS)}.{r.randint(2015, 2026)}.{r.randint(100, 9999)}"
                ),
                lambda: f"arXiv:{r.randint(2001, 2412)}.{r.randint(10000, 99999)}",
                lambda: f"https://journals.example.org/article/{r.randint(100000, 999999)}",
                lambda: f"PMID{r.randint(10**7, 10**8 - 1)}",
                lambda: f"ISBN-978{r.randint(10**9, 10**10 - 1)}",
            ],
        )

    def noise_record(self) -> dict[str, Any]:
        r = self.rng
        return {
            "doi": f"10.{r.randint(1000, 9999)}/{r.choice(WORDS)}.{r.randint(2010, 2026)}.{r.randint(100, 9999)}",
            "title": " ".join(r.choice(WORDS).capitalize() for _ in range(r.randint(3, 7))),
            "year": r.randint(2005, 2026),
            "citations": r.randint(0, 3000),
        }

    def instructions(self) -> list[str]:
        r = self.rng
        return [
            "Only cite peer-reviewed sources.",
            "Cite every claim with its DOI.",
            f"Ignore anything published before {r.choice([2012, 2015, 2018])}.",
            "Write the final report in British English.",
            f"Keep the literature list under {r.choice([15, 20, 25])} entries.",
            "Flag any study with fewer than 100 participants as preliminary.",
        ]

    def request(self, ids: list[str]) -> str:
        r = self.rng
        a, b = ids[0], ids[-1]
        topic = r.choice(
            ["sleep and memory", "urban heat islands", "battery ageing", "microplastics in soil"]
        )
        return r.choice(
            [
                f"Summarise what {a} says about {topic} and compare it with {b}.",
                f"Find three replications of {a} and note whether they agree.",
                f"Check if the sample size in {a} supports its claim about {topic}.",
                f"Draft the related-work paragraph on {topic}, starting from {a} and {b}.",
                f"Is {b} retracted or corrected? If so, remove it from the list and tell me why.",
            ]
        )

    def decision(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("I dropped the 2013 survey", "it predates the cutoff you set"),
                ("I kept the preprint in a separate list", "it has not been peer reviewed yet"),
                ("I used the meta-analysis as the main source", f"it pools {r.randint(8, 40)} studies"),
                ("I excluded the conference abstract", "there is no full paper behind it"),
                ("I grouped the studies by method", "the outcomes are not comparable otherwise"),
            ]
        )

    def error(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("HTTP 403 paywall", "the publisher blocks automated downloads"),
                ("PDF_EXTRACT_FAILED", f"page {r.randint(2, 40)} is a scanned image"),
                ("DOI_NOT_FOUND", "the registry has no record for the DOI"),
                ("RATE_LIMITED_429", "the search API allows 10 requests per minute"),
            ]
        )

    def file_path(self) -> str:
        r = self.rng
        return r.choice(
            [
                f"papers/{r.choice(_FIRST_NAMES).lower()}{r.randint(2012, 2026)}_{r.choice(WORDS)}.pdf",
                f"notes/{r.choice(WORDS)}_review.md",
                f"data/extracted_table_{r.randint(1, 30)}.csv",
            ]
        )

    def step(self, ids: list[str]) -> str:
        r = self.rng
        return r.choice(
            [
                f"Read the methods section of {ids[0]}",
                f"Extract the effect sizes from {ids[-1]}",
                "Write the comparison table",
                "Check retractions for every source",
                f"Draft the paragraph citing {ids[0]}",
            ]
        )

    def attachment(self) -> Attachment:
        r = self.rng
        return Attachment(
            f"reading_list_{r.randint(100, 999)}.txt",
            "text/plain",
            "\n".join(
                f"- {r.choice(WORDS)} {r.choice(WORDS)} {r.randint(2005, 2026)}"
                for _ in range(r.randint(8, 40))
            ),
        )


class Data(Kind):
    name = "data"
    tools = ("sql.query", "python.run", "warehouse.describe", "dashboard.get")
    file_tools = (("fs.read", "read"), ("plot.save", "saved"), ("fs.write", "written"))

    def identifier(self) -> str:
        r = self.rng
        return _one(
            r,
            [
                lambda: f"ds_{r.choice(WORDS)}_{r.randint(2022, 2026)}q{r.randint(1, 4)}",
                lambda: f"fact_{r.choice(WORDS)}_{r.randint(2022, 2026)}",
                lambda: f"q_{_hex(r, 8)}",
                lambda: f"https://dash.example.com/d/{_alnum(r, 9).lower()}",
                lambda: f"Figure {r.randint(1, 12)}{r.choice('abc')}",
                lambda: f"JOB-{r.randint(10000, 99999)}",
            ],
        )

    def noise_record(self) -> dict[str, Any]:
        r = self.rng
        return {
            "region": r.choice(["EMEA", "APAC", "NA", "LATAM"]),
            "month": f"2025-{r.randint(1, 12):02d}",
            "revenue": r.randint(1000, 900000),
            "orders": r.randint(10, 9000),
            "sku": f"SKU-{r.randint(10000, 99999)}",
        }

    def instructions(self) -> list[str]:
        r = self.rng
        return [
            "All figures must use metric units.",
            "Round every percentage to one decimal.",
            "Never drop rows with missing values; flag them instead.",
            f"Use the fiscal year starting in {r.choice(['April', 'July', 'October'])}.",
            "Label every chart axis with its unit.",
            f"Exclude the test accounts whose ids start with {r.choice(['T9', 'QA', 'ZZ'])}.",
        ]

    def request(self, ids: list[str]) -> str:
        r = self.rng
        a, b = ids[0], ids[-1]
        metric = r.choice(["churn", "revenue per user", "conversion", "return rate"])
        return r.choice(
            [
                f"Compute monthly {metric} from {a} and plot it next to {b}.",
                f"Why does {metric} in {a} drop in March? Compare with {b}.",
                f"Rebuild the {metric} table from {a} with the new region mapping.",
                f"Check {b} for duplicate rows before we use it for {metric}.",
                f"Update the dashboard {b} with the {metric} numbers from {a}.",
            ]
        )

    def decision(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("I used the median instead of the mean", "a few large accounts skew the mean"),
                ("I joined on customer id, not email", "emails change over time"),
                (
                    f"I binned the ages in steps of {r.choice([5, 10])} years",
                    "the groups are too small otherwise",
                ),
                ("I excluded December", "the migration doubled those rows"),
                ("I used a log scale on the y axis", "the values span four orders of magnitude"),
            ]
        )

    def error(self) -> tuple[str, str]:
        r = self.rng
        return r.choice(
            [
                ("ProgrammingError: column region_id does not exist", "the view was renamed"),
                (f"MemoryError in step {r.randint(2, 9)}", "the join produced 40 million rows"),
                ("QUERY_TIMEOUT_300S", "the warehouse killed the query"),
                ("ValueError: could not convert string to float", "one column has thousands separators"),
            ]
        )

    def file_path(self) -> str:
        r = self.rng
        return r.choice(
            [
                f"data/raw/{r.choice(WORDS)}_{r.randint(2022, 2026)}.csv",
                f"reports/fig_{r.randint(1, 20):02d}_{r.choice(WORDS)}.png",
                f"notebooks/{r.choice(WORDS)}_analysis.ipynb",
                f"reports/{r.choice(WORDS)}_summary.xlsx",
            ]
        )

    def step(self, ids: list[str]) -> str:
        r = self.rng
        return r.choice(
            [
                f"Load {ids[0]} into a dataframe",
                f"Deduplicate {ids[-1]}",
                "Plot the monthly series",
                "Write the findings into the report",
                f"Share the dashboard {ids[-1]} with the team",
            ]
        )

    def attachment(self) -> Attachment:
        r = self.rng
        rows = "\n".join(
            f"{r.randint(1, 9999)},{r.choice(['EMEA', 'APAC', 'NA'])},{r.randint(10, 99999)}"
            for _ in range(r.randint(10, 60))
        )
        return Attachment(f"sample_{r.randint(100, 999)}.csv", "text/csv", "id,region,value\n" + rows)


KIND_CLASSES: dict[str, Callable[[random.Random], Kind]] = {
    "support": Support,
    "coding": Coding,
    "travel": Travel,
    "research": Research,
    "data": Data,
}
