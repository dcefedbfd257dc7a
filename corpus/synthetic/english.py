"""English synthetic notes: i2b2-2014-style discharge summaries labelled with the i2b2-2014 names."""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from faker import Faker

from corpus.synthetic.cases import CASES_EN
from corpus.synthetic.composer import Composer, Draw, ascii_fold
from corpus.synthetic.templates import EN_COURSE, EN_DISPOSITION, EN_HISTORY, EN_NUMBERS, EN_OPENINGS
from corpus.synthetic.vocabulary import COUNTRIES, HOSPITAL_SUFFIXES, MONTHS, PMH_EN, PROFESSIONS_EN
from corpus.types import Document


@dataclass(frozen=True)
class EnglishVocabulary:
    """Faker en_US values drawn once per call: its weighted US name tables cost ~50 µs a draw."""

    female_names: tuple[str, ...]
    male_names: tuple[str, ...]
    last_names: tuple[str, ...]
    cities: tuple[str, ...]
    streets: tuple[str, ...]
    companies: tuple[str, ...]

    @classmethod
    def from_faker(cls, faker: Faker) -> "EnglishVocabulary":
        return cls(
            female_names=tuple(faker.first_name_female() for _ in range(600)),
            male_names=tuple(faker.first_name_male() for _ in range(600)),
            last_names=tuple(faker.last_name() for _ in range(1500)),
            cities=tuple(faker.city() for _ in range(300)),
            streets=tuple(faker.street_name() for _ in range(400)),
            companies=tuple(faker.company() for _ in range(300)),
        )


class EnglishNote(Composer):
    """One English discharge summary labelled with i2b2-2014 names."""

    NUMBERS = EN_NUMBERS

    def __init__(self, *, rng: random.Random, faker: Faker, vocabulary: EnglishVocabulary) -> None:
        super().__init__(rng=rng, faker=faker)
        v = vocabulary
        self.case = rng.choice(CASES_EN)
        self.female = rng.random() < 0.5
        self.age = rng.randint(22, 94)
        self.first_name = rng.choice(v.female_names if self.female else v.male_names)
        self.last_name = rng.choice(v.last_names)
        self.city = rng.choice(v.cities)
        self.state = faker.state_abbr() if rng.random() < 0.6 else faker.state()
        self.street = f"{rng.randint(1, 9999)} {rng.choice(v.streets)}"
        self.admission = dt.date(2008, 1, 1) + dt.timedelta(days=rng.randrange(14 * 365))
        self.cursor = self.admission
        self.doctor = self._person(v)
        self.doctor2 = self._person(v)
        self.hospital = f"{rng.choice(v.last_names)} {rng.choice(HOSPITAL_SUFFIXES)}"
        self.hospital2 = f"{rng.choice(v.cities)} {rng.choice(HOSPITAL_SUFFIXES)}"
        self.organization = rng.choice(v.companies)
        self.profession = rng.choice(PROFESSIONS_EN)
        self.date_style = rng.randrange(4)
        self.next_pmh = Draw(list(PMH_EN), rng)
        self.next_reason = Draw(list(self.case.reason), rng)

    def _person(self, v: EnglishVocabulary) -> str:
        first = self.rng.choice(v.female_names if self.rng.random() < 0.5 else v.male_names)
        return f"{first} {self.rng.choice(v.last_names)}"

    def _format_date(self, day: dt.date, style: int) -> str:
        if style == 0:
            return f"{day.month}/{day.day}/{day.year}"
        if style == 1:
            return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
        if style == 2:
            return day.isoformat()
        return f"{day.month:02d}/{day.day:02d}/{day.year % 100:02d}"

    def _s_age(self) -> None:
        self.w.phi(str(self.age), "AGE")

    def _s_Patient(self) -> None:
        if self.rng.random() < 0.7:
            self.w.text("Ms. " if self.female else "Mr. ")
            self.w.phi(self.last_name, "PATIENT")
        else:
            self.w.phi(f"{self.first_name} {self.last_name}", "PATIENT")

    def _s_sex(self) -> None:
        self.w.text("woman" if self.female else "man")

    def _s_He(self) -> None:
        self.w.text("She" if self.female else "He")

    def _s_he(self) -> None:
        self.w.text("she" if self.female else "he")

    def _s_His(self) -> None:
        self.w.text("Her" if self.female else "His")

    def _s_his(self) -> None:
        self.w.text("her" if self.female else "his")

    def _s_profession(self) -> None:
        self.w.phi(self.profession, "PROFESSION")

    def _s_reason(self) -> None:
        self.w.text(self.next_reason())

    def _s_pmh(self) -> None:
        self.w.text(self.next_pmh())

    def _s_hospital(self) -> None:
        self.w.phi(self.hospital, "HOSPITAL")

    def _s_hospital2(self) -> None:
        self.w.phi(self.hospital2, "HOSPITAL")

    def _s_doctor2(self) -> None:
        self.w.text("Dr. ")
        self.w.phi(self.doctor2, "DOCTOR")

    def _s_city(self) -> None:
        self.w.phi(self.city, "CITY")

    def _s_country(self) -> None:
        self.w.phi(self.rng.choice(COUNTRIES), "COUNTRY")

    def _s_organization(self) -> None:
        self.w.phi(self.organization, "ORGANIZATION")

    def _s_phone(self) -> None:
        self.w.phi(self.faker.numerify("(###) ###-####"), "PHONE")

    def _s_admission(self) -> None:
        self.w.phi(self._format_date(self.admission, self.date_style), "DATE")

    def _s_date(self) -> None:
        self.cursor += dt.timedelta(days=self.rng.randint(1, 10))
        self.w.phi(self._format_date(self.cursor, self.date_style), "DATE")

    def _s_year(self) -> None:
        self.w.phi(str(self.admission.year - self.rng.randint(1, 20)), "DATE")

    def _s_month_year(self) -> None:
        day = self.admission - dt.timedelta(days=self.rng.randint(90, 3000))
        self.w.phi(f"{MONTHS[day.month - 1]} {day.year}", "DATE")

    def compose(self, *, name: str, meta: dict) -> Document:
        rng = self.rng
        w = self.w
        w.text("Record date: ")
        self._s_admission()
        w.text("\n\n")
        w.phi(self.hospital, "HOSPITAL")
        w.text("\n")
        w.phi(self.street, "STREET")
        w.text("\n")
        w.phi(self.city, "CITY")
        w.text(", ")
        w.phi(self.state, "STATE")
        w.text(" ")
        w.phi(self.faker.zipcode(), "ZIP")
        w.text("\n\nDISCHARGE SUMMARY\n\nPatient: ")
        w.phi(f"{self.first_name} {self.last_name}", "PATIENT")
        w.text("\nMRN: ")
        w.phi(self._digits(rng.randint(7, 9)), "MEDICALRECORD")
        if rng.random() < 0.5:
            w.text("    Account: ")
            w.phi(f"{rng.choice('ABCDEFGHK')}{self._digits(7)}", "IDNUM")
        w.text("\nAdmission date: ")
        self._s_admission()
        if rng.random() < 0.3:
            w.text("\nCountry: ")
            w.phi("USA", "COUNTRY")
        w.text("\nAttending: ")
        w.phi(self.doctor, "DOCTOR")
        w.text(", MD\n\nHISTORY OF PRESENT ILLNESS: ")
        compiled = _COMPILED_EN[id(self.case)]
        target_words = int(130 + 320 * rng.random())
        opening, present, history, course, disposition = self._plan(
            [(_EN_OPENINGS_T, 1, 1), (compiled["history"], 1, 9), (_EN_HISTORY_T, 1, 9),
             (compiled["course"] + _EN_COURSE_T, 2, 9), (_EN_DISPOSITION_T, 1, 9)],
            target_words - 60,  # the header and the signature
        )
        self.render_paragraph(opening + present)
        w.text("\n\nPAST HISTORY: ")
        self.render_paragraph(history)
        w.text("\n\nHOSPITAL COURSE: ")
        self.render_paragraph(course)
        w.text("\n\nDISPOSITION: ")
        self.render_paragraph(disposition)
        w.text("\n\n")
        w.phi(self.doctor, "DOCTOR")
        w.text(", MD\n")
        first, last = self.doctor.split()[0], self.doctor.split()[-1]
        w.phi(f"{ascii_fold(first)[:1]}{ascii_fold(last)}@{self.faker.free_email_domain()}", "EMAIL")
        w.text("\n")
        return Document(text="".join(w.parts), spans=tuple(w.spans), name=name, meta=dict(meta))


_EN_OPENINGS_T = EnglishNote.compile_all(EN_OPENINGS)
_EN_HISTORY_T = EnglishNote.compile_all(EN_HISTORY)
_EN_COURSE_T = EnglishNote.compile_all(EN_COURSE)
_EN_DISPOSITION_T = EnglishNote.compile_all(EN_DISPOSITION)
_COMPILED_EN = {
    id(case): {section: EnglishNote.compile_all(getattr(case, section)) for section in ("history", "course")}
    for case in CASES_EN
}
