"""The rdd family's themes: what the running variable, the cutoff, the treatment and
the outcome are called and how the README tells their story (a scholarship for a test
score at or above a cutoff, a programme from age 65, a policy that applies from a date,
a benefit for incomes at or below a threshold). Public words only: a theme knows
nothing of the model's draw.

The model's running variable u (model.py: eligible when u >= 0) is staged as
cutoff + sign * step * floor(per_unit * u / step), sign = -1 where the eligible side
is below the cutoff. The flooring happens before the outcome is drawn (stage.py), so
the staged value is exactly where the model was evaluated and eligibility is exactly
"at or above" (or "at or below") the written cutoff.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Running:
    """The running variable: its column, description, how far one model unit reaches
    in its own units, its step (the finest value it is written to), the cutoffs a task
    may use, and which side is eligible. A date's unit is the day; its cutoffs are
    ISO dates and the task picks a strftime format for writing it."""

    name: str
    description: str
    per_unit: float
    step: float
    cutoffs: tuple[str, ...]
    eligible_above: bool
    unit_word: str
    is_date: bool = False

    @property
    def decimals(self) -> int:
        """Decimals a value is written with (from the step)."""
        return 0 if self.step >= 1 else len(f"{self.step:g}".split(".")[1])


@dataclass(frozen=True)
class Outcome:
    """The outcome column: loc + scale * (its model value), rounded to `decimals`."""

    name: str
    description: str
    loc: float
    scale: float
    decimals: int


@dataclass(frozen=True)
class Theme:
    """One story; `sharp_rule` and `fuzzy_rule` say who is treated in either design."""

    key: str
    unit: str
    units: str
    titles: tuple[str, ...]
    intros: tuple[str, ...]
    id_name: str
    id_prefix: str
    running: Running
    treatment: tuple[str, str]
    outcome: Outcome
    sharp_rule: str
    fuzzy_rule: str
    manipulation: str
    exclusion: str


SCHOLARSHIP = Theme(
    key="scholarship",
    unit="student",
    units="students",
    titles=("A merit scholarship and first-year grades", "Scholarship at a test-score cutoff"),
    intros=(
        "Each row of data.csv is one student who sat the state's end-of-school exam and "
        "enrolled at a public university the following autumn. A merit scholarship was "
        "awarded on the exam score alone.",
        "The state university system's records of first-year students, one row per student: "
        "the exam score that decided the merit scholarship, whether the student held the "
        "scholarship, and the grade average at the end of the first year.",
    ),
    id_name="student_id",
    id_prefix="S",
    running=Running(
        "exam_score",
        "Score on the end-of-school exam (points).",
        60.0,
        1.0,
        ("500", "550", "600", "650"),
        True,
        "points",
    ),
    treatment=("scholarship", "Whether the student held the merit scholarship."),
    outcome=Outcome(
        "first_year_gpa",
        "Grade average at the end of the first year (points on a 0-100 scale).",
        68.0,
        4.0,
        1,
    ),
    sharp_rule="every student scoring at or above the cutoff received the scholarship and "
    "no one below it did",
    fuzzy_rule="students scoring at or above the cutoff were offered the scholarship; some "
    "declined it, and some below the cutoff obtained it on appeal",
    manipulation="Students could not set their exam score precisely: the exam was marked "
    "centrally and the cutoff was announced after marking.",
    exclusion="Scoring at or above the cutoff changes first-year grades only through the "
    "scholarship; nothing else depended on the cutoff.",
)

PENSION = Theme(
    key="age65",
    unit="person",
    units="people",
    titles=("Health coverage from age 65", "A public health programme that starts at 65"),
    intros=(
        "Each row of data.csv is one adult interviewed in a national health survey. A "
        "public health-insurance programme covers people from their 65th birthday.",
        "A national health survey, one row per respondent aged about 55 to 75: their exact "
        "age at the interview, whether they were enrolled in the public programme that "
        "covers people from age 65, and how much they paid out of pocket for care.",
    ),
    id_name="respondent_id",
    id_prefix="R",
    running=Running(
        "age_years",
        "Age at the interview (years, to one decimal).",
        8.0,
        0.1,
        ("65",),
        True,
        "years",
    ),
    treatment=("enrolled", "Whether the respondent was enrolled in the public programme."),
    outcome=Outcome(
        "out_of_pocket",
        "Out-of-pocket spending on health care in the last year (hundreds of USD).",
        30.0,
        2.5,
        2,
    ),
    sharp_rule="everyone aged 65 or more was enrolled automatically and no one younger was",
    fuzzy_rule="people became eligible at 65 but had to enrol, and some younger people were "
    "enrolled through a disability route",
    manipulation="Nobody can choose their age: the survey recorded it from the date of birth.",
    exclusion="Turning 65 changes out-of-pocket spending only through enrolment in the "
    "programme (no other benefit starts at 65 in this country).",
)

LEAVE = Theme(
    key="leave_reform",
    unit="mother",
    units="mothers",
    titles=("A parental-leave reform with a start date", "Longer paid leave from a birth date"),
    intros=(
        "Each row of data.csv is one mother who gave birth in the two years around a "
        "parental-leave reform. The reform extended paid leave for births on or after its "
        "start date.",
        "Social-insurance records, one row per mother: the child's date of birth, whether "
        "the mother drew the extended paid leave that a reform introduced for births from "
        "a given date, and her earnings in the third year after the birth.",
    ),
    id_name="mother_id",
    id_prefix="M",
    running=Running(
        "birth_date",
        "The child's date of birth.",
        330.0,
        1.0,
        ("2015-07-01", "2016-01-01", "2017-07-01", "2019-01-01", "2020-04-01"),
        True,
        "days",
        is_date=True,
    ),
    treatment=("extended_leave", "Whether the mother drew the extended paid leave."),
    outcome=Outcome(
        "earnings_year3",
        "Earnings in the third year after the birth (thousands of EUR).",
        31.0,
        2.2,
        2,
    ),
    sharp_rule="every mother of a child born on or after the start date drew the extended "
    "leave and none before it did",
    fuzzy_rule="mothers of children born on or after the start date could draw the extended "
    "leave and some did not; some employers granted it to earlier births too",
    manipulation="Births were not moved around the start date: the reform was passed too late "
    "for anyone to plan a birth around it.",
    exclusion="Being born on or after the start date changes the mother's earnings only "
    "through the extended leave; nothing else changed on that date.",
)

BENEFIT = Theme(
    key="income_test",
    unit="household",
    units="households",
    titles=("A means-tested food benefit", "Food benefit at an income threshold"),
    intros=(
        "Each row of data.csv is one household that applied to a food-benefit programme. "
        "Households whose assessed monthly income was at or below a threshold qualified.",
        "Programme records, one row per applicant household: the assessed monthly income "
        "that decided eligibility, whether the household received the benefit, and a food "
        "security score measured a year later.",
    ),
    id_name="household_id",
    id_prefix="H",
    running=Running(
        "assessed_income",
        "Assessed monthly household income (USD).",
        500.0,
        1.0,
        ("1500", "1800", "2100"),
        False,
        "USD",
    ),
    treatment=("received_benefit", "Whether the household received the food benefit."),
    outcome=Outcome(
        "food_security",
        "Food security score a year later (points, higher is more secure).",
        50.0,
        3.0,
        1,
    ),
    sharp_rule="every household assessed at or below the threshold received the benefit and "
    "no household above it did",
    fuzzy_rule="households assessed at or below the threshold qualified but some never claimed "
    "it, and some above it received it under a hardship rule",
    manipulation="Households could not steer their assessed income: it was computed by the "
    "agency from tax records.",
    exclusion="Being at or below the threshold changes the score only through the benefit; "
    "no other programme uses this threshold.",
)

THEMES: tuple[Theme, ...] = (SCHOLARSHIP, PENSION, LEAVE, BENEFIT)
#: strftime formats a date running variable may be written in (one per task).
DATE_FORMATS: tuple[str, ...] = ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y")
