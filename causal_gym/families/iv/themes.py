"""The iv family's themes: what the instrument, the treatment and the outcome are
called and how the README tells their story (a lottery, an encouragement letter,
distance to a clinic). Public words only: a theme knows nothing of the model's draw.

A covariate or the outcome is staged as loc + scale * (its model value), rounded and
kept inside `bounds` (a covariate only adds precision, the instrument being
independent of it, so the clipping of its rare tails changes no truth).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Measure:
    """A numeric column: its name, its README description, its affine map from model
    units, its decimals and its plausible range."""

    name: str
    description: str
    loc: float
    scale: float
    decimals: int
    bounds: tuple[float, float] = (-np.inf, np.inf)

    def staged(self, values: np.ndarray) -> np.ndarray:
        """Model values in the column's units, rounded as the extract writes them."""
        out = np.clip(self.loc + self.scale * values, *self.bounds)
        return np.round(out, self.decimals)


@dataclass(frozen=True)
class Theme:
    """One story. `binary` themes have a 0/1 instrument and a 0/1 treatment; the
    distance theme has a continuous instrument (km) and a count treatment."""

    key: str
    binary: bool
    unit: str
    units: str
    titles: tuple[str, ...]
    intros: tuple[str, ...]
    id_name: str
    id_prefix: str
    instrument: tuple[str, str]
    treatment: tuple[str, str]
    outcome: Measure
    covariates: tuple[Measure, ...]
    #: "take the treatment" and "the instrument is on", for the complier question.
    take: str
    switched_on: str
    independence: str
    exclusion: str
    monotonicity: str
    confounding: str


LOTTERY = Theme(
    key="lottery",
    binary=True,
    unit="student",
    units="students",
    titles=("Charter school admission lottery", "An oversubscribed charter school's lottery"),
    intros=(
        "Each row of data.csv is one student who applied to an oversubscribed charter middle "
        "school. Seats were offered by a public lottery among applicants; some winners "
        "declined the offer, and some who lost still got a seat later (waiting list, "
        "sibling priority).",
        "The school district's extract covers every applicant to a charter middle school "
        "that had more applicants than seats, one row per student. A lottery decided who was "
        "offered a seat; the offer was not binding, and a seat could also be reached without "
        "winning (waiting list, sibling priority).",
    ),
    id_name="student_id",
    id_prefix="S",
    instrument=("won_lottery", "Whether the student won a seat in the admission lottery."),
    treatment=("attended_charter", "Whether the student attended the charter school that year."),
    outcome=Measure(
        "math_score",
        "Standardized math score at the end of the year (points).",
        500,
        45,
        1,
        (0.0, 1000.0),
    ),
    covariates=(
        Measure(
            "prior_math_score",
            "Math score the spring before applying (points).",
            480,
            50,
            0,
            (0.0, 1000.0),
        ),
        Measure("age_months", "Age at application (months).", 134, 5, 0, (110.0, 160.0)),
        Measure(
            "household_income",
            "Household income on the application form (USD).",
            58000,
            12000,
            0,
            (0.0, np.inf),
        ),
    ),
    take="attend the charter school",
    switched_on="they win the lottery",
    independence="The lottery was a fair random draw among applicants: winning is independent "
    "of the students' potential scores, of whether they would attend, and of their background.",
    exclusion="Exclusion restriction: winning affects the end-of-year score only through "
    "attending the school; the offer by itself changes nothing else.",
    monotonicity="Monotonicity: no student attends because they lost the lottery (no "
    "defiers); winning can only make attending more likely.",
    confounding="Families more engaged in their child's schooling are more likely both to "
    "take up a seat and to see higher scores; that engagement is not recorded.",
)

LETTER = Theme(
    key="letter",
    binary=True,
    unit="job seeker",
    units="job seekers",
    titles=(
        "Encouragement letters for a job-training course",
        "A job-training encouragement trial",
    ),
    intros=(
        "Each row of data.csv is one job seeker registered with the public employment "
        "service. A randomly chosen group was mailed a personal letter encouraging them to "
        "sign up for a free job-training course; anyone could sign up, letter or not.",
        "The employment service sent a letter recommending its free training course to a "
        "random subset of registered job seekers; the course was open to all. One row per "
        "job seeker.",
    ),
    id_name="person_id",
    id_prefix="P",
    instrument=("sent_letter", "Whether the job seeker was mailed the encouragement letter."),
    treatment=("completed_course", "Whether the job seeker completed the training course."),
    outcome=Measure(
        "earnings_next_year",
        "Earnings in the year after registration (USD).",
        32000,
        5000,
        0,
        (0.0, np.inf),
    ),
    covariates=(
        Measure("age", "Age at registration (years).", 39, 8, 0, (18.0, 70.0)),
        Measure(
            "prior_earnings",
            "Earnings in the year before registration (USD).",
            29000,
            6500,
            0,
            (0.0, np.inf),
        ),
        Measure("years_schooling", "Completed years of schooling.", 12.5, 2, 0, (6.0, 22.0)),
    ),
    take="complete the course",
    switched_on="they are sent the letter",
    independence="Who was sent the letter was decided at random: it is independent of the job "
    "seekers' potential earnings, of whether they would take the course, and of their "
    "background.",
    exclusion="Exclusion restriction: the letter affects earnings only through the course; it "
    "carried no job leads, money or other help.",
    monotonicity="Monotonicity: nobody skips the course because they got the letter (no defiers).",
    confounding="More motivated job seekers are more likely both to take the course and to "
    "earn more; motivation is not recorded.",
)

DISTANCE = Theme(
    key="distance",
    binary=False,
    unit="patient",
    units="patients",
    titles=("Physiotherapy after knee surgery", "Distance to the clinic and knee recovery"),
    intros=(
        "Each row of data.csv is one patient referred for physiotherapy after knee surgery "
        "in a regional health system. Patients chose how many sessions to attend at their "
        "nearest clinic; those who live farther away tend to attend fewer.",
        "A regional health system's records of patients sent to physiotherapy after knee "
        "surgery, one row per patient: how far they live from the nearest clinic, how many "
        "sessions they attended and how well the knee worked six months later.",
    ),
    id_name="patient_id",
    id_prefix="K",
    instrument=("distance_km", "Road distance from home to the nearest physiotherapy clinic (km)."),
    treatment=("sessions_attended", "Physiotherapy sessions attended (count)."),
    outcome=Measure(
        "knee_score",
        "Knee function score six months after surgery (points, higher is better).",
        62,
        7,
        1,
        (0.0, 100.0),
    ),
    covariates=(
        Measure("age", "Age at surgery (years).", 64, 8, 0, (30.0, 95.0)),
        Measure("bmi", "Body-mass index at surgery (kg/m2).", 28, 3.5, 1, (15.0, 50.0)),
        Measure(
            "baseline_score", "Knee function score before surgery (points).", 45, 8, 1, (0.0, 100.0)
        ),
    ),
    take="attend more sessions",
    switched_on="they live nearer",
    independence="Where patients live is unrelated to their recovery prospects and to the "
    "recorded covariates: distance to the clinic is as good as randomly assigned.",
    exclusion="Exclusion restriction: distance affects the knee score only through the number "
    "of sessions attended.",
    monotonicity="",
    confounding="Patients who are more determined to recover both attend more sessions and "
    "recover better; that determination is not recorded.",
)

THEMES: tuple[Theme, ...] = (LOTTERY, LETTER, DISTANCE)
