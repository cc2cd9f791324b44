"""The did family's themes: who the units are, what they adopt, what is measured and
how dates and ids are written (stores launching a loyalty program, counties passing a
sick-leave ordinance, clinics starting telehealth). Public words only: a theme knows
nothing of the model's draw.

The outcome is staged as loc + scale * (its model value), rounded to the theme's
decimals; one model unit is one SD of the within-unit noise.
"""

from __future__ import annotations

from dataclasses import dataclass

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


@dataclass(frozen=True)
class Calendar:
    """How periods are counted and written: `season` periods a year; `formats` the
    ways a date may be written (the first is the extract's usual one), each with the
    README's description."""

    noun: str
    nouns: str
    season: int
    formats: tuple[tuple[str, str], ...]

    def write(self, index: int, style: str) -> str:
        """Period `index` (counted from year 0's first period) in format `style`."""
        year, within = divmod(index, self.season)
        if self.season == 1:
            return {"y": f"{year}", "fy": f"FY{year}"}[style]
        if self.season == 4:
            quarter = within + 1
            return {
                "yq": f"{year}Q{quarter}",
                "y-q": f"{year}-Q{quarter}",
                "q y": f"Q{quarter} {year}",
                "y q": f"{year} Q{quarter}",
            }[style]
        month = within + 1
        return {
            "ym": f"{year}-{month:02d}",
            "ymd": f"{year}-{month:02d}-01",
            "m/y": f"{month:02d}/{year}",
            "mon y": f"{MONTHS[within]} {year}",
            "month y": f"{MONTH_NAMES[within]} {year}",
        }[style]


MONTHLY = Calendar(
    "month",
    "months",
    12,
    (
        ("ym", "2019-03"),
        ("ymd", "2019-03-01 (always the 1st)"),
        ("m/y", "03/2019"),
        ("mon y", "Mar 2019"),
        ("month y", "March 2019"),
    ),
)
#: Years (the real tier's state panel): the study's own years, some rows as fiscal years.
YEARLY = Calendar("year", "years", 1, (("y", "2007"), ("fy", "FY2007")))
QUARTERLY = Calendar(
    "quarter",
    "quarters",
    4,
    (("yq", "2019Q3"), ("y-q", "2019-Q3"), ("q y", "Q3 2019"), ("y q", "2019 Q3")),
)


@dataclass(frozen=True)
class Theme:
    """One story: the unit and its id, the calendar, what is adopted and the column
    that dates it, the outcome and how it is written, and a unit attribute that plays
    no part in the design (a region, a state, a network)."""

    key: str
    unit: str
    units: str
    id_column: str
    id_prefix: str
    calendar: Calendar
    program: str  # "the loyalty program": what the units adopt
    adopt_verb: str  # "launched the loyalty program"
    adoption_column: str
    outcome: str
    outcome_noun: str  # "monthly sales": the question's words
    outcome_description: str
    loc: float
    scale: float
    decimals: int
    attribute: str
    attribute_description: str
    attribute_levels: tuple[str, ...]
    titles: tuple[str, ...]
    intros: tuple[str, ...]


THEMES: tuple[Theme, ...] = (
    Theme(
        key="stores",
        unit="store",
        units="stores",
        id_column="store_id",
        id_prefix="ST",
        calendar=MONTHLY,
        program="the loyalty program",
        adopt_verb="launched the loyalty program",
        adoption_column="loyalty_start",
        outcome="sales",
        outcome_noun="monthly sales",
        outcome_description="the store's sales in the month, US dollars",
        loc=52_000.0,
        scale=3_400.0,
        decimals=2,
        attribute="region",
        attribute_description="the store's sales region",
        attribute_levels=("North", "South", "East", "West", "Central"),
        titles=("Loyalty program roll-out across a retail chain", "A staggered loyalty launch"),
        intros=(
            "A retail chain rolled its loyalty program out store by store. Head office "
            "sent this extract of monthly store sales with the month each store launched "
            "the program.",
            "Stores of a regional chain launched a loyalty program at dates set by head "
            "office's roll-out schedule. The extract holds each store's monthly sales.",
        ),
    ),
    Theme(
        key="counties",
        unit="county",
        units="counties",
        id_column="county_code",
        id_prefix="C",
        calendar=QUARTERLY,
        program="the paid sick-leave ordinance",
        adopt_verb="put a paid sick-leave ordinance into effect",
        adoption_column="ordinance_effective",
        outcome="avg_weekly_earnings",
        outcome_noun="average weekly earnings",
        outcome_description="average weekly earnings of private-sector workers in the "
        "county over the quarter, US dollars",
        loc=1_080.0,
        scale=21.0,
        decimals=2,
        attribute="state",
        attribute_description="the county's state",
        attribute_levels=("OH", "PA", "MI", "IN", "WI", "IL"),
        titles=("Paid sick-leave ordinances and earnings", "County sick-leave mandates"),
        intros=(
            "Counties passed paid sick-leave ordinances in different quarters. This "
            "extract of quarterly labour-market statistics gives each county's average "
            "weekly earnings and the quarter its ordinance took effect.",
            "A statistics office compiled quarterly earnings for counties, some of which "
            "made paid sick leave mandatory during the period, at different dates.",
        ),
    ),
    Theme(
        key="clinics",
        unit="clinic",
        units="clinics",
        id_column="clinic_id",
        id_prefix="CL",
        calendar=MONTHLY,
        program="telehealth",
        adopt_verb="started offering telehealth visits",
        adoption_column="telehealth_start",
        outcome="visits",
        outcome_noun="monthly patient visits",
        outcome_description="patient visits to the clinic in the month (in person and remote)",
        loc=2_300.0,
        scale=105.0,
        decimals=0,
        attribute="network",
        attribute_description="the health network the clinic belongs to",
        attribute_levels=("Northside Health", "Valley Care", "Summit Medical", "Lakeshore"),
        titles=("Telehealth adoption in a clinic network", "When clinics went remote"),
        intros=(
            "Clinics began offering telehealth visits at different times, as their "
            "licences and equipment came through. The extract counts each clinic's "
            "patient visits by month.",
            "A group of health networks rolled telehealth out clinic by clinic on a "
            "schedule fixed by equipment deliveries. Monthly visit counts follow.",
        ),
    ),
)
