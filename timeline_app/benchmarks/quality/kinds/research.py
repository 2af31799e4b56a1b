"""``bench quality`` sessions of the kind research: DOIs, arXiv ids, URLs and PDFs."""

from __future__ import annotations

from typing import Any

from timeline_app.benchmarks.quality.kinds.base import (
    FIRST_NAMES,
    WORDS,
    Attachment,
    Kind,
    one,
)


class Research(Kind):
    name = "research"
    tools = ("scholar.search", "web.fetch", "pdf.extract", "notes.search")
    file_tools = (("pdf.download", "downloaded"), ("notes.write", "written"), ("fs.read", "read"))

    def identifier(self) -> str:
        r = self.rng
        return one(
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
                f"papers/{r.choice(FIRST_NAMES).lower()}{r.randint(2012, 2026)}_{r.choice(WORDS)}.pdf",
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
