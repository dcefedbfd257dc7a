"""Synthetic clinical notes with exact PHI spans, for the demo project and for benchmark pools.

``language="es"`` writes Spanish clinical case reports laid out like the MEDDOCAN corpus (a patient data
header, a narrative report, a "Remitido por" footer) and labels their PHI with the MEDDOCAN label names;
``language="en"`` writes shorter English discharge summaries labelled with the i2b2-2014 names.

Every note is written piece by piece: the offsets of a PHI value are taken at the moment it is appended,
so a span always covers exactly the value that was written, and spans come out sorted and disjoint.
Surface values (names, streets, cities, e-mail domains, phone numbers) come from Faker; the choice of
case, sentences, dates and identifiers comes from a ``random.Random`` seeded with the same seed, so one seed
always gives the same notes, and the first ``k`` notes of ``generate_notes(n, seed=s)`` are the notes of
``generate_notes(k, seed=s)``.
"""
from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Sequence

from faker import Faker

from learning.core.types import Document, Span

LANGUAGES = ("es", "en")
FAKER_LOCALES = {"es": "es_ES", "en": "en_US"}

__all__ = ["LANGUAGES", "generate_notes"]


def generate_notes(n: int, *, seed: int = 0, language: str = "es") -> list[Document]:
    """``n`` synthetic notes with gold PHI spans; the same ``seed`` always gives the same notes."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r} for synthetic notes; choose one of {', '.join(LANGUAGES)}")
    if n < 0:
        raise ValueError(f"cannot generate a negative number of notes ({n})")
    faker = Faker(FAKER_LOCALES[language])
    faker.seed_instance(seed)
    rng = random.Random(seed)
    if language == "es":
        def new_note() -> _Composer:
            return _SpanishNote(rng=rng, faker=faker)
    else:
        vocabulary = _EnglishVocabulary.from_faker(faker)

        def new_note() -> _Composer:
            return _EnglishNote(rng=rng, faker=faker, vocabulary=vocabulary)
    notes = []
    for index in range(n):
        composer = new_note()
        notes.append(composer.compose(name=f"synthetic-{language}-{seed}-{index:05d}",
                                      meta={"source": "synthetic", "language": language, "seed": seed,
                                            "index": index}))
    return notes


# --------------------------------------------------------------------------------------------------
# Writing a note piece by piece
# --------------------------------------------------------------------------------------------------

class _NoteWriter:
    """Accumulates text; a PHI value's span is recorded from the current length as it is appended."""

    __slots__ = ("parts", "spans", "length")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[Span] = []
        self.length = 0

    def text(self, value: str) -> None:
        self.parts.append(value)
        self.length += len(value)

    def phi(self, value: str, label: str) -> None:
        start = self.length
        self.parts.append(value)
        self.length += len(value)
        self.spans.append(Span(start, self.length, label))


_SLOT = re.compile(r"\{(\w+)\}")


_LITERAL, _NUMBER, _METHOD = 0, 1, 2


@dataclass(frozen=True, slots=True)
class _Template:
    """A sentence with ``{slot}`` holes, split once into steps: a literal, a numeric filler or a slot method."""

    steps: tuple[tuple[int, object], ...]
    words: int


def _compile(template: str, composer: type["_Composer"]) -> _Template:
    parts = _SLOT.split(template)
    steps: list[tuple[int, object]] = []
    for position, part in enumerate(parts):
        if position % 2 == 0:
            if part:
                steps.append((_LITERAL, part))
        elif part in composer.NUMBERS:
            steps.append((_NUMBER, composer.NUMBERS[part]))
        elif callable(getattr(composer, "_s_" + part, None)):
            steps.append((_METHOD, "_s_" + part))
        else:
            raise LookupError(f"synthetic note template uses an unknown slot {{{part}}}: {template!r}")
    literal_words = sum(len(text.split()) for text in parts[0::2])
    return _Template(steps=tuple(steps), words=literal_words + 2 * (len(parts) // 2))


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", folded.lower())


@dataclass
class _Draw:
    """Draws items of a pool without repeating any until the pool is used up."""

    items: list
    rng: random.Random
    _queue: list = field(default_factory=list)

    def __call__(self):
        if not self._queue:
            self._queue = list(self.items)
            self.rng.shuffle(self._queue)
        return self._queue.pop()


class _Composer:
    """Shared machinery: slots are methods named ``_s_<slot>``, numeric fillers come from ``NUMBERS``."""

    NUMBERS: dict[str, tuple[float, float, int]] = {}
    DECIMAL_MARK = "."

    def __init__(self, *, rng: random.Random, faker: Faker) -> None:
        self.rng = rng
        self.faker = faker
        self.w = _NoteWriter()

    @classmethod
    def compile_all(cls, templates: Sequence[str]) -> tuple[_Template, ...]:
        return tuple(_compile(template, cls) for template in templates)

    def render(self, template: _Template) -> None:
        text = self.w.text
        for kind, value in template.steps:
            if kind == _LITERAL:
                text(value)
            elif kind == _NUMBER:
                text(self._number(*value))
            else:
                getattr(self, value)()

    def render_paragraph(self, templates: Sequence[_Template]) -> None:
        for position, template in enumerate(templates):
            if position:
                self.w.text(" ")
            self.render(template)

    def _number(self, low: float, high: float, decimals: int) -> str:
        if decimals == 0:
            return str(self.rng.randint(int(low), int(high)))
        value = f"{self.rng.uniform(low, high):.{decimals}f}"
        return value.replace(".", self.DECIMAL_MARK)

    def _digits(self, count: int) -> str:
        return str(self.rng.randrange(10 ** (count - 1), 10 ** count))

    def _plan(self, sections: Sequence[tuple[Sequence[_Template], int, int]], words: int) -> list[list[_Template]]:
        """Pick sentences per section: its minimum, then more at random (up to its maximum) until ``words``.

        Chosen sentences keep the order of their pool, so a pool written in narrative order reads in order.
        """
        rng = self.rng
        chosen: list[list[int]] = []
        spare: list[list[int]] = []
        for pool, minimum, maximum in sections:
            order = list(range(len(pool)))
            rng.shuffle(order)
            take = min(minimum, len(pool))
            chosen.append(order[:take])
            spare.append(order[take:min(maximum, len(pool))])
            words -= sum(pool[i].words for i in order[:take])
        open_sections = [index for index, rest in enumerate(spare) if rest]
        while words > 0 and open_sections:
            section = rng.choice(open_sections)
            pick = spare[section].pop()
            chosen[section].append(pick)
            words -= sections[section][0][pick].words
            if not spare[section]:
                open_sections.remove(section)
        return [[pool[i] for i in sorted(indices)] for (pool, _low, _high), indices in zip(sections, chosen)]

    def _date_between(self, start: dt.date, end: dt.date) -> dt.date:
        if end <= start:
            return start
        return start + dt.timedelta(days=self.rng.randrange((end - start).days + 1))


# --------------------------------------------------------------------------------------------------
# Spanish: MEDDOCAN-style case reports
# --------------------------------------------------------------------------------------------------

_MESES = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
          "noviembre", "diciembre")

# Faker's es_ES "cities" are province names: the two-digit postal prefix of each, and the city a hospital
# of that province is usually named after where the two differ.
_PROVINCIAS: dict[str, tuple[str, str]] = {
    "Álava": ("01", "Vitoria"), "Albacete": ("02", "Albacete"), "Alicante": ("03", "Alicante"),
    "Almería": ("04", "Almería"), "Ávila": ("05", "Ávila"), "Badajoz": ("06", "Badajoz"),
    "Baleares": ("07", "Palma de Mallorca"), "Barcelona": ("08", "Barcelona"), "Burgos": ("09", "Burgos"),
    "Cáceres": ("10", "Cáceres"), "Cádiz": ("11", "Cádiz"), "Castellón": ("12", "Castellón de la Plana"),
    "Ciudad Real": ("13", "Ciudad Real"), "Córdoba": ("14", "Córdoba"),
    "La Coruña": ("15", "A Coruña"), "Cuenca": ("16", "Cuenca"), "Girona": ("17", "Girona"),
    "Granada": ("18", "Granada"), "Guadalajara": ("19", "Guadalajara"), "Guipúzcoa": ("20", "San Sebastián"),
    "Huelva": ("21", "Huelva"), "Huesca": ("22", "Huesca"), "Jaén": ("23", "Jaén"), "León": ("24", "León"),
    "Lleida": ("25", "Lleida"), "La Rioja": ("26", "Logroño"), "Lugo": ("27", "Lugo"),
    "Madrid": ("28", "Madrid"), "Málaga": ("29", "Málaga"), "Murcia": ("30", "Murcia"),
    "Navarra": ("31", "Pamplona"), "Ourense": ("32", "Ourense"), "Asturias": ("33", "Oviedo"),
    "Palencia": ("34", "Palencia"), "Las Palmas": ("35", "Las Palmas de Gran Canaria"),
    "Pontevedra": ("36", "Vigo"), "Salamanca": ("37", "Salamanca"),
    "Santa Cruz de Tenerife": ("38", "Santa Cruz de Tenerife"), "Cantabria": ("39", "Santander"),
    "Segovia": ("40", "Segovia"), "Sevilla": ("41", "Sevilla"), "Soria": ("42", "Soria"),
    "Tarragona": ("43", "Tarragona"), "Teruel": ("44", "Teruel"), "Toledo": ("45", "Toledo"),
    "Valencia": ("46", "Valencia"), "Valladolid": ("47", "Valladolid"), "Vizcaya": ("48", "Bilbao"),
    "Zamora": ("49", "Zamora"), "Zaragoza": ("50", "Zaragoza"), "Ceuta": ("51", "Ceuta"),
    "Melilla": ("52", "Melilla"),
}

_PAISES_ORIGEN = ("Marruecos", "Ecuador", "Colombia", "Rumanía", "Bolivia", "Perú", "Argentina", "Venezuela",
                  "Senegal", "China", "Portugal", "Francia", "Reino Unido", "Ucrania", "República Dominicana",
                  "Paraguay", "Cuba", "Argelia", "Nigeria", "Alemania", "Italia", "Bulgaria", "Pakistán")

_PROFESIONES = (
    ("agricultor", "agricultora"), ("albañil", "albañil"), ("profesor de secundaria", "profesora de secundaria"),
    ("camarero", "camarera"), ("conductor de autobús", "conductora de autobús"), ("enfermero", "enfermera"),
    ("ganadero", "ganadera"), ("administrativo", "administrativa"), ("pintor de brocha gorda", "pintora"),
    ("carpintero", "carpintera"), ("mecánico de automóviles", "mecánica de automóviles"),
    ("electricista", "electricista"), ("peluquero", "peluquera"), ("pescador", "pescadora"),
    ("minero", "minera"), ("panadero", "panadera"), ("cocinero", "cocinera"), ("soldador", "soldadora"),
    ("dependiente", "dependienta"), ("ingeniero informático", "ingeniera informática"),
    ("veterinario", "veterinaria"), ("militar", "militar"), ("policía local", "policía local"),
    ("bombero", "bombera"), ("limpiador", "limpiadora"), ("jardinero", "jardinera"),
    ("farmacéutico", "farmacéutica"), ("abogado", "abogada"), ("auxiliar de enfermería", "auxiliar de enfermería"),
    ("trabajador de la construcción", "trabajadora de la construcción"), ("empleado de banca", "empleada de banca"),
    ("periodista", "periodista"), ("transportista", "transportista"), ("cartero", "cartera"),
    ("operario de una fábrica de cerámica", "operaria de una fábrica de conservas"),
    ("maestro de educación primaria", "maestra de educación infantil"), ("fontanero", "cuidadora de ancianos"),
    ("guardia civil", "guardia civil"), ("tornero", "teleoperadora"), ("pastor", "costurera"),
)

_ADVOCACIONES = ("Virgen de la Esperanza", "Virgen del Mar", "Nuestra Señora del Prado", "San Rafael",
                 "Santa Lucía", "Virgen de los Lirios", "San Juan de la Cruz", "Santa Bárbara",
                 "Virgen de la Luz", "Nuestra Señora de la Salud", "San Pedro", "Santa María del Rosell",
                 "Virgen de la Concha", "San Agustín", "Santa Teresa", "Virgen de la Vega")

_BARRIOS = ("Los Olivos", "La Chopera", "Las Fuentes", "El Ensanche", "Barrio del Carmen", "San Blas",
            "Las Acacias", "La Estación", "El Puerto", "Casco Antiguo", "Los Pinos", "La Alameda",
            "Valdezarza", "San Lorenzo", "La Florida", "El Castillo", "Santa Ana", "Las Delicias", "El Parque",
            "La Paloma", "Los Rosales", "Miraflores", "Vallehermoso", "Huerta del Rey")

_SERVICIOS_APOYO = ("Medicina Interna", "Medicina Intensiva", "Cirugía General", "Oncología Médica",
                    "Radiología Intervencionista", "Cirugía Vascular", "Cuidados Paliativos")
_SERVICIOS_APOYO_NINO = ("Cuidados Intensivos Pediátricos", "Cirugía Pediátrica", "Cardiología Pediátrica",
                         "Infectología Pediátrica")

# (singular noun, feminine?) — relatives as MEDDOCAN labels them: the noun, without the article.
_FAMILIARES_ADULTO = (("madre", True), ("padre", False), ("hermano", False), ("hermana", True),
                      ("hijo", False), ("hija", True), ("abuela materna", True), ("abuelo paterno", False),
                      ("tío materno", False), ("tía paterna", True), ("primo", False), ("sobrina", True))
_FAMILIARES_NINO = (("madre", True), ("padre", False), ("hermano", False), ("hermana", True),
                    ("abuela materna", True), ("abuelo paterno", False), ("tío paterno", False))
_FAMILIARES_PLURAL = ("padres", "hermanos", "hijos", "familiares")

_ANTECEDENTES = ("hipertensión arterial", "diabetes mellitus tipo 2", "dislipemia", "hipotiroidismo",
                 "fibrilación auricular paroxística", "enfermedad pulmonar obstructiva crónica",
                 "obesidad grado I", "hiperuricemia", "asma bronquial leve", "cardiopatía isquémica",
                 "síndrome de apnea obstructiva del sueño", "depresión en tratamiento",
                 "artrosis de rodillas", "gastritis crónica", "insuficiencia venosa crónica",
                 "hepatitis C tratada", "migraña sin aura", "osteoporosis")
_CIRUGIAS = ("apendicectomía", "colecistectomía laparoscópica", "hernia inguinal derecha",
             "amigdalectomía", "cataratas en ambos ojos", "prótesis total de rodilla izquierda",
             "túnel carpiano derecho", "hemorroides", "septoplastia", "meniscectomía artroscópica")
_FARMACOS_CRONICOS = ("enalapril 10 mg", "metformina 850 mg", "simvastatina 20 mg", "omeprazol 20 mg",
                      "levotiroxina 50 µg", "amlodipino 5 mg", "bisoprolol 2,5 mg", "lorazepam 1 mg",
                      "paracetamol a demanda", "alopurinol 100 mg", "tiotropio inhalado", "sertralina 50 mg",
                      "hidroclorotiazida 25 mg", "atorvastatina 40 mg", "acenocumarol según pauta")
_ENFERMEDADES_FAMILIARES = ("cáncer de colon", "cardiopatía isquémica", "diabetes mellitus",
                            "cáncer de mama", "enfermedad de Alzheimer", "ictus", "insuficiencia renal crónica",
                            "cáncer de pulmón", "epilepsia", "hipercolesterolemia familiar")


@dataclass(frozen=True)
class _Case:
    """One clinical picture: the sentences it contributes to each section of the report, and whom it fits.

    ``ages`` are years; a case whose ages start at 0 is a case of infants, whose age is written in months.
    """

    servicio: str
    motivos: tuple[str, ...]
    diagnostico: str
    actual: tuple[str, ...] = ()
    exploracion: tuple[str, ...] = ()
    pruebas: tuple[str, ...] = ()
    tratamiento: tuple[str, ...] = ()
    evolucion: tuple[str, ...] = ()
    sexes: str = "HM"
    ages: tuple[int, int] = (18, 92)


_CASES_ES = (
    _Case(
        servicio="Urología", ages=(45, 90), diagnostico="carcinoma urotelial de vejiga",
        motivos=("hematuria macroscópica indolora", "hematuria con coágulos"),
        actual=("Refiere {dias} días de hematuria total, sin fiebre ni clínica miccional asociada.",),
        exploracion=("La exploración abdominal y genital es normal.",),
        pruebas=("La citología urinaria fue positiva para células de alto grado.",
                 "En la ecografía se observa una lesión exofítica de {tam} cm en la cara lateral derecha de la vejiga.",
                 "La urografía por TC descarta lesiones en el tracto urinario superior."),
        tratamiento=("Se realiza resección transuretral de la lesión el {fecha}, sin incidencias.",
                     "Se pautan instilaciones endovesicales semanales con BCG durante seis semanas."),
        evolucion=("La anatomía patológica informa de carcinoma urotelial papilar de bajo grado sin infiltración de la lámina propia.",
                   "La cistoscopia de control del {fecha_control} no mostró signos de recidiva."),
    ),
    _Case(
        servicio="Urología", sexes="H", ages=(55, 90), diagnostico="hiperplasia benigna de próstata",
        motivos=("un síndrome miccional de varios meses de evolución", "retención aguda de orina"),
        actual=("Refiere nicturia de tres episodios, polaquiuria y disminución de la fuerza del chorro miccional.",),
        exploracion=("El tacto rectal muestra una próstata aumentada de tamaño, de consistencia elástica y sin nódulos.",),
        pruebas=("El PSA total era de {psa} ng/ml.",
                 "La ecografía mostró una próstata de {volumen} cc con un residuo postmiccional de {residuo} ml.",
                 "La flujometría mostró un flujo máximo de {flujo} ml/s."),
        tratamiento=("Se inició tratamiento con tamsulosina 0,4 mg y dutasterida 0,5 mg al día.",
                     "Ante la persistencia de los síntomas se realizó una enucleación prostática con láser el {fecha}."),
        evolucion=("En la revisión del {fecha_control} refería una clara mejoría del chorro miccional.",),
    ),
    _Case(
        servicio="Urología", ages=(25, 70), diagnostico="litiasis ureteral derecha obstructiva",
        motivos=("dolor lumbar derecho de características cólicas",),
        actual=("El dolor se irradia a la fosa iliaca y a los genitales, y se acompaña de náuseas y vómitos.",),
        exploracion=("La puñopercusión renal derecha es positiva.",),
        pruebas=("El sedimento urinario mostró microhematuria.",
                 "La TC abdominal sin contraste identificó una litiasis de {tam_mm} mm en el uréter proximal derecho con ureterohidronefrosis leve."),
        tratamiento=("Se colocó un catéter doble J de forma urgente.",
                     "Se realizó una ureteroscopia con fragmentación láser de la litiasis el {fecha}."),
        evolucion=("El análisis del cálculo mostró oxalato cálcico monohidrato.",),
    ),
    _Case(
        servicio="Cardiología", ages=(40, 90), diagnostico="infarto agudo de miocardio inferior",
        motivos=("dolor torácico opresivo irradiado al brazo izquierdo",),
        actual=("El dolor comenzó en reposo, se acompañaba de sudoración profusa y náuseas y duró unos {minutos} minutos.",),
        exploracion=("La auscultación cardiaca es rítmica y sin soplos, sin signos de insuficiencia cardiaca.",),
        pruebas=("El electrocardiograma mostró elevación del segmento ST en las derivaciones inferiores.",
                 "La troponina T ultrasensible alcanzó un pico de {troponina} ng/l.",
                 "El ecocardiograma objetivó una hipocinesia inferior con una fracción de eyección del {fevi} %."),
        tratamiento=("Se realizó coronariografía urgente, que mostró una oclusión de la coronaria derecha tratada con un stent farmacoactivo.",
                     "Se inició tratamiento con ácido acetilsalicílico 100 mg, ticagrelor 90 mg cada 12 horas y atorvastatina 80 mg."),
        evolucion=("Fue incluid{o} en el programa de rehabilitación cardiaca del {hospital}.",
                   "En la consulta del {fecha_control} se encontraba asintomátic{o} y en clase funcional I de la NYHA."),
    ),
    _Case(
        servicio="Cardiología", ages=(60, 95), diagnostico="insuficiencia cardiaca descompensada",
        motivos=("disnea de esfuerzo progresiva hasta hacerse de mínimos esfuerzos",),
        actual=("En las últimas semanas refiere ortopnea de dos almohadas y edemas maleolares vespertinos.",),
        exploracion=("Presenta ingurgitación yugular a 45 grados, crepitantes en ambas bases pulmonares y edemas con fóvea.",),
        pruebas=("El NT-proBNP era de {ntprobnp} pg/ml.",
                 "La radiografía de tórax mostró cardiomegalia y redistribución vascular.",
                 "El ecocardiograma transtorácico objetivó una fracción de eyección del ventrículo izquierdo del {fevi} %."),
        tratamiento=("Se pautó furosemida intravenosa con buena respuesta diurética.",
                     "Al alta se inició sacubitrilo-valsartán y bisoprolol en dosis crecientes."),
        evolucion=("En la consulta del {fecha_control} había recuperado su peso seco y se encontraba en clase funcional II.",),
    ),
    _Case(
        servicio="Cardiología", ages=(45, 90), diagnostico="fibrilación auricular de reciente comienzo",
        motivos=("palpitaciones y mareo",),
        actual=("Las palpitaciones comenzaron de forma brusca hace {horas} horas, sin dolor torácico ni síncope.",),
        exploracion=("El pulso es arrítmico a {fc} latidos por minuto.",),
        pruebas=("El electrocardiograma mostró una fibrilación auricular con respuesta ventricular rápida.",
                 "La función tiroidea fue normal.",
                 "El ecocardiograma mostró una aurícula izquierda levemente dilatada sin valvulopatía significativa."),
        tratamiento=("Se realizó cardioversión eléctrica sincronizada con recuperación del ritmo sinusal.",
                     "Se inició anticoagulación con apixabán 5 mg cada 12 horas."),
        evolucion=("El registro Holter del {fecha_control} no mostró recurrencias de la arritmia.",),
    ),
    _Case(
        servicio="Neumología", diagnostico="neumonía adquirida en la comunidad",
        motivos=("fiebre y tos con expectoración purulenta",),
        actual=("El cuadro se inició hace {dias} días con malestar general, escalofríos y tos seca.",),
        exploracion=("En la auscultación pulmonar se aprecian crepitantes en la base derecha.",),
        pruebas=("La radiografía de tórax mostró una consolidación en el lóbulo inferior derecho.",
                 "La antigenuria de neumococo fue positiva.",
                 "La gasometría arterial basal mostró una pO2 de {po2} mmHg."),
        tratamiento=("Se inició antibioterapia empírica con ceftriaxona 2 g al día y azitromicina 500 mg.",
                     "Precisó oxigenoterapia con gafas nasales a 2 litros por minuto durante los primeros días."),
        evolucion=("La radiografía de control realizada el {fecha_control} mostró la resolución completa del infiltrado.",),
    ),
    _Case(
        servicio="Neumología", diagnostico="tromboembolismo pulmonar bilateral",
        motivos=("disnea súbita y dolor torácico de tipo pleurítico",),
        actual=("Refiere haber realizado un viaje en autobús de más de diez horas la semana previa.",
                "Presenta además dolor y tumefacción en la pantorrilla izquierda desde hace {dias} días."),
        exploracion=("Está taquipneic{o} a {fr} respiraciones por minuto, con una saturación basal del {saturacion} %.",),
        pruebas=("El dímero D estaba elevado.",
                 "La angio-TC pulmonar confirmó defectos de repleción en ambas arterias pulmonares principales.",
                 "La ecografía doppler demostró una trombosis venosa profunda poplítea izquierda."),
        tratamiento=("Se anticoaguló con enoxaparina a dosis terapéuticas y posteriormente con un anticoagulante oral.",),
        evolucion=("El estudio de trombofilia realizado el {fecha_control} fue negativo.",),
    ),
    _Case(
        servicio="Neumología", ages=(50, 90), diagnostico="agudización grave de EPOC",
        motivos=("aumento de su disnea habitual y de la expectoración",),
        actual=("Refiere aumento del volumen y la purulencia del esputo en los últimos {dias} días.",),
        exploracion=("En la auscultación se aprecian sibilancias espiratorias difusas y espiración alargada.",),
        pruebas=("La gasometría arterial mostró una pCO2 de {pco2} mmHg con un pH de {ph}.",
                 "La radiografía de tórax mostró signos de hiperinsuflación sin condensaciones."),
        tratamiento=("Se trató con broncodilatadores nebulizados, corticoides sistémicos y antibioterapia.",
                     "Precisó ventilación mecánica no invasiva durante las primeras 48 horas."),
        evolucion=("Fue remitid{o} a la consulta monográfica de EPOC del {hospital} para ajustar el tratamiento inhalado.",),
    ),
    _Case(
        servicio="Aparato Digestivo", ages=(30, 90), diagnostico="coledocolitiasis",
        motivos=("dolor en hipocondrio derecho e ictericia",),
        actual=("Desde hace {dias} días presenta coluria, acolia y prurito generalizado.",),
        exploracion=("Presenta ictericia cutánea y conjuntival, con dolor a la palpación en el hipocondrio derecho.",),
        pruebas=("La bilirrubina total era de {bilirrubina} mg/dl, con predominio de la fracción directa.",
                 "La ecografía abdominal mostró colelitiasis con dilatación de la vía biliar.",
                 "La colangiorresonancia confirmó dos cálculos en el colédoco distal."),
        tratamiento=("Se realizó una CPRE con esfinterotomía y extracción de cálculos el {fecha}.",
                     "Posteriormente se realizó una colecistectomía laparoscópica sin complicaciones."),
        evolucion=("Tras la intervención toleró la dieta oral sin incidencias.",),
    ),
    _Case(
        servicio="Aparato Digestivo", ages=(30, 85), diagnostico="pancreatitis aguda de origen biliar",
        motivos=("dolor epigástrico intenso irradiado en cinturón",),
        actual=("El dolor comenzó tras una comida copiosa y se acompañaba de vómitos alimentarios.",),
        exploracion=("El abdomen es doloroso a la palpación en el epigastrio, sin signos de irritación peritoneal.",),
        pruebas=("La lipasa sérica se elevó hasta {lipasa} U/l.",
                 "La TC abdominal a las 72 horas mostró un páncreas edematoso sin necrosis."),
        tratamiento=("Se pautó fluidoterapia intensiva, analgesia y reintroducción precoz de la dieta oral.",),
        evolucion=("Se realizó una colecistectomía programada el {fecha_control}.",),
    ),
    _Case(
        servicio="Aparato Digestivo", ages=(45, 90), diagnostico="adenocarcinoma de colon sigmoide",
        motivos=("rectorragia y cambio del ritmo intestinal",),
        actual=("Refiere una pérdida de {kilos} kg de peso en los últimos meses, sin cambios en la dieta.",),
        exploracion=("El tacto rectal no mostró masas ni restos hemáticos.",),
        pruebas=("La colonoscopia identificó una lesión estenosante en el colon sigmoide, de la que se tomaron biopsias.",
                 "El antígeno carcinoembrionario era de {cea} ng/ml.",
                 "La TC toracoabdominal no mostró enfermedad a distancia."),
        tratamiento=("Se practicó una sigmoidectomía laparoscópica con anastomosis primaria el {fecha}.",
                     "Tras la cirugía recibió quimioterapia adyuvante con capecitabina y oxaliplatino."),
        evolucion=("La colonoscopia de control del {fecha_control} no mostró lesiones.",),
    ),
    _Case(
        servicio="Neurología", ages=(50, 95), diagnostico="ictus isquémico de la arteria cerebral media izquierda",
        motivos=("pérdida de fuerza en el hemicuerpo derecho y dificultad para hablar",),
        actual=("Los síntomas comenzaron de forma brusca, unas {horas} horas antes de su llegada.",),
        exploracion=("Presenta afasia motora y hemiparesia derecha, con una puntuación NIHSS de {nihss}.",),
        pruebas=("La TC craneal urgente no mostró signos de sangrado.",
                 "La angio-TC evidenció una oclusión de la arteria cerebral media izquierda."),
        tratamiento=("Se administró fibrinólisis intravenosa con alteplasa y se realizó trombectomía mecánica con recanalización completa.",),
        evolucion=("Al alta persistía una leve paresia facial, con una puntuación de 1 en la escala de Rankin modificada.",),
    ),
    _Case(
        servicio="Neurocirugía", ages=(30, 75), diagnostico="hemorragia subaracnoidea aneurismática",
        motivos=("cefalea intensa de inicio brusco",),
        actual=("Describe la cefalea como la peor de su vida, acompañada de vómitos y rigidez de nuca.",),
        exploracion=("Está somnolient{o} pero obedece órdenes, sin focalidad motora.",),
        pruebas=("La TC craneal mostró una hemorragia subaracnoidea en las cisternas basales.",
                 "La arteriografía cerebral identificó un aneurisma de {tam_mm} mm en la arteria comunicante anterior."),
        tratamiento=("Se realizó embolización endovascular del aneurisma con coils el {fecha}.",
                     "Recibió nimodipino oral durante 21 días para la prevención del vasoespasmo."),
        evolucion=("La arteriografía de control del {fecha_control} mostró la oclusión completa del aneurisma.",),
    ),
    _Case(
        servicio="Neurología", ages=(30, 80), diagnostico="glioblastoma frontal derecho",
        motivos=("una crisis convulsiva generalizada",),
        actual=("Los testigos describen una crisis tónico-clónica de unos dos minutos con un periodo postcrítico prolongado.",),
        exploracion=("En la exploración neurológica no se objetiva focalidad.",),
        pruebas=("La resonancia magnética cerebral mostró una lesión frontal derecha con captación de contraste en anillo.",
                 "El electroencefalograma registró actividad lenta frontal derecha."),
        tratamiento=("Se inició tratamiento con levetiracetam 500 mg cada 12 horas y dexametasona.",
                     "Se realizó una resección quirúrgica de la lesión el {fecha}."),
        evolucion=("Completó radioterapia con temozolomida concomitante.",),
    ),
    _Case(
        servicio="Oftalmología", diagnostico="desprendimiento de retina regmatógeno",
        motivos=("visión de moscas volantes y destellos luminosos", "pérdida de visión en el campo superior del ojo derecho"),
        actual=("Refiere la visión de una sombra en el campo visual superior desde hace {dias} días.",),
        exploracion=("La biomicroscopía del segmento anterior es normal.",),
        pruebas=("La agudeza visual era de {agudeza} en el ojo derecho y de la unidad en el izquierdo.",
                 "En el fondo de ojo se aprecia un desprendimiento de retina inferior con un desgarro en herradura."),
        tratamiento=("Se practicó una vitrectomía posterior vía pars plana con taponamiento con gas el {fecha}.",),
        evolucion=("A los tres meses la agudeza visual había mejorado hasta {agudeza}.",),
    ),
    _Case(
        servicio="Oftalmología", ages=(18, 60), diagnostico="uveítis anterior aguda",
        motivos=("dolor ocular, fotofobia y ojo rojo",),
        exploracion=("En la biomicroscopía se observa un Tyndall de dos cruces en cámara anterior y precipitados queráticos finos.",),
        pruebas=("La presión intraocular fue de {pio} mmHg en ambos ojos.", "El HLA-B27 fue positivo."),
        tratamiento=("Se pautaron colirios de dexametasona y ciclopentolato.",),
        evolucion=("Fue remitid{o} a Reumatología para descartar una espondiloartropatía asociada.",),
    ),
    _Case(
        servicio="Oftalmología", ages=(50, 90), diagnostico="oclusión de la vena central de la retina",
        motivos=("pérdida brusca e indolora de visión en el ojo izquierdo",),
        pruebas=("La tomografía de coherencia óptica mostró un edema macular quístico.",
                 "La angiografía con fluoresceína confirmó una oclusión de la vena central de la retina."),
        tratamiento=("Se administraron tres inyecciones intravítreas de antiangiogénico con periodicidad mensual.",),
        evolucion=("En la revisión del {fecha_control} el edema macular se había resuelto.",),
    ),
    _Case(
        servicio="Dermatología", ages=(25, 85), diagnostico="melanoma de extensión superficial",
        motivos=("una lesión pigmentada en la espalda que había cambiado de tamaño",),
        actual=("La lesión había crecido en los últimos {meses} meses y sangraba ocasionalmente con el roce.",),
        exploracion=("Se observa una lesión de {tam} cm, asimétrica, de bordes irregulares y varios tonos de marrón.",
                     "No se palpan adenopatías axilares ni inguinales."),
        pruebas=("La dermatoscopia mostró un retículo pigmentado atípico y un velo azul-blanquecino.",
                 "La biopsia escisional confirmó un melanoma con un índice de Breslow de {breslow} mm.",
                 "La biopsia selectiva del ganglio centinela fue negativa."),
        tratamiento=("Se realizó la ampliación de márgenes quirúrgicos el {fecha}.",),
        evolucion=("En las revisiones sucesivas no se han detectado nuevas lesiones sospechosas.",),
    ),
    _Case(
        servicio="Dermatología", diagnostico="psoriasis en placas",
        motivos=("placas eritematodescamativas pruriginosas en codos y rodillas",),
        exploracion=("Presenta placas eritematosas bien delimitadas con descamación nacarada que afectan al {superficie} % de la superficie corporal.",),
        pruebas=("La biopsia cutánea fue compatible con psoriasis.",
                 "El cribado de tuberculosis latente fue negativo."),
        tratamiento=("Se inició tratamiento con metotrexato 15 mg semanales y ácido fólico.",
                     "Ante la respuesta insuficiente se inició un fármaco biológico anti-IL-17."),
        evolucion=("En la revisión del {fecha_control} el índice PASI se había reducido más de un 90 %.",),
    ),
    _Case(
        servicio="Traumatología", ages=(65, 98), diagnostico="fractura subcapital de fémur izquierdo",
        motivos=("dolor e impotencia funcional en la cadera izquierda tras una caída casual",),
        actual=("La caída se produjo en su domicilio, sin pérdida de conocimiento.",),
        exploracion=("Presenta acortamiento y rotación externa del miembro inferior izquierdo.",),
        pruebas=("La radiografía mostró una fractura subcapital de fémur izquierdo desplazada.",),
        tratamiento=("Se implantó una artroplastia parcial de cadera el {fecha}.",),
        evolucion=("Inició rehabilitación precoz y deambulaba con andador en el momento del alta.",),
    ),
    _Case(
        servicio="Traumatología", ages=(25, 65), diagnostico="hernia discal L5-S1",
        motivos=("dolor lumbar irradiado a la pierna derecha",),
        actual=("El dolor empeora con la sedestación y no cede con los analgésicos habituales.",),
        exploracion=("La maniobra de Lasègue es positiva a 40 grados en la pierna derecha, con hipoestesia en el borde lateral del pie.",),
        pruebas=("La resonancia magnética lumbar evidenció una hernia discal L5-S1 con compresión radicular.",),
        tratamiento=("Se realizó una microdiscectomía el {fecha}, con desaparición del dolor radicular.",),
        evolucion=("Se reincorporó a su trabajo a los tres meses de la intervención.",),
    ),
    _Case(
        servicio="Traumatología", ages=(18, 45), diagnostico="rotura del ligamento cruzado anterior",
        motivos=("tumefacción de la rodilla tras un traumatismo deportivo",),
        exploracion=("La prueba de Lachman y el cajón anterior son positivos en la rodilla derecha.",),
        pruebas=("La resonancia de rodilla confirmó una rotura completa del ligamento cruzado anterior.",),
        tratamiento=("Se llevó a cabo una ligamentoplastia con injerto autólogo de isquiotibiales el {fecha}.",),
        evolucion=("A los seis meses había retomado la actividad deportiva.",),
    ),
    _Case(
        servicio="Nefrología", ages=(30, 80), diagnostico="síndrome nefrótico por glomerulonefritis membranosa",
        motivos=("edemas en miembros inferiores y orina espumosa",),
        actual=("Refiere un aumento de {kilos} kg de peso en el último mes a expensas de edemas.",),
        exploracion=("Presenta edemas con fóvea hasta las rodillas.",),
        pruebas=("La proteinuria en orina de 24 horas fue de {proteinuria} g.",
                 "Los anticuerpos anti-PLA2R fueron positivos.",
                 "La biopsia renal mostró una glomerulonefritis membranosa."),
        tratamiento=("Se inició tratamiento con rituximab y bloqueo del sistema renina-angiotensina.",),
        evolucion=("En la revisión del {fecha_control} se había alcanzado la remisión parcial de la proteinuria.",),
    ),
    _Case(
        servicio="Nefrología", ages=(40, 90), diagnostico="enfermedad renal crónica estadio 5",
        motivos=("astenia, náuseas y disminución de la diuresis",
                 "un deterioro de la función renal detectado en una analítica de rutina"),
        pruebas=("La creatinina sérica era de {creatinina} mg/dl, con un filtrado glomerular estimado de {filtrado} ml/min.",
                 "La ecografía renal mostró riñones de tamaño reducido con mala diferenciación corticomedular."),
        tratamiento=("Se colocó un catéter tunelizado y se inició hemodiálisis el {fecha}.",
                     "Tras un periodo de entrenamiento, se inició diálisis peritoneal continua ambulatoria."),
        evolucion=("Fue incluid{o} en la lista de espera de trasplante renal del {hospital2}.",),
    ),
    _Case(
        servicio="Hematología", ages=(25, 85), diagnostico="linfoma B difuso de célula grande",
        motivos=("adenopatías cervicales indoloras", "astenia, sudoración nocturna y pérdida de peso"),
        actual=("Refiere fiebre vespertina de hasta 38 grados desde hace {semanas} semanas.",),
        exploracion=("Se palpan adenopatías laterocervicales de hasta {tam} cm, de consistencia gomosa.",),
        pruebas=("La biopsia de una adenopatía cervical fue diagnóstica de linfoma B difuso de célula grande.",
                 "La PET-TC mostró afectación ganglionar a ambos lados del diafragma.",
                 "La LDH estaba elevada."),
        tratamiento=("Recibió seis ciclos de inmunoquimioterapia según el esquema R-CHOP.",),
        evolucion=("La PET-TC de reevaluación realizada el {fecha_control} mostró una respuesta metabólica completa.",),
    ),
    _Case(
        servicio="Hematología", ages=(50, 90), diagnostico="mieloma múltiple",
        motivos=("dolor lumbar persistente y astenia",),
        pruebas=("El proteinograma mostró un componente monoclonal IgG kappa.",
                 "El aspirado de médula ósea confirmó la infiltración por células plasmáticas.",
                 "La serie ósea mostró lesiones líticas en el cráneo y en las vértebras lumbares."),
        tratamiento=("Se inició tratamiento con bortezomib, lenalidomida y dexametasona.",
                     "Posteriormente recibió un autotrasplante de progenitores hematopoyéticos."),
        evolucion=("En la revisión del {fecha_control} mantenía una respuesta parcial muy buena.",),
    ),
    _Case(
        servicio="Hematología", ages=(18, 80), diagnostico="leucemia mieloide aguda",
        motivos=("hematomas espontáneos y sangrado gingival",),
        exploracion=("Presenta petequias en extremidades inferiores y palidez cutánea.",),
        pruebas=("El hemograma mostró {leucocitos} leucocitos/µl con un {blastos} % de blastos y {plaquetas} plaquetas/µl.",
                 "El estudio de médula ósea confirmó una leucemia mieloide aguda."),
        tratamiento=("Se inició quimioterapia de inducción y se solicitó estudio de donante para trasplante alogénico.",),
        evolucion=("El aspirado medular tras la inducción mostró remisión completa.",),
    ),
    _Case(
        servicio="Pediatría", ages=(1, 6), diagnostico="enfermedad de Kawasaki",
        motivos=("fiebre elevada de cinco días de evolución", "un exantema generalizado y conjuntivitis"),
        actual=("Había recibido tratamiento con ibuprofeno sin mejoría.",),
        exploracion=("Presenta labios fisurados, lengua aframbuesada y edema indurado en manos y pies.",),
        pruebas=("En la analítica destacan {leucocitos} leucocitos/µl, una PCR de {pcr} mg/l y trombocitosis.",
                 "La ecocardiografía mostró una dilatación leve de las arterias coronarias."),
        tratamiento=("Se administró gammaglobulina intravenosa y ácido acetilsalicílico a dosis antiinflamatorias.",),
        evolucion=("En el control ecocardiográfico a las ocho semanas las arterias coronarias eran normales.",),
    ),
    _Case(
        servicio="Cirugía Pediátrica", ages=(5, 14), diagnostico="apendicitis aguda",
        motivos=("vómitos y dolor abdominal periumbilical",),
        actual=("El dolor se desplazó posteriormente a la fosa iliaca derecha.",),
        exploracion=("El abdomen es doloroso en la fosa iliaca derecha, con signo de Blumberg positivo.",),
        pruebas=("La ecografía abdominal mostró un apéndice engrosado con líquido libre periapendicular.",
                 "En la analítica destacan {leucocitos} leucocitos/µl con neutrofilia."),
        tratamiento=("Se realizó una apendicectomía laparoscópica el {fecha}.",),
        evolucion=("El postoperatorio transcurrió sin incidencias.",),
    ),
    _Case(
        servicio="Pediatría", ages=(0, 0), diagnostico="bronquiolitis aguda por virus respiratorio sincitial",
        motivos=("dificultad respiratoria y rechazo de las tomas",),
        actual=("Presentaba rinorrea y tos desde hacía {dias} días.",),
        exploracion=("Presenta tiraje subcostal y sibilancias espiratorias bilaterales.",),
        pruebas=("El test rápido para virus respiratorio sincitial en aspirado nasofaríngeo fue positivo.",),
        tratamiento=("Precisó oxigenoterapia de alto flujo durante tres días y alimentación por sonda nasogástrica.",),
        evolucion=("Fue dad{o} de alta con buena tolerancia oral y sin necesidad de oxígeno.",),
    ),
    _Case(
        servicio="Ginecología", sexes="M", ages=(20, 45), diagnostico="endometriosis ovárica",
        motivos=("dolor pélvico crónico y dismenorrea",),
        actual=("La dismenorrea se ha intensificado en los últimos {meses} meses y le impide acudir al trabajo.",),
        exploracion=("En la exploración ginecológica se palpa una masa anexial izquierda móvil y dolorosa.",),
        pruebas=("La ecografía transvaginal mostró un quiste anexial izquierdo de {tam} cm de contenido ecogénico.",
                 "El marcador CA-125 era de {ca125} U/ml.",
                 "La resonancia pélvica sugería un endometrioma ovárico."),
        tratamiento=("Se realizó una quistectomía laparoscópica el {fecha}, preservando el parénquima ovárico.",
                     "Se inició tratamiento hormonal con un progestágeno oral."),
        evolucion=("El estudio histológico confirmó el diagnóstico de endometrioma.",),
    ),
    _Case(
        servicio="Ginecología", sexes="M", ages=(35, 55), diagnostico="mioma uterino submucoso",
        motivos=("sangrado menstrual abundante y anemia",),
        pruebas=("La hemoglobina era de {hemoglobina} g/dl con ferropenia.",
                 "La ecografía transvaginal mostró un mioma submucoso de {tam} cm."),
        tratamiento=("Se realizó una miomectomía histeroscópica el {fecha}.",),
        evolucion=("En la revisión del {fecha_control} refería reglas de cantidad normal.",),
    ),
    _Case(
        servicio="Enfermedades Infecciosas", ages=(20, 75), diagnostico="brucelosis",
        motivos=("fiebre ondulante y artralgias de tres semanas de evolución",),
        actual=("Refiere contacto habitual con ganado ovino y consumo de queso fresco sin control sanitario.",),
        exploracion=("Se palpa una hepatoesplenomegalia moderada.",),
        pruebas=("La serología frente a Brucella fue positiva a título elevado.",
                 "Los hemocultivos aislaron Brucella melitensis."),
        tratamiento=("Se trató con doxiciclina y estreptomicina con buena respuesta clínica.",),
        evolucion=("Las serologías de control del {fecha_control} mostraron un descenso progresivo de los títulos.",),
    ),
    _Case(
        servicio="Enfermedades Infecciosas", ages=(30, 90), diagnostico="endocarditis infecciosa sobre válvula nativa",
        motivos=("fiebre y un soplo cardiaco de nueva aparición",),
        actual=("Hace {semanas} semanas se le realizó una extracción dentaria sin profilaxis antibiótica.",),
        exploracion=("Se ausculta un soplo holosistólico en el foco mitral y presenta lesiones de Janeway en las palmas.",),
        pruebas=("Los hemocultivos fueron positivos para Staphylococcus aureus sensible a meticilina.",
                 "El ecocardiograma transesofágico mostró una vegetación de {tam_mm} mm en la válvula mitral."),
        tratamiento=("Se inició tratamiento con cloxacilina intravenosa durante seis semanas.",),
        evolucion=("Los hemocultivos de control fueron negativos a partir del tercer día de tratamiento.",),
    ),
    _Case(
        servicio="Endocrinología", ages=(20, 70), diagnostico="enfermedad de Graves-Basedow",
        motivos=("palpitaciones, temblor y pérdida de peso",),
        actual=("En los últimos {meses} meses ha perdido {kilos} kg a pesar de mantener el apetito.",),
        exploracion=("Se palpa un bocio difuso grado II, sin nódulos, y presenta un temblor fino distal.",),
        pruebas=("La TSH estaba suprimida, con una T4 libre de {t4} ng/dl.",
                 "Los anticuerpos antirreceptor de TSH fueron positivos."),
        tratamiento=("Se inició tratamiento con metimazol y propranolol.",),
        evolucion=("En la revisión del {fecha_control} se encontraba eutiroide y asintomátic{o}.",),
    ),
    _Case(
        servicio="Endocrinología", ages=(25, 75), diagnostico="feocromocitoma",
        motivos=("crisis de cefalea, sudoración y palpitaciones",),
        exploracion=("La tensión arterial en consulta era de {ta_sistolica}/{ta_diastolica} mmHg.",),
        pruebas=("Las metanefrinas en orina de 24 horas estaban muy elevadas.",
                 "La TC abdominal mostró una masa suprarrenal derecha de {tam} cm."),
        tratamiento=("Tras el bloqueo alfa con doxazosina, se realizó una adrenalectomía laparoscópica el {fecha}.",),
        evolucion=("Las metanefrinas de control fueron normales y no precisó tratamiento antihipertensivo.",),
    ),
    _Case(
        servicio="Endocrinología", ages=(16, 40), diagnostico="diabetes mellitus tipo 1 de reciente diagnóstico",
        motivos=("poliuria, polidipsia y pérdida de peso",),
        pruebas=("La glucemia al ingreso era de {glucemia} mg/dl, con una hemoglobina glucosilada del {hba1c} %.",
                 "La gasometría venosa mostró una cetoacidosis leve."),
        tratamiento=("Se inició insulinoterapia en pauta bolo-basal y educación diabetológica.",),
        evolucion=("En la revisión del {fecha_control} la hemoglobina glucosilada había descendido al 7 %.",),
    ),
)

_ES_OPENINGS_ADULT = (
    "{Sexo} de {edad} de edad, {profesion}, sin alergias medicamentosas conocidas, que consulta por {motivo}.",
    "Se trata de {un} {sexo} de {edad}, natural de {lugar_origen}, que acude al Servicio de Urgencias del {hospital} por {motivo}.",
    "Paciente de {edad}, {profesion}, remitid{o} desde {el_centro_salud} por {motivo}.",
    "{Paciente}, {sexo} de {edad}, ingresa el {fecha_ingreso} en el Servicio de {servicio} por {motivo}.",
    "Presentamos el caso de {un} {sexo} de {edad} que es derivad{o} a la consulta de {servicio} del {hospital} por {motivo}.",
    "{Sexo} de {edad} que trabaja como {profesion} y acude a su médico de atención primaria por {motivo}.",
    "{Paciente} es {un} {sexo} de {edad} de edad, {profesion} de profesión, que consulta el {fecha_ingreso} por {motivo}.",
)
_ES_OPENINGS_CHILD = (
    "{Sexo} de {edad} que acude a Urgencias de Pediatría del {hospital} acompañad{o} de {su_progenitor} por {motivo}.",
    "Presentamos el caso de {un} {sexo} de {edad}, sin antecedentes de interés, remitid{o} por su pediatra del {centro_salud} por {motivo}.",
    "{Paciente}, {sexo} de {edad}, es traíd{o} por {su_familiar_plural} al Servicio de Urgencias el {fecha_ingreso} por {motivo}.",
)
_ES_ANTECEDENTES_ADULT = (
    "Entre sus antecedentes personales destacan {antecedente}, {antecedente} y {antecedente}.",
    "Como antecedentes refiere {antecedente}, en seguimiento desde {fecha_previa}.",
    "Intervenid{o} de {cirugia} en {fecha_previa}.",
    "{habitos}",
    "En tratamiento habitual con {farmaco_cronico}, {farmaco_cronico} y {farmaco_cronico}.",
    "Diagnosticad{o} de {antecedente} {edad_previa}, con buen control en su centro de salud.",
    "Ingresó en el {hospital2} en {fecha_previa} por una neumonía que se resolvió sin secuelas.",
    "Vive con {su_familiar} en {ciudad} y es independiente para las actividades básicas de la vida diaria.",
    "Natural de {pais_origen}, reside en {espana} desde {fecha_previa}.",
    "{antecedentes_familiares}",
)
# Alternatives that exclude one another: a note uses one of each group.
_ES_HABITOS = (
    "Fumador{a} de {cigarrillos} cigarrillos al día desde los {edad_joven}.",
    "Exfumador{a} desde {fecha_previa}; no refiere consumo de alcohol.",
    "No refiere hábitos tóxicos.",
    "Bebedor{a} de unos {unidades} gramos de alcohol al día; no fuma.",
)
_ES_ANTECEDENTES_FAMILIARES = (
    "Antecedentes familiares: {familiar} con {enfermedad_familiar} y {familiar} con {enfermedad_familiar}.",
    "Refiere que {su_familiar} falleció por {enfermedad_familiar}.",
    "No hay antecedentes familiares de interés.",
    "Entre sus antecedentes familiares destaca que {su_familiar} padece {enfermedad_familiar}.",
)
_ES_ANTECEDENTES_CHILD = (
    "Embarazo controlado y parto eutócico a término, con un peso al nacimiento de {peso_nacer} g.",
    "Vacunación correcta según el calendario vigente.",
    "Sin alergias medicamentosas conocidas.",
    "Como antecedentes familiares, {su_familiar} padece {enfermedad_familiar}.",
    "Refiere que {un_familiar} presentó un cuadro similar en {fecha_previa}.",
    "Vive con {su_familiar_plural} en {ciudad}.",
)
_ES_ACTUAL = (
    "El {fecha_ingreso} acude a Urgencias por empeoramiento de los síntomas.",
    "No refiere contacto con personas enfermas en su entorno.",
    "Había sido valorad{o} días antes en {el_centro_salud}, donde se pautó tratamiento sintomático sin mejoría.",
    "{Su_familiar} refiere que en los días previos se encontraba más decaíd{o} de lo habitual.",
    "Niega traumatismos previos o viajes recientes al extranjero.",
)
_ES_EXPLORACION = (
    "A su llegada presenta una tensión arterial de {ta_sistolica}/{ta_diastolica} mmHg, frecuencia cardiaca de {fc} lpm, temperatura de {temperatura} ºC y saturación de oxígeno del {saturacion} %.",
    "Buen estado general, consciente y orientad{o}, normocoloread{o} y normohidratad{o}.",
    "La auscultación cardiopulmonar es rítmica, sin soplos, con murmullo vesicular conservado.",
    "Abdomen blando y depresible, sin masas ni megalias palpables.",
    "Sin edemas en miembros inferiores y con pulsos distales presentes y simétricos.",
)
_ES_EXPLORACION_NINO = (
    "A su llegada presenta una frecuencia cardiaca de {fc_nino} lpm, temperatura de {temperatura} ºC y saturación de oxígeno del {saturacion} %.",
    "Aceptable estado general, bien hidratad{o} y perfundid{o}.",
    "La otoscopia y la orofaringe no muestran alteraciones.",
    "El peso y la talla se encuentran en percentiles adecuados para su edad.",
)
_ES_PRUEBAS_NINO = (
    "La bioquímica básica fue normal.",
    "El sedimento de orina fue normal.",
    "La radiografía de tórax no mostró alteraciones significativas.",
)
_ES_PRUEBAS = (
    "En la analítica de ingreso destacan una hemoglobina de {hemoglobina} g/dl, {leucocitos} leucocitos/µl y una PCR de {pcr} mg/l.",
    "La bioquímica mostró función renal y perfil hepático dentro de la normalidad.",
    "El estudio de coagulación fue normal.",
    "La radiografía de tórax no mostró alteraciones significativas.",
    "Las serologías de virus hepatotropos y VIH fueron negativas.",
)
_ES_TRATAMIENTO_HEAD = (
    "Con el diagnóstico de {diagnostico}, se decide su ingreso a cargo del Servicio de {servicio}.",
    "Se establece el diagnóstico de {diagnostico}.",
    "Ante la sospecha de {diagnostico}, {el_dr_medico} decide su ingreso para estudio.",
)
_ES_TRATAMIENTO = (
    "El caso se comentó en el comité multidisciplinar del {hospital} el {fecha}.",
    "Se traslada al {hospital2} para valoración por el Servicio de {servicio_apoyo}, donde {lo} atiende {el_dr_otro}.",
    "Se informa a {su_familiar} de la situación clínica y se obtiene el consentimiento informado.",
    "Se remitieron muestras {a_laboratorio} para completar el estudio.",
)
_ES_EVOLUCION_HEAD = (
    "La evolución fue favorable y {el} paciente fue dad{o} de alta el {fecha}.",
    "Tras {dias} días de ingreso, {paciente} fue dad{o} de alta con tratamiento domiciliario.",
    "Durante el ingreso no presentó complicaciones.",
)
_ES_EVOLUCION = (
    "En la revisión realizada el {fecha_control}, {paciente} se encuentra asintomátic{o}.",
    "Actualmente sigue controles periódicos en las consultas externas del {hospital} y en {el_centro_salud}.",
    "Se remite {al_dr_medico} para seguimiento en consultas.",
    "El caso se notificó {a_autoridad}.",
    "Tras {meses} meses de seguimiento no ha presentado nuevos episodios.",
    "{Paciente} se encuentra bien y sin secuelas.",
    "Para cualquier consulta, la unidad puede contactarse en el teléfono {telefono}.",
)
_ES_SECTION_TITLES = (
    ("Motivo de ingreso", "Motivo de consulta"),
    ("Antecedentes personales", "Antecedentes"),
    ("Enfermedad actual", "Historia actual"),
    ("Exploración física", "Exploración"),
    ("Pruebas complementarias", "Exploraciones complementarias"),
    ("Diagnóstico y tratamiento", "Juicio clínico y tratamiento"),
    ("Evolución", "Evolución y comentarios"),
)


class _SpanishNote(_Composer):
    """One Spanish case report: a patient, the clinicians and places around them, and a clinical case."""

    DECIMAL_MARK = ","
    NUMBERS = {
        "tam": (1.0, 6.0, 1), "tam_mm": (4, 18, 0), "psa": (0.5, 25.0, 2), "troponina": (40, 4000, 0),
        "fevi": (25, 65, 0), "po2": (48, 75, 0), "fr": (22, 34, 0), "bilirrubina": (2.0, 14.0, 1),
        "lipasa": (400, 5000, 0), "nihss": (4, 18, 0), "agudeza": (0.05, 0.8, 2), "pio": (10, 24, 0),
        "breslow": (0.3, 3.5, 1), "creatinina": (1.4, 9.0, 1), "filtrado": (6, 45, 0), "proteinuria": (3.5, 12.0, 1),
        "leucocitos": (3000, 42000, 0), "blastos": (20, 90, 0), "pcr": (5, 280, 0), "ca125": (20, 180, 0),
        "t4": (2.1, 6.5, 1), "glucemia": (180, 560, 0), "hba1c": (7.0, 13.5, 1), "hemoglobina": (8.0, 16.5, 1),
        "ta_sistolica": (95, 185, 0), "ta_diastolica": (55, 105, 0), "fc": (55, 130, 0),
        "temperatura": (36.0, 39.5, 1), "saturacion": (86, 99, 0), "dias": (2, 15, 0), "semanas": (2, 8, 0),
        "meses": (2, 18, 0), "horas": (2, 9, 0), "minutos": (20, 90, 0), "kilos": (3, 12, 0),
        "cigarrillos": (5, 40, 0), "peso_nacer": (2600, 4100, 0), "unidades": (30, 120, 0),
        "volumen": (35, 120, 0), "residuo": (40, 300, 0), "flujo": (4, 12, 0), "ntprobnp": (1200, 15000, 0),
        "pco2": (50, 85, 0), "ph": (7.21, 7.34, 2), "cea": (2.0, 40.0, 1), "superficie": (5, 40, 0),
        "plaquetas": (8000, 60000, 0), "fc_nino": (90, 160, 0),
    }

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
        profession = rng.choice(_PROFESIONES)[1 if self.female else 0]
        if self.age >= 67 and rng.random() < 0.6:
            profession += " jubilada" if self.female else " jubilado"
        self.profession = profession
        relatives = _FAMILIARES_NINO if self.child else _FAMILIARES_ADULTO
        if not self.child and self.age > 25:
            relatives = relatives + ((("marido", False),) if self.female else (("esposa", True),))
        self.next_relative = _Draw(list(relatives), rng)
        self.next_antecedente = _Draw(list(_ANTECEDENTES), rng)
        self.next_farmaco = _Draw(list(_FARMACOS_CRONICOS), rng)
        self.next_enfermedad_familiar = _Draw(list(_ENFERMEDADES_FAMILIARES), rng)
        self.next_motivo = _Draw(list(self.case.motivos), rng)
        self.diagnostico = self.case.diagnostico

    # -- people and places -------------------------------------------------------------------------

    def _place(self) -> tuple[str, str, str]:
        """A province, its postal prefix and its main city; Madrid is over-represented, as in real reports."""
        province = "Madrid" if self.rng.random() < 0.2 else self.faker.city()
        if province == "Ciudad":  # Faker's es_ES list splits "Ciudad Real"
            province = "Ciudad Real"
        prefix, city = _PROVINCIAS.get(province, (self.faker.postcode()[:2], province))
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
            return f"Hospital Universitario {rng.choice(_ADVOCACIONES)}"
        if kind == 5:
            return f"Hospital {rng.choice(_ADVOCACIONES)} de {city}"
        if kind == 6:
            return f"Hospital Universitario Doctor {self.faker.last_name()}"
        if kind == 7:
            return f"Hospital General de {city}"
        return f"Complejo Asistencial Universitario de {city}"

    def _centro_salud(self) -> str:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            return f"Centro de Salud {rng.choice(_BARRIOS)}"
        if kind == 1:
            return f"Centro de Salud de {self.city}"
        if kind == 2:
            return f"Centro de Salud {self.city}-{rng.choice(_BARRIOS)}"
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
        first, surname, second = _ascii(parts[0]), _ascii(parts[-2]), _ascii(parts[-1])
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
            return f"{day.day} de {_MESES[day.month - 1]} del {day.year}"
        return f"{day.day} de {_MESES[day.month - 1]} de {day.year}"

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
            month = _MESES[day.month - 1]
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
        self.w.phi("padres" if self.child else self.rng.choice(_FAMILIARES_PLURAL), "FAMILIARES_SUJETO_ASISTENCIA")

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
        self.w.phi(self.rng.choice(_PAISES_ORIGEN), "PAIS")

    def _s_espana(self) -> None:
        self.w.phi("España", "PAIS")

    def _s_lugar_origen(self) -> None:
        if self.rng.random() < 0.5:
            self._s_pais_origen()
        else:
            self.w.phi(self._place()[2], "TERRITORIO")

    def _institution(self, choices: Sequence[tuple[str, str]]) -> None:
        """Write ``article + name`` for one (article, pattern); a pattern may use {city}, {province}, {surname}."""
        article, pattern = self.rng.choice(choices)
        self.w.text(article)
        name = pattern.format(city=self.hospital_city, province=self.province, surname=self.faker.last_name())
        self.w.phi(name, "INSTITUCION")

    def _s_a_laboratorio(self) -> None:
        self._institution((
            ("al ", "Instituto de Investigación Sanitaria de {city}"),
            ("a la ", "Facultad de Medicina de {city}"),
            ("al laboratorio de referencia de la ", "Universidad de {city}"),
            ("a la ", "Fundación {surname} de Investigación Biomédica"),
            ("al ", "Centro de Transfusión de {province}"),
        ))

    def _s_a_autoridad(self) -> None:
        self._institution((
            ("al ", "Sistema Español de Farmacovigilancia"),
            ("a la ", "Delegación Territorial de Sanidad de {province}"),
            ("al ", "Registro de Tumores de {province}"),
            ("a la ", "Red de Vigilancia Epidemiológica de {province}"),
            ("al ", "Instituto de Medicina Legal de {province}"),
        ))

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
            text = f"{_MESES[self.cursor.month - 1]} de {self.cursor.year}"
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
        self.w.text(self.rng.choice(_SERVICIOS_APOYO_NINO if self.child else _SERVICIOS_APOYO))

    def _s_diagnostico(self) -> None:
        self.w.text(self.diagnostico)

    def _s_antecedente(self) -> None:
        self.w.text(self.next_antecedente())

    def _s_cirugia(self) -> None:
        self.w.text(self.rng.choice(_CIRUGIAS))

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
            for position, (paragraph, titles) in enumerate(zip(planned, _ES_SECTION_TITLES)):
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


_CASES_ES_CHILD = tuple(case for case in _CASES_ES if case.ages[1] < 16)
_CASES_ES_ADULT = tuple(case for case in _CASES_ES if case.ages[0] >= 16)
_ES_OPENINGS_ADULT_T = _SpanishNote.compile_all(_ES_OPENINGS_ADULT)
_ES_OPENINGS_CHILD_T = _SpanishNote.compile_all(_ES_OPENINGS_CHILD)
_ES_ANTECEDENTES_ADULT_T = _SpanishNote.compile_all(_ES_ANTECEDENTES_ADULT)
_ES_ANTECEDENTES_CHILD_T = _SpanishNote.compile_all(_ES_ANTECEDENTES_CHILD)
_ES_ACTUAL_T = _SpanishNote.compile_all(_ES_ACTUAL)
_ES_EXPLORACION_T = _SpanishNote.compile_all(_ES_EXPLORACION)
_ES_PRUEBAS_T = _SpanishNote.compile_all(_ES_PRUEBAS)
_ES_EXPLORACION_NINO_T = _SpanishNote.compile_all(_ES_EXPLORACION_NINO)
_ES_PRUEBAS_NINO_T = _SpanishNote.compile_all(_ES_PRUEBAS_NINO)
_ES_HABITOS_T = _SpanishNote.compile_all(_ES_HABITOS)
_ES_ANTECEDENTES_FAMILIARES_T = _SpanishNote.compile_all(_ES_ANTECEDENTES_FAMILIARES)
_ES_TRATAMIENTO_HEAD_T = _SpanishNote.compile_all(_ES_TRATAMIENTO_HEAD)
_ES_TRATAMIENTO_T = _SpanishNote.compile_all(_ES_TRATAMIENTO)
_ES_EVOLUCION_HEAD_T = _SpanishNote.compile_all(_ES_EVOLUCION_HEAD)
_ES_EVOLUCION_T = _SpanishNote.compile_all(_ES_EVOLUCION)
_COMPILED_ES = {
    id(case): {section: _SpanishNote.compile_all(getattr(case, section))
               for section in ("actual", "exploracion", "pruebas", "tratamiento", "evolucion")}
    for case in _CASES_ES
}


# --------------------------------------------------------------------------------------------------
# English: i2b2-2014-style discharge summaries
# --------------------------------------------------------------------------------------------------

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_COUNTRIES = ("Mexico", "India", "China", "the Philippines", "Vietnam", "Ireland", "Poland", "Brazil",
              "Haiti", "Nigeria", "Italy", "Guatemala", "Korea", "Canada")
_PROFESSIONS_EN = ("retired teacher", "truck driver", "nurse", "accountant", "construction worker",
                   "software engineer", "electrician", "retired firefighter", "cashier", "mechanic",
                   "farmer", "lawyer", "bus driver", "chef", "postal worker", "librarian", "plumber",
                   "security guard", "real estate agent", "retired machinist")
_PMH_EN = ("hypertension", "type 2 diabetes", "hyperlipidemia", "COPD", "atrial fibrillation",
           "chronic kidney disease", "hypothyroidism", "osteoarthritis", "depression", "gout", "asthma")
_HOSPITAL_SUFFIXES = ("Medical Center", "General Hospital", "Memorial Hospital", "Community Hospital",
                      "Regional Medical Center", "University Hospital")


@dataclass(frozen=True)
class _CaseEn:
    reason: tuple[str, ...]
    history: tuple[str, ...]
    course: tuple[str, ...]


_CASES_EN = (
    _CaseEn(
        reason=("chest pain radiating to the left arm", "substernal chest pressure with diaphoresis"),
        history=("The pain started at rest and lasted about {minutes} minutes.",
                 "An ECG showed ST depressions in the lateral leads and the troponin peaked at {troponin} ng/mL."),
        course=("{He} underwent cardiac catheterization on {date}, which showed a 90% stenosis of the LAD treated with a drug-eluting stent.",
                "{He} was started on aspirin, ticagrelor, metoprolol and high-intensity atorvastatin."),
    ),
    _CaseEn(
        reason=("fever and productive cough", "shortness of breath and pleuritic chest pain"),
        history=("{He} reports {days} days of cough with green sputum and subjective fevers.",
                 "Chest X-ray showed a right lower lobe consolidation."),
        course=("{He} was treated with ceftriaxone and azithromycin with steady improvement.",
                "Oxygen was weaned to room air by {date}."),
    ),
    _CaseEn(
        reason=("nausea, vomiting and abdominal pain", "polyuria, polydipsia and weight loss"),
        history=("Glucose on arrival was {glucose} mg/dL with an anion gap of {gap}.",
                 "{He} had run out of insulin about {days} days before admission."),
        course=("{He} was admitted to the ICU for an insulin drip, which was transitioned to subcutaneous insulin on {date}.",
                "Diabetes education was provided and {he} demonstrated correct insulin technique."),
    ),
    _CaseEn(
        reason=("a fall at home with right hip pain", "inability to bear weight after a fall"),
        history=("{He} tripped over a rug and was unable to get up.",
                 "X-rays demonstrated a displaced right femoral neck fracture."),
        course=("Orthopedics performed a right hip hemiarthroplasty on {date} without complications.",
                "{He} worked with physical therapy and was walking with a walker at discharge."),
    ),
    _CaseEn(
        reason=("black tarry stools and lightheadedness", "coffee-ground emesis"),
        history=("Hemoglobin on arrival was {hemoglobin} g/dL.", "{He} takes ibuprofen daily for back pain."),
        course=("EGD on {date} showed a clean-based duodenal ulcer.",
                "{He} received two units of packed red blood cells and was started on pantoprazole."),
    ),
    _CaseEn(
        reason=("worsening leg swelling and dyspnea on exertion", "orthopnea and weight gain"),
        history=("{His} weight is up {pounds} pounds over two weeks.",
                 "Echocardiogram showed an ejection fraction of {ef}%."),
        course=("{He} was diuresed with IV furosemide, with a net negative balance of several liters.",
                "Lisinopril and carvedilol were titrated before discharge."),
    ),
)

_EN_OPENINGS = (
    "{Patient} is a {age} year old {profession} who presents with {reason}.",
    "{Patient} is a {age}-year-old {sex} with a history of {pmh} who presented to the {hospital} emergency department on {admission} with {reason}.",
    "This is a {age} y/o {sex}, originally from {country}, who was referred by {doctor2} for {reason}.",
)
_EN_HISTORY = (
    "Past medical history is notable for {pmh} and {pmh}.",
    "{He} lives in {city} with {his} family and works for {organization}.",
    "{He} quit smoking in {year}.",
    "{His} last admission was at {hospital2} in {month_year} for {pmh}.",
    "Primary care is with {doctor2} in {city}.",
)
_EN_COURSE = (
    "{Patient} was seen by {doctor2} from cardiology on {date}.",
    "{He} remained hemodynamically stable throughout the admission.",
    "Case management arranged home services through {organization}.",
)
_EN_DISPOSITION = (
    "{He} was discharged home on {date} in stable condition.",
    "{Patient} will follow up with {doctor2} on {date}.",
    "Please call {phone} with any questions.",
)


@dataclass(frozen=True)
class _EnglishVocabulary:
    """Faker en_US values drawn once per call: its weighted US name tables cost ~50 µs a draw."""

    female_names: tuple[str, ...]
    male_names: tuple[str, ...]
    last_names: tuple[str, ...]
    cities: tuple[str, ...]
    streets: tuple[str, ...]
    companies: tuple[str, ...]

    @classmethod
    def from_faker(cls, faker: Faker) -> "_EnglishVocabulary":
        return cls(
            female_names=tuple(faker.first_name_female() for _ in range(600)),
            male_names=tuple(faker.first_name_male() for _ in range(600)),
            last_names=tuple(faker.last_name() for _ in range(1500)),
            cities=tuple(faker.city() for _ in range(300)),
            streets=tuple(faker.street_name() for _ in range(400)),
            companies=tuple(faker.company() for _ in range(300)),
        )


class _EnglishNote(_Composer):
    """One English discharge summary labelled with i2b2-2014 names."""

    NUMBERS = {
        "minutes": (20, 90, 0), "troponin": (0.1, 12.0, 2), "days": (2, 10, 0), "glucose": (350, 900, 0),
        "gap": (18, 32, 0), "hemoglobin": (5.5, 9.5, 1), "pounds": (5, 20, 0), "ef": (20, 45, 0),
    }

    def __init__(self, *, rng: random.Random, faker: Faker, vocabulary: _EnglishVocabulary) -> None:
        super().__init__(rng=rng, faker=faker)
        v = vocabulary
        self.case = rng.choice(_CASES_EN)
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
        self.hospital = f"{rng.choice(v.last_names)} {rng.choice(_HOSPITAL_SUFFIXES)}"
        self.hospital2 = f"{rng.choice(v.cities)} {rng.choice(_HOSPITAL_SUFFIXES)}"
        self.organization = rng.choice(v.companies)
        self.profession = rng.choice(_PROFESSIONS_EN)
        self.date_style = rng.randrange(4)
        self.next_pmh = _Draw(list(_PMH_EN), rng)
        self.next_reason = _Draw(list(self.case.reason), rng)

    def _person(self, v: _EnglishVocabulary) -> str:
        first = self.rng.choice(v.female_names if self.rng.random() < 0.5 else v.male_names)
        return f"{first} {self.rng.choice(v.last_names)}"

    def _format_date(self, day: dt.date, style: int) -> str:
        if style == 0:
            return f"{day.month}/{day.day}/{day.year}"
        if style == 1:
            return f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"
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
        self.w.phi(self.rng.choice(_COUNTRIES), "COUNTRY")

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
        self.w.phi(f"{_MONTHS[day.month - 1]} {day.year}", "DATE")

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
        w.phi(f"{_ascii(first)[:1]}{_ascii(last)}@{self.faker.free_email_domain()}", "EMAIL")
        w.text("\n")
        return Document(text="".join(w.parts), spans=tuple(w.spans), name=name, meta=dict(meta))


_EN_OPENINGS_T = _EnglishNote.compile_all(_EN_OPENINGS)
_EN_HISTORY_T = _EnglishNote.compile_all(_EN_HISTORY)
_EN_COURSE_T = _EnglishNote.compile_all(_EN_COURSE)
_EN_DISPOSITION_T = _EnglishNote.compile_all(_EN_DISPOSITION)
_COMPILED_EN = {
    id(case): {section: _EnglishNote.compile_all(getattr(case, section)) for section in ("history", "course")}
    for case in _CASES_EN
}
