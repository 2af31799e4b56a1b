"""``bench quality`` sessions of the kind customer support: order, invoice, ticket and tracking numbers."""

from __future__ import annotations

from typing import Any

from timeline_app.benchmarks.quality.kinds.base import (
    FIRST_NAMES,
    LANGUAGES,
    WORDS,
    Attachment,
    Kind,
    alnum,
    hex_digits,
    one,
)


class Support(Kind):
    name = "support"
    tools = ("crm.lookup_order", "billing.invoice", "shipping.track", "crm.tickets")
    file_tools = (("crm.export_case", "exported"), ("docs.read_policy", "read"))

    def identifier(self) -> str:
        r = self.rng
        return one(
            r,
            [
                lambda: f"ORD-{r.randint(100000, 999999)}",
                lambda: f"INV-{r.randint(2023, 2026)}-{r.randint(1, 9999):04d}",
                lambda: f"SUP-{r.randint(1000, 99999)}",
                lambda: "1Z" + alnum(r, 16),
                lambda: f"txn_{hex_digits(r, 10)}",
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
            f"Always answer in {r.choice(LANGUAGES)}.",
            f"Never offer a refund above {r.choice([20, 30, 50, 75])} EUR without asking me first.",
            f"Please keep every reply to the customer under {r.choice([80, 100, 120, 150])} words.",
            "Do not contact the customer by phone, only by email.",
            f"Address the customer as {r.choice(FIRST_NAMES)} in every reply.",
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
