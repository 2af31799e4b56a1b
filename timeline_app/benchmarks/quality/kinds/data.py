"""``bench quality`` sessions of the kind data analysis: datasets, tables, figures and dashboards."""

from __future__ import annotations

from typing import Any

from timeline_app.benchmarks.quality.kinds.base import (
    WORDS,
    Attachment,
    Kind,
    alnum,
    hex_digits,
    one,
)


class Data(Kind):
    name = "data"
    tools = ("sql.query", "python.run", "warehouse.describe", "dashboard.get")
    file_tools = (("fs.read", "read"), ("plot.save", "saved"), ("fs.write", "written"))

    def identifier(self) -> str:
        r = self.rng
        return one(
            r,
            [
                lambda: f"ds_{r.choice(WORDS)}_{r.randint(2022, 2026)}q{r.randint(1, 4)}",
                lambda: f"fact_{r.choice(WORDS)}_{r.randint(2022, 2026)}",
                lambda: f"q_{hex_digits(r, 8)}",
                lambda: f"https://dash.example.com/d/{alnum(r, 9).lower()}",
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
