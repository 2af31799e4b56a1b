"""``bench quality`` sessions of the kind travel booking: booking codes, flights and hotels."""

from __future__ import annotations

import string
from typing import Any

from timeline_app.benchmarks.quality.kinds.base import (
    FIRST_NAMES,
    WORDS,
    Attachment,
    Kind,
    alnum,
    one,
)


class Travel(Kind):
    name = "travel"
    tools = ("flights.search", "hotels.search", "booking.status", "rail.search")
    file_tools = (("docs.save_itinerary", "saved"), ("docs.read_pdf", "read"))

    def identifier(self) -> str:
        r = self.rng
        return one(
            r,
            [
                lambda: alnum(r, 6, string.ascii_uppercase) if r.random() < 0.3 else "PNR" + alnum(r, 5),
                lambda: f"{r.choice(['LH', 'LX', 'OS', 'SK', 'TP'])}{r.randint(100, 9999)}",
                lambda: f"HTL-{r.randint(100000, 999999)}",
                lambda: f"https://book.travel.example/trip/{alnum(r, 8).lower()}",
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
            f"My partner is vegetarian, so mention the meal options for {r.choice(FIRST_NAMES)} too.",
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
                f"trips/boarding_pass_{alnum(r, 6)}.pdf",
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
