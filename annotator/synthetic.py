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
from typing import Callable, Sequence

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
    composer_class = _SpanishNote if language == "es" else _EnglishNote
    notes = []
    for index in range(n):
        composer = composer_class(rng=rng, faker=faker)
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


@dataclass(frozen=True, slots=True)
class _Template:
    """A sentence with ``{slot}`` holes, split once: literals at even positions, slot names at odd ones."""

    parts: tuple[str, ...]
    words: int


def _compile(template: str, slots: Callable[[str], bool]) -> _Template:
    parts = tuple(_SLOT.split(template))
    for name in parts[1::2]:
        if not slots(name):
            raise LookupError(f"synthetic note template uses an unknown slot {{{name}}}: {template!r}")
    literal_words = sum(len(text.split()) for text in parts[0::2])
    return _Template(parts=parts, words=literal_words + 2 * (len(parts) // 2))


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
    def has_slot(cls, name: str) -> bool:
        return name in cls.NUMBERS or callable(getattr(cls, "_s_" + name, None))

    @classmethod
    def compile_all(cls, templates: Sequence[str]) -> tuple[_Template, ...]:
        return tuple(_compile(template, cls.has_slot) for template in templates)

    def render(self, template: _Template) -> None:
        w = self.w
        parts = template.parts
        for position, part in enumerate(parts):
            if position % 2 == 0:
                if part:
                    w.text(part)
            elif part in self.NUMBERS:
                w.text(self._number(*self.NUMBERS[part]))
            else:
                getattr(self, "_s_" + part)()

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

    def _plan(self, sections: Sequence[tuple[Sequence[_Template], int]], words_left: int) -> list[list[_Template]]:
        """Pick sentences per section: each section's minimum, then more at random until the words run out.

        Chosen sentences keep the order of their pool, so a pool written in narrative order reads in order.
        """
        rng = self.rng
        chosen: list[list[int]] = []
        spare: list[list[int]] = []
        for pool, minimum in sections:
            order = list(range(len(pool)))
            rng.shuffle(order)
            take = min(minimum, len(pool))
            chosen.append(order[:take])
            spare.append(order[take:])
            words_left -= sum(pool[i].words for i in order[:take])
        open_sections = [index for index, rest in enumerate(spare) if rest]
        while words_left > 0 and open_sections:
            section = rng.choice(open_sections)
            pick = spare[section].pop()
            chosen[section].append(pick)
            words_left -= sections[section][0][pick].words
            if not spare[section]:
                open_sections.remove(section)
        return [[pool[i] for i in sorted(indices)] for (pool, _minimum), indices in zip(sections, chosen)]

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
    "Ciudad": ("13", "Ciudad Real"), "Ciudad Real": ("13", "Ciudad Real"), "Córdoba": ("14", "Córdoba"),
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

_SERVICIOS = ("Medicina Interna", "Urgencias", "Cirugía General", "Radiología", "Anatomía Patológica",
              "Medicina Intensiva", "Anestesiología", "Rehabilitación")

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
    """One clinical picture: its service, who it fits, and the sentences it contributes to each section."""

    servicio: str
    motivos: tuple[str, ...]
    actual: tuple[str, ...]
    exploracion: tuple[str, ...]
    pruebas: tuple[str, ...]
    diagnosticos: tuple[str, ...]
    tratamiento: tuple[str, ...]
    evolucion: tuple[str, ...]
    sexes: str = "HM"
    ages: tuple[int, int] = (18, 92)


_CASES_ES = (
    _Case(
        servicio="Urología", sexes="H", ages=(40, 92),
        motivos=("hematuria macroscópica indolora", "un síndrome miccional de varios meses de evolución",
                 "dolor lumbar derecho de características cólicas"),
        actual=("Refiere {dias} días de hematuria total con coágulos, sin fiebre ni clínica miccional asociada.",
                "Presenta además nicturia de tres episodios y disminución de la fuerza del chorro miccional."),
        exploracion=("El tacto rectal muestra una próstata aumentada de tamaño, de consistencia elástica y sin nódulos.",
                     "La puñopercusión renal es negativa de forma bilateral."),
        pruebas=("La citología urinaria fue positiva para células de alto grado.",
                 "En la ecografía se observa una lesión exofítica de {tam} cm en la cara lateral derecha de la vejiga.",
                 "El PSA total era de {psa} ng/ml.",
                 "La urografía por TC descarta lesiones en el tracto urinario superior."),
        diagnosticos=("carcinoma urotelial de vejiga", "hiperplasia benigna de próstata",
                      "litiasis ureteral derecha obstructiva"),
        tratamiento=("Se realiza resección transuretral de la lesión el {fecha}, sin incidencias.",
                     "Se pautan instilaciones endovesicales semanales con BCG durante seis semanas.",
                     "Se coloca un catéter doble J y se inicia tratamiento con tamsulosina 0,4 mg al día."),
        evolucion=("La anatomía patológica informa de carcinoma urotelial papilar de bajo grado sin infiltración de la lámina propia.",
                   "La cistoscopia de control del {fecha_control} no mostró signos de recidiva."),
    ),
    _Case(
        servicio="Cardiología",
        motivos=("dolor torácico opresivo irradiado al brazo izquierdo", "palpitaciones y mareo",
                 "disnea de esfuerzo progresiva hasta hacerse de mínimos esfuerzos"),
        actual=("El dolor comenzó en reposo, se acompañaba de sudoración profusa y náuseas y duró unos {minutos} minutos.",
                "En las últimas semanas refiere ortopnea de dos almohadas y edemas maleolares vespertinos."),
        exploracion=("Presenta ingurgitación yugular a 45 grados y crepitantes en ambas bases pulmonares.",
                     "Se ausculta un soplo sistólico eyectivo II/VI en foco aórtico."),
        pruebas=("El electrocardiograma mostró elevación del segmento ST en las derivaciones inferiores.",
                 "La troponina T ultrasensible alcanzó un pico de {troponina} ng/l.",
                 "El ecocardiograma transtorácico objetivó una fracción de eyección del ventrículo izquierdo del {fevi} %.",
                 "El registro Holter de 24 horas detectó rachas de fibrilación auricular paroxística."),
        diagnosticos=("infarto agudo de miocardio inferior", "insuficiencia cardiaca descompensada",
                      "fibrilación auricular de reciente comienzo", "estenosis aórtica grave"),
        tratamiento=("Se realizó coronariografía urgente, que mostró una oclusión de la coronaria derecha tratada con un stent farmacoactivo.",
                     "Se inició tratamiento con ácido acetilsalicílico 100 mg, ticagrelor 90 mg cada 12 horas y atorvastatina 80 mg.",
                     "Se pautó furosemida intravenosa con buena respuesta diurética.",
                     "Se inició anticoagulación con apixabán 5 mg cada 12 horas."),
        evolucion=("Fue incluid{o} en el programa de rehabilitación cardiaca del {hospital}.",
                   "En la consulta del {fecha_control} se encontraba en clase funcional I de la NYHA."),
    ),
    _Case(
        servicio="Neumología",
        motivos=("fiebre y tos con expectoración purulenta", "disnea súbita y dolor torácico de tipo pleurítico",
                 "hemoptisis de pequeña cuantía"),
        actual=("El cuadro se inició hace {dias} días con malestar general, escalofríos y tos seca.",
                "Refiere haber realizado un viaje en autobús de más de diez horas la semana previa."),
        exploracion=("En la auscultación pulmonar se aprecian crepitantes en la base derecha.",
                     "Está taquipneico a {fr} respiraciones por minuto, con uso de musculatura accesoria."),
        pruebas=("La radiografía de tórax mostró una consolidación en el lóbulo inferior derecho.",
                 "La angio-TC pulmonar confirmó defectos de repleción en ambas arterias pulmonares principales.",
                 "La gasometría arterial basal mostró una pO2 de {po2} mmHg.",
                 "La antigenuria de neumococo fue positiva."),
        diagnosticos=("neumonía adquirida en la comunidad", "tromboembolismo pulmonar bilateral",
                      "agudización grave de EPOC"),
        tratamiento=("Se inició antibioterapia empírica con ceftriaxona 2 g al día y azitromicina 500 mg.",
                     "Se anticoaguló con enoxaparina a dosis terapéuticas.",
                     "Precisó oxigenoterapia con gafas nasales a 2 litros por minuto."),
        evolucion=("La radiografía de control realizada el {fecha_control} mostró la resolución completa del infiltrado.",),
    ),
    _Case(
        servicio="Aparato Digestivo",
        motivos=("dolor en hipocondrio derecho e ictericia", "dolor epigástrico intenso irradiado en cinturón",
                 "rectorragia y cambio del ritmo intestinal"),
        actual=("Desde hace {dias} días presenta coluria, acolia y prurito generalizado.",
                "Refiere una pérdida de {kilos} kg de peso en los últimos meses, sin cambios en la dieta."),
        exploracion=("El abdomen es doloroso a la palpación en el hipocondrio derecho, con signo de Murphy positivo.",
                     "Se aprecia ictericia cutánea y conjuntival."),
        pruebas=("La bilirrubina total era de {bilirrubina} mg/dl, con predominio de la fracción directa.",
                 "La lipasa sérica se elevó hasta {lipasa} U/l.",
                 "La ecografía abdominal mostró colelitiasis con dilatación de la vía biliar intrahepática.",
                 "La colonoscopia identificó una lesión estenosante en el colon sigmoide, de la que se tomaron biopsias."),
        diagnosticos=("coledocolitiasis", "pancreatitis aguda de origen biliar", "adenocarcinoma de colon sigmoide"),
        tratamiento=("Se realizó una CPRE con esfinterotomía y extracción de cálculos el {fecha}.",
                     "Se indicó colecistectomía laparoscópica, que se llevó a cabo sin complicaciones.",
                     "Se practicó una sigmoidectomía laparoscópica con anastomosis primaria."),
        evolucion=("Tras la intervención toleró la dieta oral y fue dad{o} de alta al quinto día.",
                   "El estudio de extensión no mostró enfermedad a distancia."),
    ),
    _Case(
        servicio="Neurología",
        motivos=("pérdida de fuerza en el hemicuerpo derecho y dificultad para hablar",
                 "cefalea intensa de inicio brusco", "una crisis convulsiva generalizada"),
        actual=("Los síntomas comenzaron de forma brusca al despertar, unas {horas} horas antes de su llegada.",
                "No refiere episodios previos de pérdida de conciencia ni traumatismo craneal."),
        exploracion=("En la exploración neurológica presenta afasia motora y hemiparesia derecha, con una puntuación NIHSS de {nihss}.",
                     "Las pupilas son isocóricas y normorreactivas, sin rigidez de nuca."),
        pruebas=("La TC craneal urgente no mostró signos de sangrado.",
                 "La angio-TC evidenció una oclusión de la arteria cerebral media izquierda.",
                 "La resonancia magnética cerebral mostró una lesión frontal con captación de contraste en anillo.",
                 "El electroencefalograma registró actividad epileptiforme temporal izquierda."),
        diagnosticos=("ictus isquémico de la arteria cerebral media izquierda", "hemorragia subaracnoidea",
                      "epilepsia focal sintomática"),
        tratamiento=("Se administró fibrinólisis intravenosa con alteplasa y se realizó trombectomía mecánica con recanalización completa.",
                     "Se inició tratamiento con levetiracetam 500 mg cada 12 horas."),
        evolucion=("Al alta persistía una leve paresia facial, con una puntuación de 1 en la escala de Rankin modificada.",),
    ),
    _Case(
        servicio="Oftalmología",
        motivos=("pérdida brusca de visión en el ojo derecho", "visión de moscas volantes y destellos luminosos",
                 "dolor ocular, fotofobia y ojo rojo"),
        actual=("Refiere visión de una sombra en el campo visual superior desde hace {dias} días.",),
        exploracion=("En la biomicroscopía se observa un Tyndall de dos cruces en cámara anterior.",
                     "El reflejo pupilar aferente está disminuido en el ojo afecto."),
        pruebas=("La agudeza visual era de {agudeza} en el ojo derecho y de la unidad en el izquierdo.",
                 "La presión intraocular fue de {pio} mmHg en ambos ojos.",
                 "La tomografía de coherencia óptica mostró un edema macular quístico.",
                 "En el fondo de ojo se aprecia un desprendimiento de retina con afectación macular."),
        diagnosticos=("desprendimiento de retina regmatógeno", "neuritis óptica retrobulbar",
                      "uveítis anterior aguda", "oclusión de la vena central de la retina"),
        tratamiento=("Se practicó vitrectomía posterior vía pars plana con taponamiento con gas el {fecha}.",
                     "Se pautaron colirios de dexametasona y ciclopentolato.",
                     "Se administraron tres inyecciones intravítreas de antiangiogénico con periodicidad mensual."),
        evolucion=("A los tres meses la agudeza visual había mejorado hasta {agudeza}.",),
    ),
    _Case(
        servicio="Dermatología",
        motivos=("una lesión pigmentada en la espalda que había cambiado de tamaño",
                 "placas eritematodescamativas pruriginosas en codos y rodillas",
                 "una úlcera en la pierna que no cicatrizaba"),
        actual=("La lesión había crecido en los últimos {meses} meses y sangraba ocasionalmente con el roce.",),
        exploracion=("Se observa una lesión de {tam} cm, asimétrica, de bordes irregulares y varios tonos de marrón.",
                     "No se palpan adenopatías axilares ni inguinales."),
        pruebas=("La dermatoscopia mostró un retículo pigmentado atípico y un velo azul-blanquecino.",
                 "La biopsia cutánea confirmó un melanoma de extensión superficial con un índice de Breslow de {breslow} mm.",
                 "La biopsia selectiva del ganglio centinela fue negativa."),
        diagnosticos=("melanoma de extensión superficial", "psoriasis en placas", "pioderma gangrenoso"),
        tratamiento=("Se realizó la ampliación de márgenes quirúrgicos el {fecha}.",
                     "Se inició tratamiento con metotrexato 15 mg semanales y ácido fólico.",
                     "Se trató con corticoides orales en pauta descendente y curas locales."),
        evolucion=("En las revisiones sucesivas no se han detectado nuevas lesiones sospechosas.",),
    ),
    _Case(
        servicio="Traumatología", ages=(20, 95),
        motivos=("dolor e impotencia funcional en la cadera izquierda tras una caída casual",
                 "dolor lumbar irradiado a la pierna derecha", "tumefacción de la rodilla tras un traumatismo deportivo"),
        actual=("La caída se produjo en su domicilio, sin pérdida de conocimiento.",
                "El dolor empeora con la sedestación y no cede con analgésicos habituales."),
        exploracion=("Presenta acortamiento y rotación externa del miembro inferior izquierdo.",
                     "La maniobra de Lasègue es positiva a 40 grados en la pierna derecha."),
        pruebas=("La radiografía mostró una fractura subcapital de fémur izquierdo desplazada.",
                 "La resonancia magnética lumbar evidenció una hernia discal L5-S1 con compresión radicular.",
                 "La resonancia de rodilla confirmó una rotura completa del ligamento cruzado anterior."),
        diagnosticos=("fractura subcapital de fémur", "hernia discal L5-S1", "rotura del ligamento cruzado anterior"),
        tratamiento=("Se implantó una artroplastia parcial de cadera el {fecha}.",
                     "Se realizó una microdiscectomía con buena evolución del dolor radicular.",
                     "Se llevó a cabo una ligamentoplastia con injerto autólogo de isquiotibiales."),
        evolucion=("Inició rehabilitación precoz y deambulaba con andador en el momento del alta.",),
    ),
    _Case(
        servicio="Nefrología",
        motivos=("edemas en miembros inferiores y orina espumosa",
                 "un deterioro de la función renal detectado en una analítica de rutina",
                 "astenia, náuseas y disminución de la diuresis"),
        actual=("Refiere un aumento de {kilos} kg de peso en el último mes a expensas de edemas.",),
        exploracion=("Presenta edemas con fóvea hasta las rodillas.",),
        pruebas=("La creatinina sérica era de {creatinina} mg/dl, con un filtrado glomerular estimado de {filtrado} ml/min.",
                 "La proteinuria en orina de 24 horas fue de {proteinuria} g.",
                 "La biopsia renal mostró una glomerulonefritis membranosa.",
                 "La ecografía renal mostró riñones de tamaño reducido con mala diferenciación corticomedular."),
        diagnosticos=("síndrome nefrótico por glomerulonefritis membranosa", "enfermedad renal crónica estadio 5",
                      "fracaso renal agudo prerrenal"),
        tratamiento=("Se inició tratamiento inmunosupresor y bloqueo del sistema renina-angiotensina.",
                     "Se colocó un catéter tunelizado y se inició hemodiálisis el {fecha}.",
                     "Se inició diálisis peritoneal continua ambulatoria tras un periodo de entrenamiento."),
        evolucion=("Fue incluid{o} en la lista de espera de trasplante renal del {hospital2}.",),
    ),
    _Case(
        servicio="Hematología",
        motivos=("astenia, sudoración nocturna y pérdida de peso", "adenopatías cervicales indoloras",
                 "hematomas espontáneos y sangrado gingival"),
        actual=("Refiere fiebre vespertina de hasta 38 grados desde hace {semanas} semanas.",),
        exploracion=("Se palpan adenopatías laterocervicales de hasta {tam} cm, de consistencia gomosa.",
                     "Se palpa esplenomegalia a tres traveses de dedo del reborde costal."),
        pruebas=("El hemograma mostró {leucocitos} leucocitos/µl con un {blastos} % de blastos.",
                 "La biopsia de una adenopatía cervical fue diagnóstica de linfoma B difuso de célula grande.",
                 "La PET-TC mostró afectación ganglionar a ambos lados del diafragma.",
                 "El aspirado de médula ósea confirmó la infiltración por células plasmáticas."),
        diagnosticos=("linfoma B difuso de célula grande", "leucemia mieloide aguda", "mieloma múltiple"),
        tratamiento=("Recibió seis ciclos de inmunoquimioterapia según el esquema R-CHOP.",
                     "Se inició quimioterapia de inducción y se solicitó estudio de donante para trasplante alogénico.",
                     "Se inició tratamiento con bortezomib, lenalidomida y dexametasona."),
        evolucion=("La PET-TC de reevaluación realizada el {fecha_control} mostró una respuesta metabólica completa.",),
    ),
    _Case(
        servicio="Pediatría", ages=(1, 14),
        motivos=("fiebre elevada de cinco días de evolución", "un exantema generalizado y conjuntivitis",
                 "vómitos y dolor abdominal periumbilical"),
        actual=("Había recibido tratamiento con ibuprofeno sin mejoría.",
                "El dolor se desplazó posteriormente a la fosa iliaca derecha."),
        exploracion=("Presenta labios fisurados, lengua aframbuesada y edema indurado en manos y pies.",
                     "El abdomen es doloroso en la fosa iliaca derecha, con signo de Blumberg positivo."),
        pruebas=("En la analítica destacan {leucocitos} leucocitos/µl, una PCR de {pcr} mg/l y trombocitosis.",
                 "La ecocardiografía mostró una dilatación leve de las arterias coronarias.",
                 "La ecografía abdominal mostró un apéndice engrosado con líquido libre periapendicular."),
        diagnosticos=("enfermedad de Kawasaki", "apendicitis aguda", "escarlatina"),
        tratamiento=("Se administró gammaglobulina intravenosa y ácido acetilsalicílico a dosis antiinflamatorias.",
                     "Se realizó una apendicectomía laparoscópica el {fecha}.",
                     "Se pautó amoxicilina oral durante diez días."),
        evolucion=("En el control ecocardiográfico a las ocho semanas las arterias coronarias eran normales.",),
    ),
    _Case(
        servicio="Ginecología", sexes="M", ages=(18, 55),
        motivos=("dolor pélvico crónico y dismenorrea", "una masa anexial detectada en una revisión rutinaria",
                 "sangrado menstrual abundante y anemia"),
        actual=("La dismenorrea se ha intensificado en los últimos {meses} meses y le impide acudir al trabajo.",),
        exploracion=("En la exploración ginecológica se palpa una masa anexial izquierda móvil y dolorosa.",),
        pruebas=("La ecografía transvaginal mostró un quiste anexial izquierdo de {tam} cm de contenido ecogénico.",
                 "El marcador CA-125 era de {ca125} U/ml.",
                 "La resonancia pélvica sugería un endometrioma ovárico."),
        diagnosticos=("endometriosis ovárica", "teratoma quístico maduro de ovario", "mioma uterino submucoso"),
        tratamiento=("Se realizó una quistectomía laparoscópica el {fecha}, preservando el parénquima ovárico.",
                     "Se inició tratamiento hormonal con un progestágeno oral."),
        evolucion=("El estudio histológico confirmó la benignidad de la lesión.",),
    ),
    _Case(
        servicio="Enfermedades Infecciosas",
        motivos=("fiebre ondulante y artralgias de tres semanas de evolución", "fiebre y un soplo cardiaco de nueva aparición",
                 "fiebre y dolor lumbar intenso"),
        actual=("Refiere contacto habitual con ganado ovino y consumo de queso fresco sin control sanitario.",
                "Hace {semanas} semanas se le realizó una extracción dentaria sin profilaxis antibiótica."),
        exploracion=("Se palpa una hepatoesplenomegalia moderada.", "Presenta lesiones de Janeway en las palmas."),
        pruebas=("Los hemocultivos fueron positivos para Staphylococcus aureus sensible a meticilina.",
                 "La serología frente a Brucella fue positiva a título elevado.",
                 "El ecocardiograma transesofágico mostró una vegetación de {tam_mm} mm en la válvula mitral."),
        diagnosticos=("endocarditis infecciosa sobre válvula nativa", "brucelosis", "espondilodiscitis lumbar"),
        tratamiento=("Se inició tratamiento con cloxacilina intravenosa durante seis semanas.",
                     "Se trató con doxiciclina y estreptomicina con buena respuesta clínica."),
        evolucion=("Las serologías de control del {fecha_control} mostraron un descenso progresivo de los títulos.",),
    ),
    _Case(
        servicio="Endocrinología",
        motivos=("palpitaciones, temblor y pérdida de peso", "crisis de cefalea, sudoración y palpitaciones",
                 "poliuria, polidipsia y pérdida de peso"),
        actual=("En los últimos {meses} meses ha perdido {kilos} kg a pesar de mantener el apetito.",),
        exploracion=("Se palpa un bocio difuso grado II, sin nódulos.", "Presenta temblor fino distal y piel caliente."),
        pruebas=("La TSH estaba suprimida, con una T4 libre de {t4} ng/dl.",
                 "Las metanefrinas en orina de 24 horas estaban muy elevadas.",
                 "La TC abdominal mostró una masa suprarrenal derecha de {tam} cm.",
                 "La glucemia al ingreso era de {glucemia} mg/dl, con una hemoglobina glucosilada del {hba1c} %."),
        diagnosticos=("enfermedad de Graves-Basedow", "feocromocitoma", "diabetes mellitus de reciente diagnóstico"),
        tratamiento=("Se inició tratamiento con metimazol y propranolol.",
                     "Tras el bloqueo alfa con doxazosina, se realizó una adrenalectomía laparoscópica el {fecha}.",
                     "Se inició insulinoterapia en pauta bolo-basal y educación diabetológica."),
        evolucion=("En la revisión del {fecha_control} se encontraba eutiroide y asintomátic{o}.",),
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
    "{Sexo} de {edad} que acude a Urgencias de Pediatría del {hospital} acompañad{o} de {su_familiar} por {motivo}.",
    "Presentamos el caso de {un} {sexo} de {edad}, sin antecedentes de interés, remitid{o} por su pediatra del {centro_salud} por {motivo}.",
    "{Paciente}, {sexo} de {edad}, es traíd{o} por {su_familiar_plural} al Servicio de Urgencias el {fecha_ingreso} por {motivo}.",
)
_ES_ANTECEDENTES_ADULT = (
    "Entre sus antecedentes personales destacan {antecedente}, {antecedente} y {antecedente}.",
    "Como antecedentes refiere {antecedente}, en seguimiento desde {fecha_previa}.",
    "Intervenid{o} de {cirugia} en {fecha_previa}.",
    "Fumador{a} de {cigarrillos} cigarrillos al día desde los {edad_joven}.",
    "Exfumador{a} desde {fecha_previa}; no refiere consumo de alcohol.",
    "No refiere hábitos tóxicos.",
    "En tratamiento habitual con {farmaco_cronico}, {farmaco_cronico} y {farmaco_cronico}.",
    "Diagnosticad{o} de {antecedente} {edad_previa}, con buen control en su centro de salud.",
    "Ingresó en el {hospital2} en {fecha_previa} por una neumonía que se resolvió sin secuelas.",
    "Vive con {su_familiar} en {ciudad} y es independiente para las actividades básicas de la vida diaria.",
    "Natural de {pais_origen}, reside en España desde {fecha_previa}.",
    "Antecedentes familiares: {familiar} con {enfermedad_familiar} y {familiar} con {enfermedad_familiar}.",
    "Refiere que {su_familiar} falleció por {enfermedad_familiar}.",
    "No hay antecedentes familiares de interés.",
)
_ES_ANTECEDENTES_CHILD = (
    "Embarazo controlado y parto eutócico a término, con un peso al nacimiento de {peso_nacer} g.",
    "Vacunación correcta según el calendario vigente.",
    "Sin alergias medicamentosas conocidas.",
    "Como antecedentes familiares, {su_familiar} padece {enfermedad_familiar}.",
    "Refiere que {un_familiar} presentó un cuadro similar en {fecha_previa}.",
    "Vive con {su_familiar_plural} en {ciudad} y acude a la guardería.",
)
_ES_ACTUAL = (
    "El {fecha_ingreso} acude a Urgencias por empeoramiento de los síntomas.",
    "No refiere fiebre, pérdida de peso ni sudoración nocturna.",
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
_ES_PRUEBAS = (
    "En la analítica destacan una hemoglobina de {hemoglobina} g/dl, {leucocitos} leucocitos/µl y una PCR de {pcr} mg/l.",
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
    "Se remitieron muestras {a_institucion} para completar el estudio.",
)
_ES_EVOLUCION_HEAD = (
    "La evolución fue favorable y {el} paciente fue dad{o} de alta el {fecha}.",
    "Tras {dias} días de ingreso, {paciente} fue dad{o} de alta con tratamiento domiciliario.",
    "Durante el ingreso no presentó complicaciones.",
)
_ES_EVOLUCION = (
    "En la revisión realizada el {fecha_control}, {paciente} se encuentra asintomátic{o}.",
    "Actualmente sigue controles periódicos en las consultas externas del {hospital} y en {el_centro_salud}.",
    "Se remite a {el_dr_medico} para seguimiento en consultas.",
    "El caso se notificó {a_institucion}.",
    "Tras {meses} meses de seguimiento no ha presentado nuevos episodios.",
    "{Paciente} ha podido reincorporarse a su actividad habitual.",
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
        "cigarrillos": (5, 40, 0), "peso_nacer": (2600, 4100, 0),
    }

    def __init__(self, *, rng: random.Random, faker: Faker) -> None:
        super().__init__(rng=rng, faker=faker)
        f = faker
        self.child = rng.random() < 0.09
        cases = _CASES_ES_CHILD if self.child else _CASES_ES_ADULT
        self.case = rng.choice(cases)
        self.female = rng.random() < 0.5 if self.case.sexes == "HM" else self.case.sexes == "M"
        low, high = self.case.ages if self.child else (max(self.case.ages[0], 16), self.case.ages[1])
        self.age = rng.randint(low, high)
        self.infant_months = rng.randint(3, 23) if self.child and self.age <= 1 else 0
        self.first_name = f.first_name_female() if self.female else f.first_name_male()
        if rng.random() < 0.12:
            self.first_name += " " + (f.first_name_female() if self.female else f.first_name_male())
        self.surnames = (f.last_name(), f.last_name())
        self.province = f.city()
        self.postal_prefix, self.city = _PROVINCIAS.get(self.province, (f.postcode()[:2], self.province))
        # Most case reports are written where the patient lives; some at a referral centre elsewhere.
        if rng.random() < 0.8:
            self.hospital_city, self.hospital_prefix = self.city, self.postal_prefix
        else:
            self.hospital_prefix, self.hospital_city = _PROVINCIAS.get(f.city(), ("28", "Madrid"))
        self.admission = dt.date(2005, 1, 1) + dt.timedelta(days=rng.randrange(15 * 365))
        years = 1 if self.infant_months else self.age
        self.birth = self.admission - dt.timedelta(days=int(365.25 * years) + rng.randrange(1, 360))
        if self.infant_months:
            self.birth = self.admission - dt.timedelta(days=int(30.4 * self.infant_months) + rng.randrange(0, 25))
        self.cursor = self.admission
        self.date_style = rng.choices(("slash", "long", "long_del", "dash", "dot"), weights=(45, 33, 10, 7, 5))[0]
        self.doctor = self._new_person()
        self.referring_doctor = self.doctor if rng.random() < 0.75 else self._new_person()
        self.other_doctor = self._new_person()
        self.hospital = self._hospital_name(self.hospital_city)
        self.hospital2 = self._hospital_name(f.city() if rng.random() < 0.5 else self.city)
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
        self.diagnostico = rng.choice(self.case.diagnosticos)

    # -- people and places -------------------------------------------------------------------------

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
        earliest = self.birth + dt.timedelta(days=365 * (1 if self.child else 16))
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
            w.text(title.capitalize() if capital else title)
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
        self._s_familiar()

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

    def _s_lugar_origen(self) -> None:
        if self.rng.random() < 0.5:
            self._s_pais_origen()
        else:
            self.w.phi(_PROVINCIAS.get(self.faker.city(), ("", "Toledo"))[1], "TERRITORIO")

    def _s_a_institucion(self) -> None:
        rng = self.rng
        w = self.w
        province = self.province if self.province != "Ciudad" else "Ciudad Real"
        kind = rng.randrange(6)
        if kind == 0:
            w.text("al ")
            w.phi(f"Instituto de Medicina Legal de {province}", "INSTITUCION")
        elif kind == 1:
            w.text("al ")
            w.phi(f"Centro de Transfusión de {province}", "INSTITUCION")
        elif kind == 2:
            w.text("a la ")
            w.phi(f"Universidad de {self.hospital_city}", "INSTITUCION")
        elif kind == 3:
            w.text("a la ")
            w.phi(f"Facultad de Medicina de {self.hospital_city}", "INSTITUCION")
        elif kind == 4:
            w.text("al ")
            w.phi("Sistema Español de Farmacovigilancia", "INSTITUCION")
        else:
            w.text("a la ")
            w.phi(f"Fundación {self.faker.last_name()} {self.faker.last_name()}", "INSTITUCION")

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
        self.w.text(self.rng.choice(_SERVICIOS))

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
        sections = [
            (_ES_OPENINGS_CHILD_T if child else _ES_OPENINGS_ADULT_T, 1),
            (_ES_ANTECEDENTES_CHILD_T if child else _ES_ANTECEDENTES_ADULT_T, 1),
            (compiled["actual"] + _ES_ACTUAL_T, 0),
            (compiled["exploracion"] + _ES_EXPLORACION_T, 1),
            (compiled["pruebas"] + _ES_PRUEBAS_T, 1),
            (compiled["tratamiento"] + _ES_TRATAMIENTO_T, 1),
            (_ES_EVOLUCION_HEAD_T + compiled["evolucion"] + _ES_EVOLUCION_T, 1),
        ]
        header_and_footer_words = 85
        planned = self._plan(sections, target_words - header_and_footer_words)
        # The diagnosis opens the treatment section; written before the other sentences of that section.
        planned[5].insert(0, rng.choice(_ES_TRATAMIENTO_HEAD_T))
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
        if self.province != self.city and self.province != "Ciudad" and rng.random() < 0.4:
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
_CASES_ES_ADULT = tuple(case for case in _CASES_ES if case.ages[1] >= 16)
_ES_OPENINGS_ADULT_T = _SpanishNote.compile_all(_ES_OPENINGS_ADULT)
_ES_OPENINGS_CHILD_T = _SpanishNote.compile_all(_ES_OPENINGS_CHILD)
_ES_ANTECEDENTES_ADULT_T = _SpanishNote.compile_all(_ES_ANTECEDENTES_ADULT)
_ES_ANTECEDENTES_CHILD_T = _SpanishNote.compile_all(_ES_ANTECEDENTES_CHILD)
_ES_ACTUAL_T = _SpanishNote.compile_all(_ES_ACTUAL)
_ES_EXPLORACION_T = _SpanishNote.compile_all(_ES_EXPLORACION)
_ES_PRUEBAS_T = _SpanishNote.compile_all(_ES_PRUEBAS)
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


class _EnglishNote(_Composer):
    NUMBERS = {
        "minutes": (20, 90, 0), "troponin": (0.1, 12.0, 2), "days": (2, 10, 0), "glucose": (350, 900, 0),
        "gap": (18, 32, 0), "hemoglobin": (5.5, 9.5, 1), "pounds": (5, 20, 0), "ef": (20, 45, 0),
    }

    def __init__(self, *, rng: random.Random, faker: Faker) -> None:
        super().__init__(rng=rng, faker=faker)
        f = faker
        self.case = rng.choice(_CASES_EN)
        self.female = rng.random() < 0.5
        self.age = rng.randint(22, 94)
        self.first_name = f.first_name_female() if self.female else f.first_name_male()
        self.last_name = f.last_name()
        self.city = f.city()
        self.state = f.state_abbr() if rng.random() < 0.6 else f.state()
        self.admission = dt.date(2008, 1, 1) + dt.timedelta(days=rng.randrange(14 * 365))
        self.cursor = self.admission
        self.doctor = f"{f.first_name()} {f.last_name()}"
        self.doctor2 = f"{f.first_name()} {f.last_name()}"
        self.hospital = f"{f.last_name()} {rng.choice(_HOSPITAL_SUFFIXES)}"
        self.hospital2 = f"{f.city()} {rng.choice(_HOSPITAL_SUFFIXES)}"
        self.organization = f.company()
        self.profession = rng.choice(_PROFESSIONS_EN)
        self.date_style = rng.randrange(4)
        self.next_pmh = _Draw(["hypertension", "type 2 diabetes", "hyperlipidemia", "COPD", "atrial fibrillation",
                               "chronic kidney disease", "hypothyroidism", "osteoarthritis", "depression"], rng)
        self.next_reason = _Draw(list(self.case.reason), rng)

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

    def _name_reference(self, capital: bool) -> None:
        if self.rng.random() < 0.7:
            self.w.text("Ms. " if self.female else "Mr. ")
            self.w.phi(self.last_name, "PATIENT")
        else:
            self.w.phi(f"{self.first_name} {self.last_name}", "PATIENT")

    def _s_Patient(self) -> None:
        self._name_reference(capital=True)

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
        f = self.faker
        w.text("Record date: ")
        w.phi(self._format_date(self.admission, self.date_style), "DATE")
        w.text("\n\n")
        w.phi(self.hospital, "HOSPITAL")
        w.text("\n")
        w.phi(f"{rng.randint(1, 9999)} {f.street_name()}", "STREET")
        w.text("\n")
        w.phi(self.city, "CITY")
        w.text(", ")
        w.phi(self.state, "STATE")
        w.text(" ")
        w.phi(f.zipcode(), "ZIP")
        w.text("\n\nDISCHARGE SUMMARY\n\nPatient: ")
        w.phi(f"{self.first_name} {self.last_name}", "PATIENT")
        w.text("\nMRN: ")
        w.phi(self._digits(rng.randint(7, 9)), "MEDICALRECORD")
        if rng.random() < 0.5:
            w.text("    Account: ")
            w.phi(f"{rng.choice('ABCDEFGHK')}{self._digits(7)}", "IDNUM")
        w.text("\nAdmission date: ")
        self._s_admission()
        if rng.random() < 0.5:
            w.text("\nCountry of residence: ")
            w.phi("USA", "COUNTRY")
        w.text("\nAttending: ")
        w.phi(self.doctor, "DOCTOR")
        w.text(", MD\n\nHISTORY OF PRESENT ILLNESS: ")
        compiled = _COMPILED_EN[id(self.case)]
        target_words = int(120 + 330 * rng.random())
        openings, history, course, disposition = self._plan(
            [(_EN_OPENINGS_T, 1), (compiled["history"] + _EN_HISTORY_T, 2), (compiled["course"] + _EN_COURSE_T, 2),
             (_EN_DISPOSITION_T, 1)],
            target_words - 60,
        )
        self.render_paragraph(openings + history[:1])
        if history[1:]:
            w.text("\n\nPAST HISTORY: ")
            self.render_paragraph(history[1:])
        w.text("\n\nHOSPITAL COURSE: ")
        self.render_paragraph(course)
        w.text("\n\nDISPOSITION: ")
        self.render_paragraph(disposition)
        w.text("\n\n")
        w.phi(self.doctor, "DOCTOR")
        w.text(", MD\n")
        email_user = f"{_ascii(self.doctor.split()[0])[0]}{_ascii(self.doctor.split()[-1])}"
        w.phi(f"{email_user}@{f.free_email_domain()}", "EMAIL")
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
