"""Spanish synthetic notes: MEDDOCAN-style case reports labelled with the MEDDOCAN label names."""
from __future__ import annotations

import datetime as dt
import random
from typing import Sequence

from faker import Faker

from corpus.synthetic.cases import CASES_ES
from corpus.synthetic.composer import Composer, Draw, ascii_fold
from corpus.synthetic.templates import (ES_ACTUAL, ES_ANTECEDENTES_ADULT, ES_ANTECEDENTES_CHILD,
                                        ES_ANTECEDENTES_FAMILIARES, ES_AUTORIDADES, ES_EVOLUCION, ES_EVOLUCION_HEAD,
                                        ES_EXPLORACION, ES_EXPLORACION_NINO, ES_HABITOS, ES_LABORATORIOS,
                                        ES_NUMBERS, ES_OPENINGS_ADULT, ES_OPENINGS_CHILD, ES_PRUEBAS, ES_PRUEBAS_NINO,
                                        ES_SECTION_TITLES, ES_TRATAMIENTO, ES_TRATAMIENTO_HEAD)
from corpus.synthetic.vocabulary import (ADVOCACIONES, ANTECEDENTES, BARRIOS, CIRUGIAS, ENFERMEDADES_FAMILIARES,
                                         FAMILIARES_ADULTO, FAMILIARES_NINO, FAMILIARES_PLURAL, FARMACOS_CRONICOS,
                                         MESES, PAISES_ORIGEN, PROFESIONES, PROVINCIAS, SERVICIOS_APOYO,
                                         SERVICIOS_APOYO_NINO)
from corpus.types import Document


class SpanishNote(Composer):
    """One Spanish case report: a patient, the clinicians and places around them, and a clinical case."""

    DECIMAL_MARK = ","
    NUMBERS = ES_NUMBERS

    def __init__(self, *, rng: random.Random, faker: Faker) -> None:
        super().__init__(rng=rng, faker=faker)
        f = faker
        self.child = rng.random() < 0.09
        self.case = rng.choice(_CASES_ES_CHILD if self.child else _CASES_ES_ADULT)
        self.female = rng.random() < 0.5 if self.case.sexes == "HM" else self.case.sexes == "M"
        self.age = rng.randint(*self.case.ages)
        self.infant_months = rng.randint(2, 11) if self.age == 0 else 0
        self.first_name = f.first_name_female() if self.female else f.first_name_male()
        if rng.random() < 0.12:
            self.first_name += " " + (f.first_name_female() if self.female else f.first_name_male())
        self.surnames = (f.last_name(), f.last_name())
        self.province, self.postal_prefix, self.city = self._place()
        # Most case reports are written where the patient lives; some at a referral centre elsewhere.
        if rng.random() < 0.8:
            self.hospital_city, self.hospital_prefix = self.city, self.postal_prefix
        else:
            _province, self.hospital_prefix, self.hospital_city = self._place()
        self.admission = dt.date(2005, 1, 1) + dt.timedelta(days=rng.randrange(15 * 365))
        if self.infant_months:
            lived = int(30.4 * self.infant_months) + rng.randrange(0, 25)
        else:
            lived = int(365.25 * self.age) + rng.randrange(1, 360)
        self.birth = self.admission - dt.timedelta(days=lived)
        self.cursor = self.admission
        self.date_style = rng.choices(("slash", "long", "long_del", "dash", "dot"), weights=(45, 33, 10, 7, 5))[0]
        self.doctor = self._new_person()
        self.referring_doctor = self.doctor if rng.random() < 0.75 else self._new_person()
        self.other_doctor = self._new_person()
        self.hospital = self._hospital_name(self.hospital_city)
        self.hospital2 = self._hospital_name(self._place()[2] if rng.random() < 0.5 else self.city)
        self.centro_salud = self._centro_salud()
        profession = rng.choice(PROFESIONES)[1 if self.female else 0]
        if self.age >= 67 and rng.random() < 0.6:
            profession += " jubilada" if self.female else " jubilado"
        self.profession = profession
        relatives = FAMILIARES_NINO if self.child else FAMILIARES_ADULTO
        if not self.child and self.age > 25:
            relatives = relatives + ((("marido", False),) if self.female else (("esposa", True),))
        self.next_relative = Draw(list(relatives), rng)
        self.next_antecedente = Draw(list(ANTECEDENTES), rng)
        self.next_farmaco = Draw(list(FARMACOS_CRONICOS), rng)
        self.next_enfermedad_familiar = Draw(list(ENFERMEDADES_FAMILIARES), rng)
        self.next_motivo = Draw(list(self.case.motivos), rng)
        self.diagnostico = self.case.diagnostico

    # -- people and places -------------------------------------------------------------------------

    def _place(self) -> tuple[str, str, str]:
        """A province, its postal prefix and its main city; Madrid is over-represented, as in real reports."""
        province = "Madrid" if self.rng.random() < 0.2 else self.faker.city()
        if province == "Ciudad":  # Faker's es_ES list splits "Ciudad Real"
            province = "Ciudad Real"
        prefix, city = PROVINCIAS.get(province, (self.faker.postcode()[:2], province))
        return province, prefix, city

    def _new_person(self) -> tuple[str, bool]:
        female = self.rng.random() < 0.5
        f = self.faker
        first = f.first_name_female() if female else f.first_name_male()
        return f"{first} {f.last_name()} {f.last_name()}", female

    def _hospital_name(self, city: str) -> str:
        rng = self.rng
        kind = rng.randrange(9)
        if kind == 0:
            return f"Hospital Universitario de {city}"
        if kind == 1:
            return f"Hospital General Universitario de {city}"
        if kind == 2:
            return f"Complejo Hospitalario de {city}"
        if kind == 3:
            return f"Hospital Clínico Universitario de {city}"
        if kind == 4:
            return f"Hospital Universitario {rng.choice(ADVOCACIONES)}"
        if kind == 5:
            return f"Hospital {rng.choice(ADVOCACIONES)} de {city}"
        if kind == 6:
            return f"Hospital Universitario Doctor {self.faker.last_name()}"
        if kind == 7:
            return f"Hospital General de {city}"
        return f"Complejo Asistencial Universitario de {city}"

    def _centro_salud(self) -> str:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            return f"Centro de Salud {rng.choice(BARRIOS)}"
        if kind == 1:
            return f"Centro de Salud de {self.city}"
        if kind == 2:
            return f"Centro de Salud {self.city}-{rng.choice(BARRIOS)}"
        return f"Centro de Salud Zona {rng.randint(1, 9)}"

    def _street(self, *, with_floor: bool) -> str:
        rng = self.rng
        name = self.faker.street_name()
        if name.startswith("Calle ") and rng.random() < 0.35:
            name = "C/ " + name[6:]
        elif name.startswith("Avenida ") and rng.random() < 0.4:
            name = "Avda. " + name[8:]
        number = "s/n" if rng.random() < 0.12 else str(rng.randint(1, 180))
        street = f"{name}, {number}" if rng.random() < 0.6 else f"{name} {number}"
        if with_floor and number != "s/n" and rng.random() < 0.45:
            street += f", {rng.randint(1, 9)}º {rng.choice('ABCDI')}"
        return street

    def _email(self, person: str) -> str:
        rng = self.rng
        parts = person.split()
        first, surname, second = ascii_fold(parts[0]), ascii_fold(parts[-2]), ascii_fold(parts[-1])
        style = rng.randrange(5)
        if style == 0:
            user = f"{first[0]}{surname}"
        elif style == 1:
            user = f"{first}.{surname}"
        elif style == 2:
            user = f"{first[:3]}{surname[:3]}{second[:2]}"
        elif style == 3:
            user = f"{first}{surname}{rng.randint(1, 99)}"
        else:
            user = f"{first[0]}{surname}{second[0]}"
        return f"{user}@{self.faker.free_email_domain()}"

    def _phone(self) -> str:
        fmt = self.rng.choice(("9## ### ###", "9########", "9## ## ## ##", "6## ### ###"))
        return self.faker.numerify(fmt)

    # -- dates ---------------------------------------------------------------------------------------

    def _format_date(self, day: dt.date, style: str) -> str:
        if style == "slash":
            return f"{day.day:02d}/{day.month:02d}/{day.year}"
        if style == "dash":
            return f"{day.day:02d}-{day.month:02d}-{day.year}"
        if style == "dot":
            return f"{day.day:02d}.{day.month:02d}.{day.year}"
        if style == "long_del":
            return f"{day.day} de {MESES[day.month - 1]} del {day.year}"
        return f"{day.day} de {MESES[day.month - 1]} de {day.year}"

    def _note_date(self, day: dt.date) -> str:
        style = self.date_style if self.rng.random() < 0.8 else self.rng.choice(("slash", "long"))
        return self._format_date(day, style)

    def _past_date(self) -> str:
        rng = self.rng
        # A child's notes date earlier events of the family, not of the child.
        earliest = self.admission - dt.timedelta(days=3650) if self.child else self.birth + dt.timedelta(days=5840)
        day = self._date_between(earliest, self.admission - dt.timedelta(days=60))
        kind = rng.random()
        if kind < 0.45:
            return str(day.year)
        if kind < 0.6:
            return f"el año {day.year}"
        if kind < 0.85:
            month = MESES[day.month - 1]
            return f"{month} de {day.year}" if rng.random() < 0.7 else f"{month.capitalize()} del {day.year}"
        return self._note_date(day)

    # -- slots: the patient ---------------------------------------------------------------------------

    def _age_text(self, years: int) -> str:
        return f"{years} año" if years == 1 else f"{years} años"

    def _s_edad(self) -> None:
        text = f"{self.infant_months} meses" if self.infant_months else self._age_text(self.age)
        self.w.phi(text, "EDAD_SUJETO_ASISTENCIA")

    def _s_edad_joven(self) -> None:
        self.w.phi(self._age_text(self.rng.randint(14, min(25, self.age))), "EDAD_SUJETO_ASISTENCIA")

    def _s_edad_previa(self) -> None:
        self.w.text("a los ")
        years = self.rng.randint(max(18, self.age - 30), max(18, self.age - 1))
        self.w.phi(self._age_text(years), "EDAD_SUJETO_ASISTENCIA")

    def _sex_word(self) -> str:
        if self.child:
            return "niña" if self.female else "niño"
        if self.female:
            return "mujer"
        return "varón" if self.rng.random() < 0.85 else "hombre"

    def _s_sexo(self) -> None:
        self.w.phi(self._sex_word(), "SEXO_SUJETO_ASISTENCIA")

    def _s_Sexo(self) -> None:
        self.w.phi(self._sex_word().capitalize(), "SEXO_SUJETO_ASISTENCIA")

    def _patient_reference(self, capital: bool) -> None:
        rng = self.rng
        w = self.w
        kind = rng.randrange(3)
        if kind == 0 and not self.child:
            title = ("la Sra. " if self.female else "el Sr. ")
            w.text(title[0].upper() + title[1:] if capital else title)
            w.phi(self.surnames[0], "NOMBRE_SUJETO_ASISTENCIA")
        elif kind == 1:
            w.phi(self.first_name, "NOMBRE_SUJETO_ASISTENCIA")
        else:
            w.phi(f"{self.first_name} {self.surnames[0]} {self.surnames[1]}", "NOMBRE_SUJETO_ASISTENCIA")

    def _s_paciente(self) -> None:
        self._patient_reference(capital=False)

    def _s_Paciente(self) -> None:
        self._patient_reference(capital=True)

    def _s_profesion(self) -> None:
        self.w.phi(self.profession, "PROFESION")

    def _s_o(self) -> None:
        self.w.text("a" if self.female else "o")

    def _s_a(self) -> None:
        if self.female:
            self.w.text("a")

    def _s_el(self) -> None:
        self.w.text("la" if self.female else "el")

    def _s_lo(self) -> None:
        self.w.text("la" if self.female else "lo")

    def _s_un(self) -> None:
        self.w.text("una" if self.female else "un")

    # -- slots: relatives -----------------------------------------------------------------------------

    def _s_familiar(self) -> None:
        self.w.phi(self.next_relative()[0], "FAMILIARES_SUJETO_ASISTENCIA")

    def _s_su_familiar(self) -> None:
        self.w.text("su ")
        self._s_familiar()

    def _s_Su_familiar(self) -> None:
        self.w.text("Su ")
        if self.child:
            self.w.phi("madre" if self.rng.random() < 0.6 else "padre", "FAMILIARES_SUJETO_ASISTENCIA")
        else:
            self._s_familiar()

    def _s_su_progenitor(self) -> None:
        self.w.text("su ")
        self.w.phi("madre" if self.rng.random() < 0.6 else "padre", "FAMILIARES_SUJETO_ASISTENCIA")

    def _s_antecedentes_familiares(self) -> None:
        self.render(self.rng.choice(_ES_ANTECEDENTES_FAMILIARES_T))

    def _s_habitos(self) -> None:
        self.render(self.rng.choice(_ES_HABITOS_T))

    def _s_un_familiar(self) -> None:
        noun, female = self.next_relative()
        self.w.text("una " if female else "un ")
        self.w.phi(noun, "FAMILIARES_SUJETO_ASISTENCIA")

    def _s_su_familiar_plural(self) -> None:
        self.w.text("sus ")
        self.w.phi("padres" if self.child else self.rng.choice(FAMILIARES_PLURAL), "FAMILIARES_SUJETO_ASISTENCIA")

    # -- slots: clinicians, places, institutions ------------------------------------------------------

    def _doctor_reference(self, person: tuple[str, bool]) -> None:
        name, female = person
        self.w.text("la Dra. " if female else "el Dr. ")
        self.w.phi(name, "NOMBRE_PERSONAL_SANITARIO")

    def _s_el_dr_medico(self) -> None:
        self._doctor_reference(self.doctor)

    def _s_al_dr_medico(self) -> None:
        name, female = self.doctor
        self.w.text("a la Dra. " if female else "al Dr. ")
        self.w.phi(name, "NOMBRE_PERSONAL_SANITARIO")

    def _s_el_dr_otro(self) -> None:
        self._doctor_reference(self.other_doctor)

    def _s_hospital(self) -> None:
        self.w.phi(self.hospital, "HOSPITAL")

    def _s_hospital2(self) -> None:
        self.w.phi(self.hospital2, "HOSPITAL")

    def _s_centro_salud(self) -> None:
        self.w.phi(self.centro_salud, "CENTRO_SALUD")

    def _s_el_centro_salud(self) -> None:
        self.w.text("el ")
        self.w.phi(self.centro_salud, "CENTRO_SALUD")

    def _s_ciudad(self) -> None:
        self.w.phi(self.city, "TERRITORIO")

    def _s_pais_origen(self) -> None:
        self.w.phi(self.rng.choice(PAISES_ORIGEN), "PAIS")

    def _s_espana(self) -> None:
        self.w.phi("España", "PAIS")

    def _s_lugar_origen(self) -> None:
        if self.rng.random() < 0.5:
            self._s_pais_origen()
        else:
            self.w.phi(self._place()[2], "TERRITORIO")

    def _institution(self, choices: Sequence[tuple[str, str]]) -> None:
        """Write ``article + name`` for one (article, pattern) of ``templates.py``."""
        article, pattern = self.rng.choice(choices)
        self.w.text(article)
        name = pattern.format(city=self.hospital_city, province=self.province, surname=self.faker.last_name())
        self.w.phi(name, "INSTITUCION")

    def _s_a_laboratorio(self) -> None:
        self._institution(ES_LABORATORIOS)

    def _s_a_autoridad(self) -> None:
        self._institution(ES_AUTORIDADES)

    def _s_telefono(self) -> None:
        self.w.phi(self._phone(), "NUMERO_TELEFONO")

    # -- slots: dates ---------------------------------------------------------------------------------

    def _s_fecha_ingreso(self) -> None:
        self.w.phi(self._note_date(self.admission), "FECHAS")

    def _s_fecha(self) -> None:
        self.cursor += dt.timedelta(days=self.rng.randint(1, 12))
        self.w.phi(self._note_date(self.cursor), "FECHAS")

    def _s_fecha_control(self) -> None:
        self.cursor += dt.timedelta(days=self.rng.randint(30, 200))
        if self.rng.random() < 0.3:
            text = f"{MESES[self.cursor.month - 1]} de {self.cursor.year}"
            self.w.text("mes de ")
            self.w.phi(text, "FECHAS")
        else:
            self.w.phi(self._note_date(self.cursor), "FECHAS")

    def _s_fecha_previa(self) -> None:
        text = self._past_date()
        if text.startswith("el año "):
            self.w.text("el año ")
            self.w.phi(text[7:], "FECHAS")
        else:
            self.w.phi(text, "FECHAS")

    # -- slots: clinical content (not PHI) ------------------------------------------------------------

    def _s_motivo(self) -> None:
        self.w.text(self.next_motivo())

    def _s_servicio(self) -> None:
        self.w.text(self.case.servicio)

    def _s_servicio_apoyo(self) -> None:
        self.w.text(self.rng.choice(SERVICIOS_APOYO_NINO if self.child else SERVICIOS_APOYO))

    def _s_diagnostico(self) -> None:
        self.w.text(self.diagnostico)

    def _s_antecedente(self) -> None:
        self.w.text(self.next_antecedente())

    def _s_cirugia(self) -> None:
        self.w.text(self.rng.choice(CIRUGIAS))

    def _s_farmaco_cronico(self) -> None:
        self.w.text(self.next_farmaco())

    def _s_enfermedad_familiar(self) -> None:
        self.w.text(self.next_enfermedad_familiar())

    # -- the note -------------------------------------------------------------------------------------

    def compose(self, *, name: str, meta: dict) -> Document:
        rng = self.rng
        target_words = int(150 + 550 * rng.random() ** 1.4)
        self._header()
        compiled = _COMPILED_ES[id(self.case)]
        child = self.child
        many = 99
        opening, antecedentes, actual, exploracion, pruebas, tratamiento, alta, evolucion = self._plan(
            [
                (_ES_OPENINGS_CHILD_T if child else _ES_OPENINGS_ADULT_T, 1, 1),
                (_ES_ANTECEDENTES_CHILD_T if child else _ES_ANTECEDENTES_ADULT_T, 1, many),
                (compiled["actual"] + _ES_ACTUAL_T, 0, many),
                (compiled["exploracion"] + (_ES_EXPLORACION_NINO_T if child else _ES_EXPLORACION_T), 1, many),
                (compiled["pruebas"] + (_ES_PRUEBAS_NINO_T if child else _ES_PRUEBAS_T), 1, many),
                (compiled["tratamiento"] + _ES_TRATAMIENTO_T, 1, many),
                (_ES_EVOLUCION_HEAD_T, 0, 1),
                (compiled["evolucion"] + _ES_EVOLUCION_T, 1, many),
            ],
            target_words - 85,  # the header and the footer
        )
        # The diagnosis opens the treatment section; the discharge opens the follow-up.
        planned = [opening, antecedentes, actual, exploracion, pruebas,
                   [rng.choice(_ES_TRATAMIENTO_HEAD_T), *tratamiento], alta + evolucion]
        w = self.w
        if rng.random() < 0.3:
            for position, (paragraph, titles) in enumerate(zip(planned, ES_SECTION_TITLES)):
                if not paragraph:
                    continue
                w.text(("\n" if position else "") + rng.choice(titles) + ": ")
                self.render_paragraph(paragraph)
        else:
            w.text("Informe clínico del paciente: ")
            first = True
            for paragraph in planned:
                if not paragraph:
                    continue
                if not first:
                    w.text("\n")
                first = False
                self.render_paragraph(paragraph)
        w.text("\n")
        self._footer()
        meta = dict(meta, specialty=self.case.servicio)
        return Document(text="".join(w.parts), spans=tuple(w.spans), name=name, meta=meta)

    def _header(self) -> None:
        rng = self.rng
        w = self.w
        if rng.random() < 0.9:
            w.text("Datos del paciente.\n")
        w.text("Nombre:  " if rng.random() < 0.5 else "Nombre: ")
        w.phi(self.first_name, "NOMBRE_SUJETO_ASISTENCIA")
        w.text(".\nApellidos: ")
        w.phi(f"{self.surnames[0]} {self.surnames[1]}", "NOMBRE_SUJETO_ASISTENCIA")
        w.text(".\nNHC: ")
        w.phi(self._digits(rng.randint(6, 8)), "ID_SUJETO_ASISTENCIA")
        if rng.random() < 0.85:
            w.text(".\nNASS: ")
            nass = f"{rng.randint(1, 52):02d} {self._digits(8)}"
            if rng.random() < 0.7:
                nass += f" {rng.randint(0, 99):02d}"
            w.phi(nass, "ID_ASEGURAMIENTO")
        w.text(".\nDomicilio: ")
        w.phi(self._street(with_floor=True), "CALLE")
        w.text(".\nLocalidad/ Provincia: ")
        w.phi(self.city, "TERRITORIO")
        if self.province != self.city and rng.random() < 0.4:
            w.text(", ")
            w.phi(self.province, "TERRITORIO")
        w.text(".\nCP: ")
        w.phi(f"{self.postal_prefix}{rng.randint(1, 99):03d}", "TERRITORIO")
        w.text(".\nDatos asistenciales.\nFecha de nacimiento: ")
        w.phi(self._format_date(self.birth, "slash"), "FECHAS")
        w.text(".\nPaís: ")
        w.phi("España", "PAIS")
        w.text(".\nEdad: " if rng.random() < 0.85 else ".\nEdad:")
        self._s_edad()
        w.text(" Sexo: ")
        w.phi("M" if self.female else "H", "SEXO_SUJETO_ASISTENCIA")
        w.text(".\nFecha de Ingreso: ")
        w.phi(self._format_date(self.admission, "slash"), "FECHAS")
        if rng.random() < 0.3:
            w.text(f".\nServicio: {self.case.servicio}")
        if rng.random() < 0.25:
            w.text(".\nEpisodio: ")
            w.phi(self._digits(rng.randint(6, 9)), "ID_CONTACTO_ASISTENCIAL")
        w.text(".\nMédico:  " if rng.random() < 0.4 else ".\nMédico: ")
        w.phi(self.doctor[0], "NOMBRE_PERSONAL_SANITARIO")
        w.text(" NºCol: ")
        w.phi(f"{self.hospital_prefix} {self.hospital_prefix} {self._digits(5)}", "ID_TITULACION_PERSONAL_SANITARIO")
        w.text(".\n")

    def _footer(self) -> None:
        rng = self.rng
        w = self.w
        name, female = self.referring_doctor
        w.text("Remitido por: ")
        if rng.random() < 0.35:
            w.text("Dra. " if female else "Dr. ")
        w.phi(name, "NOMBRE_PERSONAL_SANITARIO")
        w.text(" ")
        if rng.random() < 0.6:
            w.phi(self.hospital, "HOSPITAL")
            w.text(". ")
            if rng.random() < 0.5:
                w.text(f"Servicio de {self.case.servicio}. ")
        w.phi(self._street(with_floor=False), "CALLE")
        w.text(" " if rng.random() < 0.6 else ". ")
        w.phi(f"{self.hospital_prefix}{rng.randint(1, 99):03d}", "TERRITORIO")
        w.text(" ")
        w.phi(self.hospital_city, "TERRITORIO")
        if rng.random() < 0.55:
            w.text(", " if rng.random() < 0.5 else " ")
            w.phi("España", "PAIS")
        if rng.random() < 0.2:
            w.text(". Tel.: ")
            w.phi(self._phone(), "NUMERO_TELEFONO")
            if rng.random() < 0.4:
                w.text(". Fax: ")
                w.phi(self.faker.numerify("9## ### ###"), "NUMERO_FAX")
            w.text(".")
        w.text(" E-mail: " if rng.random() < 0.8 else " Correo electrónico: ")
        w.phi(self._email(name), "CORREO_ELECTRONICO")


_CASES_ES_CHILD = tuple(case for case in CASES_ES if case.ages[1] < 16)
_CASES_ES_ADULT = tuple(case for case in CASES_ES if case.ages[0] >= 16)
_ES_OPENINGS_ADULT_T = SpanishNote.compile_all(ES_OPENINGS_ADULT)
_ES_OPENINGS_CHILD_T = SpanishNote.compile_all(ES_OPENINGS_CHILD)
_ES_ANTECEDENTES_ADULT_T = SpanishNote.compile_all(ES_ANTECEDENTES_ADULT)
_ES_ANTECEDENTES_CHILD_T = SpanishNote.compile_all(ES_ANTECEDENTES_CHILD)
_ES_ACTUAL_T = SpanishNote.compile_all(ES_ACTUAL)
_ES_EXPLORACION_T = SpanishNote.compile_all(ES_EXPLORACION)
_ES_PRUEBAS_T = SpanishNote.compile_all(ES_PRUEBAS)
_ES_EXPLORACION_NINO_T = SpanishNote.compile_all(ES_EXPLORACION_NINO)
_ES_PRUEBAS_NINO_T = SpanishNote.compile_all(ES_PRUEBAS_NINO)
_ES_HABITOS_T = SpanishNote.compile_all(ES_HABITOS)
_ES_ANTECEDENTES_FAMILIARES_T = SpanishNote.compile_all(ES_ANTECEDENTES_FAMILIARES)
_ES_TRATAMIENTO_HEAD_T = SpanishNote.compile_all(ES_TRATAMIENTO_HEAD)
_ES_TRATAMIENTO_T = SpanishNote.compile_all(ES_TRATAMIENTO)
_ES_EVOLUCION_HEAD_T = SpanishNote.compile_all(ES_EVOLUCION_HEAD)
_ES_EVOLUCION_T = SpanishNote.compile_all(ES_EVOLUCION)
_COMPILED_ES = {
    id(case): {section: SpanishNote.compile_all(getattr(case, section))
               for section in ("actual", "exploracion", "pruebas", "tratamiento", "evolucion")}
    for case in CASES_ES
}
