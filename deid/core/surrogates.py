"""Surrogates for PHI: realistic stand-ins, chosen deterministically from a secret (ALGORITHMS.md §4, Pseudo).

Usage (a service does this once per exported document)::

    surrogates = Surrogates(language="es", secret=project_secret)          # secret: bytes, kept by the caller
    document = surrogates.for_document("doc-17", patient_key="NHC 123")    # one date shift per patient
    document.replace("Iker Miguel Bayona Jaume", label="NOMBRE_SUJETO_ASISTENCIA").text

Decisions:

- **Deterministic, no mapping stored.** Every choice is drawn from a ``random.Random`` seeded with
  HMAC-SHA256(secret, scope · kind · normalised value · attempt). The same secret gives the same
  surrogates on every export; another secret (another project) gives others; nothing needs storing.
  Normalised means case-folded, accents removed and spaces collapsed, so "BAYONA", "Bayona" and "bayona"
  get the same surrogate, each written in its own case. The surrogates are stable for a given Python and
  Faker version (Faker's lists are the vocabulary; the pin is in requirements/lock.txt).
- **Scope.** ``scope="document"`` (default) puts the document key in the HMAC: a value maps to one
  surrogate within a document and to unrelated ones elsewhere, so documents cannot be linked through
  their surrogates. ``scope="project"`` leaves it out: one surrogate per value in the whole project
  (dates still move per document or patient, below).
- **A surrogate never equals its original** (after normalisation), nor holds it or is held by it
  ("A Coruña" / "La Coruña"): such a draw is drawn again. Two different originals may share a surrogate;
  that adds ambiguity and leaks nothing. With ``scope="document"``, a drawn name word, place or
  profession also never holds a word of the document's PHI (the values :meth:`DocumentSurrogates.prepare`
  saw): "García" in "María José García" must not become "María", which would put a real name of the note
  back into it (a reader takes it for the original). The set is the whole document's, so a value still
  maps to one surrogate throughout the document; the project scope keeps its one surrogate per value
  across documents instead.
- **Names part by part.** A person's name is cut into words; each word maps on its own (key: the word),
  so "Iker Miguel Bayona Jaume" and, later, "Sr. Bayona" share the surrogate of "Bayona". Particles
  ("de", "del", "la", "van"…) and titles ("Dr.", "Sra."…) are kept; an initial becomes another initial.
  A word found in the locale's female (male) first names becomes a female (male) first name of the
  locale's list, one found in both lists a name of both, anything else a surname. A word in no list
  that opens a name of two or more words (or is labelled a first name) is a first name whose sex is
  guessed from its ending ("-a" female); :meth:`DocumentSurrogates.prepare` collects those guesses from
  all the names of the document first, so that "Yadira" alone maps like "Yadira" in "Yadira Etxeberria".
  The same word maps the same way wherever it is a proper name: in a person's name, a street or an
  institution.
- **Dates** move by one offset per document, or per ``patient_key`` when the caller gives one, between
  400 and 1460 days either way and never a whole number of years (:mod:`deid.core.dates` says how months
  and years follow), so that intervals survive and no date stays as it was. A date that cannot be read
  is masked (``outcome="masked"``), which the concealment report counts.
- **Ages** are kept (HIPAA does not count ages under 90 as identifiers); an age of ``age_bucket`` years
  or more becomes "90+" (``age_bucket=None`` keeps all) — ages in months, weeks or days are kept.
- **Sex** words ("Varón", "mujer", "H", "niña", "female") are kept as written (``outcome="kept"``, which
  the concealment report counts): changing the sex would contradict the clinical text (pregnancy,
  prostate), so the sex stays whatever the wording, and another word for it would hide nothing. Written
  as in real notes, they also train a tagger that finds them ("H" and "M" are most of MEDDOCAN's).
  A value under a sex label that is not a sex word ("anciana") is replaced like free text (below).
- **Identifiers, phones, faxes, postcodes** keep their shape: digit for digit, letter for letter, the
  separators where they were; the first digit of a number stays non-zero when it was. A Spanish DNI or
  NIE gets a valid check letter, a Spanish social-security number (12 digits) valid control digits, a
  US SSN a valid area and group, a Swedish personnummer a valid date and Luhn digit. Phones keep their
  international prefix and the first digit of the national number (which says fixed or mobile).
- **E-mail addresses and URLs** keep their shape: letters become letters (vowel for vowel, consonant for
  consonant, so they stay pronounceable), digits digits; public mail domains (gmail.com, hotmail.es…) and
  top-level domains are kept. IPv4 addresses get new octets, IPv6 new hex digits.
- **Institutions and streets** keep their generic words ("Hospital Universitario", "Centro de Salud de",
  "Medical Center", "Calle", "Avda.", "C/", "Street", "s/n", "nº"; for streets also the street types of
  Faker's locale: "Rambla", "Corner", "Viale"…) and replace the proper names (as name
  words, above), numbers and acronyms; Swedish compounds keep their generic ending ("Storgatan" ->
  "Björkgatan", "Södersjukhuset" -> "…sjukhuset"). When every word is generic ("Hospital General") the
  last word is replaced, so at least one word of every entity changes: by another generic word of the
  same sort where the language has one ("Facultad de Odontología" -> "Facultad de Medicina", "Hospital
  General Universitario" -> "Hospital General Comarcal": names notes hold too), else by a surname.
- **Realistic frequencies.** A surrogate corpus trains taggers only if common values stay common: a
  surrogate never equals its original, so if every "Madrid" became some other province capital and every
  "España" any of 190 countries alike, the corpus would hardly hold its most common values at all. So
  places and countries are drawn in proportion to how often notes name them (:mod:`deid.core.place_data`):
  in Spanish, a town (two hundred municipalities by population, and cities abroad at about one in
  twenty-five) for a town, a region (community, province or island) for a region, a country for a
  country with Spain about half of the draws (the others: Latin America, Morocco, Romania, neighbours
  first). "Francia" may thus become "España", and the corpus keeps "España" labelled as a country. A
  place or country inside a street or an institution's name ("Hospital General de Móstoles", "Avenida de
  Burgos") gets the surrogate the place itself gets; a company an institution names ("Laboratorios
  Alcon-Cusí SA", "Boston Scientific") becomes another company of a weighted list. Other languages draw cities from Faker's locale;
  countries in every language come from Faker's list, cleaned (:func:`countries`). Spanish postcodes get
  a province prefix drawn by population, and a capital's code (third digit 0) half of the time.
  Relatives ("madre", "hermanos") become another relative of the same gender and number, the common ones
  ("madre", "padre", "padres", "familia") weighted high.
- **Places, countries, professions** have the same number of words as the original where the list has
  a few such names; professions come from Faker's locale, in Swedish and Italian (which Faker lacks)
  from a short list here.
- **Anything else** (``kind="other"`` and labels not in the map) is replaced word by word: numbers
  digit for digit, relatives as above, a sex word by another word for the same sex ("varón" ->
  "hombre"), words found in the locale's name lists as name words, other words of four letters or more
  by a word of the locale's Faker word list (pronounceable letters in Swedish); words of up to three
  letters, units of time and small numbers are kept.

Label -> kind (:data:`LABEL_KINDS`; unknown labels: :func:`kind_for_label` guesses from the name, else
``other``):

==================  ==========================================================================================
kind                labels
==================  ==========================================================================================
person              NOMBRE_SUJETO_ASISTENCIA, NOMBRE_PERSONAL_SANITARIO, PATIENT, DOCTOR, NAME
first_name          First_Name
last_name           Last_Name
age                 EDAD_SUJETO_ASISTENCIA, AGE, Age
sex                 SEXO_SUJETO_ASISTENCIA
relative            FAMILIARES_SUJETO_ASISTENCIA
date                FECHAS, DATE, Full_Date, Date_Part
profession          PROFESION, PROFESSION
institution         HOSPITAL, CENTRO_SALUD, INSTITUCION, DEPARTMENT, ORGANIZATION, Health_Care_Unit, Organization
street              CALLE, STREET
city                CITY
state               STATE
territory           TERRITORIO, GEOGRAPHIC_SUBDIVISION (a postcode when it is all digits, else a city)
location            LOCATION-OTHER, Location (a street when it holds a number, a postcode, else a city)
country             PAIS, COUNTRY
postcode            ZIP
phone / fax         NUMERO_TELEFONO, PHONE, TELEPHONE, Phone_Number / NUMERO_FAX, FAX
email / url / ip    CORREO_ELECTRONICO, EMAIL / URL_WEB, URL / DIREC_PROT_INTERNET, IP_ADDRESS
username            USERNAME
ssn                 SSN
medical_record      ID_SUJETO_ASISTENCIA, MEDICALRECORD, MEDICAL_RECORD_NUMBER
health_plan         ID_ASEGURAMIENTO, NUMERO_BENEF_PLAN_SALUD, HEALTHPLAN, HEALTH_PLAN_BENEFICIARY_NUMBER
account             ACCOUNT, ACCOUNT_NUMBER
license             ID_TITULACION_PERSONAL_SANITARIO, LICENSE, CERTIFICATE_LICENSE_NUMBER
vehicle / device    IDENTIF_VEHICULOS_NRSERIE_PLACAS, VEHICLE, VEHICLE_IDENTIFIER /
                    IDENTIF_DISPOSITIVOS_NRSERIE, DEVICE, DEVICE_IDENTIFIER
biometric           IDENTIF_BIOMETRICOS, BIOID, BIOMETRIC_IDENTIFIER
room                ROOM
id                  ID_CONTACTO_ASISTENCIAL, ID_EMPLEO_PERSONAL_SANITARIO, OTRO_NUMERO_IDENTIF, IDNUM,
                    OTHER_UNIQUE_IDENTIFIER
other               OTROS_SUJETO_ASISTENCIA, FULL_FACE_PHOTO
==================  ==========================================================================================

Identifier kinds whose value reads as words (no digit, or several words one of which has four letters or
more: MEDDOCAN has "lactante" as a patient ID and "Residente de 5º año" as an employment ID) are replaced
like ``other``.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import random
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from deid.core import place_data
from deid.core._compat.faker_data import countries, name_lists, street_prefixes, street_types
from deid.core.dates import month_shift, shift_date_text

if TYPE_CHECKING:  # Faker is imported on the first draw (module loading stays light for the web)
    from faker import Faker

__all__ = [
    "KINDS",
    "LABEL_KINDS",
    "LANGUAGES",
    "PRESET_LABEL_KINDS",
    "DocumentSurrogates",
    "Surrogate",
    "Surrogates",
    "kind_for_label",
    "mask",
]

#: The corpus languages and the Faker locale each draws from.
LANGUAGES: Mapping[str, str] = {"es": "es_ES", "en": "en_US", "sv": "sv_SE", "it": "it_IT"}

#: Label -> surrogate kind for every label of the four presets of ``annotator.schemas`` (the label lists are
#: repeated here because deid.core may not import annotator; a unit test keeps the two equal).
PRESET_LABEL_KINDS: Mapping[str, Mapping[str, str]] = {
    "MEDDOCAN": {
        "NOMBRE_SUJETO_ASISTENCIA": "person", "EDAD_SUJETO_ASISTENCIA": "age", "SEXO_SUJETO_ASISTENCIA": "sex",
        "FAMILIARES_SUJETO_ASISTENCIA": "relative", "NOMBRE_PERSONAL_SANITARIO": "person", "FECHAS": "date",
        "PROFESION": "profession", "HOSPITAL": "institution", "CENTRO_SALUD": "institution",
        "INSTITUCION": "institution", "CALLE": "street", "TERRITORIO": "territory", "PAIS": "country",
        "NUMERO_TELEFONO": "phone", "NUMERO_FAX": "fax", "CORREO_ELECTRONICO": "email",
        "ID_SUJETO_ASISTENCIA": "medical_record", "ID_CONTACTO_ASISTENCIAL": "id",
        "ID_ASEGURAMIENTO": "health_plan", "ID_TITULACION_PERSONAL_SANITARIO": "license",
        "ID_EMPLEO_PERSONAL_SANITARIO": "id", "IDENTIF_VEHICULOS_NRSERIE_PLACAS": "vehicle",
        "IDENTIF_DISPOSITIVOS_NRSERIE": "device", "NUMERO_BENEF_PLAN_SALUD": "health_plan", "URL_WEB": "url",
        "DIREC_PROT_INTERNET": "ip", "IDENTIF_BIOMETRICOS": "biometric", "OTRO_NUMERO_IDENTIF": "id",
        "OTROS_SUJETO_ASISTENCIA": "other",
    },
    "i2b2-2014": {
        "PATIENT": "person", "DOCTOR": "person", "USERNAME": "username", "PROFESSION": "profession",
        "ROOM": "room", "DEPARTMENT": "institution", "HOSPITAL": "institution", "ORGANIZATION": "institution",
        "STREET": "street", "CITY": "city", "STATE": "state", "COUNTRY": "country", "ZIP": "postcode",
        "LOCATION-OTHER": "location", "AGE": "age", "DATE": "date", "PHONE": "phone", "FAX": "fax",
        "EMAIL": "email", "URL": "url", "SSN": "ssn", "MEDICALRECORD": "medical_record",
        "HEALTHPLAN": "health_plan", "ACCOUNT": "account", "LICENSE": "license", "VEHICLE": "vehicle",
        "DEVICE": "device", "BIOID": "biometric", "IDNUM": "id",
    },
    "HIPAA-18": {
        "NAME": "person", "GEOGRAPHIC_SUBDIVISION": "territory", "DATE": "date", "TELEPHONE": "phone",
        "FAX": "fax", "EMAIL": "email", "SSN": "ssn", "MEDICAL_RECORD_NUMBER": "medical_record",
        "HEALTH_PLAN_BENEFICIARY_NUMBER": "health_plan", "ACCOUNT_NUMBER": "account",
        "CERTIFICATE_LICENSE_NUMBER": "license", "VEHICLE_IDENTIFIER": "vehicle", "DEVICE_IDENTIFIER": "device",
        "URL": "url", "IP_ADDRESS": "ip", "BIOMETRIC_IDENTIFIER": "biometric", "FULL_FACE_PHOTO": "other",
        "OTHER_UNIQUE_IDENTIFIER": "id",
    },
    "Stockholm-EPR": {
        "First_Name": "first_name", "Last_Name": "last_name", "Age": "age", "Phone_Number": "phone",
        "Location": "location", "Full_Date": "date", "Date_Part": "date", "Health_Care_Unit": "institution",
        "Organization": "institution",
    },
}
LABEL_KINDS: Mapping[str, str] = {
    label: kind for kinds in PRESET_LABEL_KINDS.values() for label, kind in kinds.items()
}

_PERSON_KINDS = frozenset({"person", "first_name", "last_name"})
_IDENTIFIER_KINDS = frozenset(
    {"ssn", "medical_record", "health_plan", "account", "license", "vehicle", "device", "biometric", "room", "id"}
)
KINDS = frozenset(
    _PERSON_KINDS | _IDENTIFIER_KINDS
    | {"age", "sex", "relative", "date", "profession", "institution", "street", "city", "state", "territory",
       "location", "country", "postcode", "phone", "fax", "email", "url", "ip", "username", "other"}
)

# Beginnings of the words of a custom label's name -> kind, tried in this order (first match wins):
# "FECHA_INGRESO" -> date, "APELLIDO_NOMBRE" -> person, "RECIPIENT" -> other (not ip).
_LABEL_HINTS: tuple[tuple[str, str], ...] = (
    ("FIRST", "first_name"), ("LAST", "last_name"), ("NOMBRE", "person"), ("NAME", "person"),
    ("PATIENT", "person"), ("DOCTOR", "person"), ("FECHA", "date"), ("DATE", "date"), ("EDAD", "age"),
    ("AGE", "age"), ("FAX", "fax"), ("PHONE", "phone"), ("TELEF", "phone"), ("EMAIL", "email"), ("MAIL", "email"),
    ("CORREO", "email"), ("URL", "url"), ("IP", "ip"), ("HOSPITAL", "institution"), ("CLINIC", "institution"),
    ("INSTITU", "institution"), ("ORGANI", "institution"), ("CALLE", "street"), ("STREET", "street"),
    ("CITY", "city"), ("CIUDAD", "city"), ("COUNTRY", "country"), ("PAIS", "country"), ("ZIP", "postcode"),
    ("POSTAL", "postcode"), ("PROFES", "profession"), ("LOCATION", "location"), ("SSN", "ssn"), ("ID", "id"),
    ("NUM", "id"),
)


def kind_for_label(label: str) -> str:
    """The surrogate kind of ``label``: from :data:`LABEL_KINDS`, else guessed from its name, else ``other``."""
    if label in LABEL_KINDS:
        return LABEL_KINDS[label]
    upper = label.upper()
    for known, kind in LABEL_KINDS.items():
        if known.upper() == upper:
            return kind
    parts = [part for part in re.split(r"[^A-Z0-9]+", upper) if part]
    for hint, kind in _LABEL_HINTS:
        if any(part.startswith(hint) for part in parts):
            return kind
    return "other"


# ------------------------------------------------------------------------------------------- vocabulary

_PARTICLES = frozenset("de del la las los y i e da das do dos di du van von der den af le el".split())
_TITLES = frozenset(
    "dr dra drs dras sr sra srta sres sras don dona dna prof profa mr mrs ms miss dott sig herr fru".split()
)
# Words an institution's name keeps (normalised: case-folded, no accents).
_INSTITUTION_WORDS = frozenset(
    """
    hospital hospitales hospitalario hospitalaria complejo clinica clinico clinicas centro centros salud
    universitario universitaria universidad general instituto institut fundacion fundacio servicio servicios
    facultad consultorio consultorios ambulatorio residencia sanatorio policlinica policlinico unidad nacional
    regional provincial comarcal comunitario materno infantil maternoinfantil medico medica medicos atencion
    primaria especializada especialidades urgencias sanitario sanitaria sanitarios area distrito san santa
    santo sant virgen nuestra senora asociacion ciudad laboratorio laboratorios departamento seccion medicina
    odontologia psiquiatrico geriatrico oncologico pediatrico quirurgico cirugia pediatria ginecologia
    obstetricia cardiologia neurologia oftalmologia urologia dermatologia radiologia oncologia psiquiatria
    traumatologia nefrologia hematologia microbiologia anatomia patologica forense mutua consejeria
    conserjeria ministerio colegio oficial sociedad espanola grupo red instituto salud publica cuidados
    paliativos intensivos criticos rehabilitacion mental dia cronicos estancia agudos diagnostico imagen
    ciencias investigacion investigaciones cientificas tecnologia tecnologico biomedica biomedicas biomedico
    farmacia farmaceutico farmaceutica enfermeria veterinaria prevencion riesgos laborales toxicologia
    toxicologico transfusion sanguinea sangre banco tejidos trasplantes organizacion escuela superior sanidad
    consejo penitenciario justicia legal juzgado tribunal guardia civil policia municipal cruz roja
    ayuntamiento diputacion junta gobierno seguridad social emergencias proteccion medicas quirurgica
    medical center centre clinic clinics health healthcare care university memorial community childrens
    children st saint institute department unit service services foundation school college county state
    rehabilitation nursing home practice family associates emergency hospice medicine surgery
    sjukhus sjukhuset universitetssjukhus universitetssjukhuset vardcentral vardcentralen mottagning
    mottagningen avdelning avd klinik kliniken akuten akutmottagning akutmottagningen halsocentral
    halsocentralen lasarett lasarettet lanssjukhus lanssjukhuset centrallasarett centrallasarettet sjukhem
    regionen landsting landstinget kommun vard
    ospedale ospedaliera ospedaliero policlinico azienda locale istituto casa cura presidio unita
    dipartimento reparto fondazione universita asl ausl irccs clinica poliambulatorio
    sa sl slu inc ltd llc co corp ab spa srl gmbh
    """.split()
)
_STREET_WORDS = frozenset(
    """
    calle c cl avda av avd avenida paseo pso po plaza pza pl plazuela ronda carretera ctra crta camino
    travesia trav pasaje pje glorieta urbanizacion urb callejon rambla alameda cuesta via vial bulevar
    boulevard barrio poligono partida apartado correos edificio edif bloque portal escalera esc piso planta
    puerta pta bajo alto izq izda izquierda dcha dcho derecha numero num n no s/n c/ esquina km local apto
    apartamento interior exterior
    street st avenue ave road rd lane ln drive court ct place way suite apt unit floor box po blvd hwy
    highway square sq terrace
    gatan vagen gata vag grand torget torg backen allen stigen platsen lgh
    viale piazza piazzale corso largo vicolo strada contrada localita frazione
    """.split()
) | _PARTICLES
# Generic endings of Swedish compounds ("Storgatan", "Södersjukhuset"): the part before them is replaced.
_SWEDISH_ENDINGS = (
    "universitetssjukhuset", "universitetssjukhus", "sjukhuset", "sjukhus", "lasarettet", "lasarett",
    "vardcentralen", "vardcentral", "kliniken", "mottagningen", "gatan", "vagen", "grand", "torget",
    "backen", "allen", "stigen", "platsen", "gata", "vag",
)
_PUBLIC_MAIL_DOMAINS = frozenset(
    """
    gmail.com googlemail.com hotmail.com hotmail.es hotmail.it hotmail.se hotmail.co.uk outlook.com outlook.es
    live.com live.se msn.com yahoo.com yahoo.es yahoo.it yahoo.se yahoo.co.uk ymail.com icloud.com me.com
    aol.com gmx.com gmx.es protonmail.com telefonica.net terra.es ozu.es wanadoo.es orange.es libero.it
    virgilio.it tiscali.it alice.it telia.com bredband.net
    """.split()
)
_COMMON_SECOND_LEVEL = frozenset("com org net edu gov gob ac co nhs sld".split())
_AGE_UNITS = re.compile(r"(?i)\b(?:mes(?:es)?|semanas?|d[ií]as?|months?|weeks?|days?|m[aå]nader|veckor|"
                        r"dagar|mesi|settimane|giorni|meses)\b")
# Sex words by language: groups of words that say the same sex in the same way.
_SEX_WORDS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "es": (("varón", "hombre", "masculino"), ("mujer", "femenino", "femenina", "hembra"), ("niño", "chico"),
           ("niña", "chica"), ("H", "V"), ("M", "F")),
    "en": (("male", "man"), ("female", "woman"), ("boy",), ("girl",), ("M",), ("F",)),
    "sv": (("man", "manlig"), ("kvinna", "kvinnlig"), ("pojke",), ("flicka",), ("M",), ("K", "F")),
    "it": (("maschio", "uomo", "maschile"), ("femmina", "donna", "femminile"), ("bambino",), ("bambina",),
           ("M",), ("F",)),
}
# Relatives by language: groups of words of the same gender and number.
_RELATIVE_WORDS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "es": (("madre", "tía", "abuela", "hermana", "hija", "esposa", "mujer", "prima", "sobrina", "nieta"),
           ("padre", "tío", "abuelo", "hermano", "hijo", "esposo", "marido", "primo", "sobrino", "nieto"),
           ("padres", "tíos", "abuelos", "hermanos", "hijos", "primos", "sobrinos", "nietos"),
           ("hermanas", "hijas", "tías", "primas", "abuelas", "sobrinas", "nietas"),
           ("familia", "pareja", "familiar", "cónyuge"), ("familiares", "parientes", "allegados"),
           ("materno", "paterno"), ("materna", "paterna"), ("gemelo", "mellizo"), ("gemela", "melliza")),
    "en": (("mother", "aunt", "grandmother", "sister", "daughter", "wife", "niece", "granddaughter"),
           ("father", "uncle", "grandfather", "brother", "son", "husband", "nephew", "grandson"),
           ("parents", "siblings", "children", "grandparents", "cousins", "brothers", "sisters", "sons",
            "daughters"),
           ("family", "partner", "spouse", "relative", "cousin"), ("relatives", "family members"),
           ("maternal", "paternal"), ("twin",)),
    "sv": (("mor", "mamma", "moster", "faster", "syster", "dotter", "fru", "hustru", "mormor", "farmor"),
           ("far", "pappa", "morbror", "farbror", "bror", "son", "make", "morfar", "farfar"),
           ("föräldrar", "syskon", "barn", "barnbarn"), ("familj", "partner", "sambo", "anhörig"),
           ("anhöriga", "släktingar")),
    "it": (("madre", "zia", "nonna", "sorella", "figlia", "moglie", "cugina"),
           ("padre", "zio", "nonno", "fratello", "figlio", "marito", "cugino"),
           ("genitori", "fratelli", "figli", "nonni", "zii", "cugini"),
           ("famiglia", "partner", "coniuge", "familiare"), ("familiari", "parenti")),
}
# Generic words of institutions that may stand for one another, by language: when every word of a name is
# generic ("Facultad de Odontología", "Hospital General Universitario"), its last one becomes another of
# its group ("Facultad de Medicina"), so that the name stays one that notes hold.
_GENERIC_GROUPS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "es": (("medicina", "odontología", "farmacia", "enfermería", "psicología", "veterinaria", "fisioterapia",
            "biología"),
           ("universitario", "general", "provincial", "comarcal", "regional", "central", "militar"),
           ("universitaria", "provincial", "comarcal", "regional", "central", "militar"),
           ("cardiología", "neurología", "oftalmología", "urología", "dermatología", "radiología", "oncología",
            "psiquiatría", "traumatología", "nefrología", "hematología", "microbiología", "pediatría",
            "ginecología", "neumología", "digestivo", "rehabilitación"),
           ("legal", "forense"), ("quirúrgico", "pediátrico", "geriátrico", "psiquiátrico", "oncológico")),
}
# How often a relative word turns up in notes (folded word -> weight; 1 when not named): a relative is
# replaced by another of its group drawn in these proportions, so that "madre" and "padres" stay as common
# among the surrogates as they are in real notes.
_WORD_WEIGHTS: Mapping[str, Mapping[str, int]] = {
    "es": {"madre": 10, "padre": 10, "padres": 10, "familia": 10, "hermano": 6, "hermana": 5, "hermanos": 6,
           "hijo": 6, "hija": 5, "hijos": 6, "hijas": 3, "hermanas": 3, "familiares": 5, "abuela": 2,
           "abuelo": 2, "abuelos": 2, "tia": 2, "tio": 2, "tios": 2, "marido": 2, "esposa": 2, "pareja": 3,
           "paterno": 3, "paterna": 3, "materno": 3, "materna": 3},
    "en": {"mother": 10, "father": 10, "parents": 10, "family": 10, "brother": 6, "sister": 6, "son": 6,
           "daughter": 6, "siblings": 5, "children": 5, "wife": 3, "husband": 3},
}
# Faker has no job lists for these locales.
_PROFESSIONS: Mapping[str, tuple[str, ...]] = {
    "sv": ("sjuksköterska", "lärare", "snickare", "elektriker", "revisor", "kock", "busschaufför", "frisör",
           "ingenjör", "journalist", "bibliotekarie", "målare", "undersköterska", "programmerare", "bonde",
           "städare", "säljare", "polis", "arkitekt", "tandläkare"),
    "it": ("infermiere", "insegnante", "falegname", "elettricista", "ragioniere", "cuoco", "autista",
           "parrucchiere", "ingegnere", "giornalista", "bibliotecario", "imbianchino", "programmatore",
           "agricoltore", "commesso", "poliziotto", "architetto", "dentista", "idraulico", "muratore"),
}
# Words free text keeps: units of time and small numbers say nothing about a person.
_PLAIN_WORDS = frozenset(
    """
    dia dias semana semanas mes meses ano anos hora horas minuto minutos uno una dos tres cuatro cinco seis
    siete ocho nueve diez day days week weeks month months year years hour hours one two three four five six
    seven eight nine ten dag dagar vecka veckor manad manader timme timmar giorno giorni settimana settimane
    mese mesi anno anni ora ore
    """.split()
)
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_ID_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"
_VOWELS = "aeiou"
_CONSONANTS = "bcdfghjklmnprstvz"
_INITIALS = "ABCDEFGHIJLMNOPRSTVZ"

_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*\.?")
_WORD_OR_NUMBER = re.compile(r"(?i:s/n|c/)|[^\W\d_]+(?:['’][^\W\d_]+)*\.?|\d+")
_DIGITS = re.compile(r"\d+")


@lru_cache(maxsize=1 << 16)
def _fold(text: str) -> str:
    """Case-folded, without accents, spaces collapsed: the form values are compared and keyed in."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def _unlike(new: str, old: str) -> bool:
    """``new`` may stand for ``old``: not equal once normalised, and neither holds the other ("A Coruña" /
    "La Coruña", "familia" / "familiar")."""
    a, b = _fold(new), _fold(old)
    return a != b and (min(len(a), len(b)) < 3 or (a not in b and b not in a))


def _with_case(new: str, old: str) -> str:
    """``new`` written in the case of ``old``: UPPER, lower, or as ``new`` is (Capitalised in Faker's lists)."""
    letters = [c for c in old if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return new.upper()
    if letters and all(c.islower() for c in letters):
        return new.lower()
    if letters and letters[0].isupper() and new[:1].islower():
        return new[:1].upper() + new[1:]
    return new


@cache
def _folded_group(group: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_fold(w) for w in group)


@dataclass(frozen=True)
class _Weighted:
    """Names drawn in proportion to their weights."""

    names: tuple[str, ...]
    cumulative: tuple[float, ...]

    @classmethod
    def of(cls, weights: Iterable[tuple[str, float]]) -> _Weighted:
        names, cumulative, total = [], [], 0.0
        for name, weight in weights:
            total += weight
            names.append(name)
            cumulative.append(total)
        return cls(tuple(names), tuple(cumulative))

    def draw(self, rng: random.Random) -> str:
        return rng.choices(self.names, cum_weights=self.cumulative)[0]


@dataclass(frozen=True)
class _WeightedPools:
    """One weighted list, and the same split by the number of words of each name (only the counts that
    hold at least three names, so that a draw of the right length is never nearly fixed)."""

    all: _Weighted
    by_words: Mapping[int, _Weighted]

    @classmethod
    def of(cls, weights: Mapping[str, float]) -> _WeightedPools:
        by_words: dict[int, list[tuple[str, float]]] = {}
        for name, weight in weights.items():
            by_words.setdefault(len(name.split()), []).append((name, weight))
        return cls(_Weighted.of(weights.items()),
                   {n: _Weighted.of(items) for n, items in by_words.items() if len(items) >= 3})


@dataclass(frozen=True)
class _Places:
    cities: _WeightedPools
    regions: _WeightedPools
    region_names: frozenset[str]  # folded; a region named like a municipality ("Madrid") counts as a city
    names: Mapping[str, str]  # every place and country, folded -> "city" or "country" (a city first: Granada)
    longest: int  # words of the longest name


@cache
def _places(language: str) -> _Places | None:
    """The weighted places of ``language`` (Spanish only; other languages draw Faker's cities)."""
    if language != "es":
        return None
    cities = {**place_data.SPANISH_MUNICIPALITIES, **place_data.FOREIGN_CITIES}
    municipalities = {_fold(name) for name in cities}
    names = {_fold(name): "country" for name in countries(LANGUAGES[language])}
    names.update((_fold(name), "city") for name in [*cities, *place_data.SPANISH_REGIONS])
    return _Places(_WeightedPools.of(cities), _WeightedPools.of(place_data.SPANISH_REGIONS),
                   frozenset(_fold(n) for n in place_data.SPANISH_REGIONS) - municipalities,
                   names, max(len(name.split()) for name in names))


def _name_key(name: str) -> str:
    """How a company name is looked up: folded, hyphens as spaces ("Alcon-Cusi" is "Alcon Cusí")."""
    return _fold(name.replace("-", " "))


_COMPANIES = _WeightedPools.of(place_data.COMPANIES)
_COMPANY_KEYS = frozenset(_name_key(name) for name in place_data.COMPANIES)
_COMPANY_LONGEST = max(len(_name_key(name).split()) for name in place_data.COMPANIES)


@cache
def _countries(language: str) -> _WeightedPools:
    """The locale's countries (:func:`countries`), weighted by :data:`place_data.COUNTRY_WEIGHTS`."""
    weights = place_data.COUNTRY_WEIGHTS.get(language, {})
    return _WeightedPools.of({name: weights.get(name, place_data.OTHER_COUNTRY_WEIGHT)
                              for name in countries(LANGUAGES[language])})


_POSTCODE_PROVINCES = _Weighted.of(place_data.SPANISH_POSTCODE_PROVINCES.items())


# ----------------------------------------------------------------------------------------- locale data


class _Locale:
    """Faker's data for one locale: name lists (to recognise and draw names) and a seeded generator."""

    def __init__(self, language: str):
        self.language = language
        self.code = LANGUAGES[language]
        lists = name_lists(self.code)
        self.female_words = frozenset(_fold(n) for n in lists.female_words)
        self.male_words = frozenset(_fold(n) for n in lists.male_words)
        self.last_words = frozenset(_fold(n) for n in lists.last_words)
        unisex = tuple(n for n in lists.female if _fold(n) in {_fold(m) for m in lists.male})
        self.pools: dict[str, tuple[str, ...]] = {
            "female": lists.female, "male": lists.male, "unisex": unisex or lists.female + lists.male,
            "last": lists.last,
        }
        self._faker: Faker | None = None  # made on the first draw: some locales take a second to load
        self._lock = threading.Lock()
        self.street_words = _STREET_WORDS | {_fold(w.rstrip(".")) for w in street_types(self.code)}
        self.has_own_words = language in ("es", "en", "it")  # Faker falls back to Latin for Swedish
        self.has_jobs = language in ("es", "en")

    def draw(self, method: str, seed: int) -> str:
        """``Faker(locale).<method>()`` after seeding, so that a seed always gives the same value."""
        with self._lock:
            if self._faker is None:
                from faker import Faker  # here: the web processes import this module, seldom draw surrogates

                self._faker = Faker(self.code)
            self._faker.seed_instance(seed)
            return str(getattr(self._faker, method)())


@cache
def _locale(language: str) -> _Locale:
    return _Locale(language)


# --------------------------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Surrogate:
    """What replaces a PHI value. ``outcome``: ``replaced``; ``kept`` (by design: an age under the
    bucket, a sex word); ``masked`` (a fallback: the value could not be read)."""

    text: str
    kind: str
    outcome: str = "replaced"


class Surrogates:
    """Surrogate settings of a project: language, secret, scope. Cheap to create; holds no mapping."""

    def __init__(self, *, language: str, secret: bytes, scope: str = "document", age_bucket: int | None = 90,
                 min_shift_days: int = 400, max_shift_days: int = 1460):
        code = language.split("_")[0].split("-")[0].lower()
        if code not in LANGUAGES:
            raise ValueError(f"no surrogates for language {language!r}; choose one of {', '.join(LANGUAGES)}")
        if not isinstance(secret, (bytes, bytearray)) or not secret:
            raise ValueError("the surrogate secret must be non-empty bytes (e.g. 32 bytes from secrets.token_bytes)")
        if scope not in ("document", "project"):
            raise ValueError(f"unknown surrogate scope {scope!r}; choose 'document' or 'project'")
        if not 0 < min_shift_days <= max_shift_days:
            raise ValueError("date shifts need 0 < min_shift_days <= max_shift_days")
        self.language = code
        self.scope = scope
        self.age_bucket = age_bucket
        self.min_shift_days = min_shift_days
        self.max_shift_days = max_shift_days
        self._secret = bytes(secret)

    def _digest(self, *parts: str) -> bytes:
        message = "\x1f".join(parts).encode("utf-8")
        return hmac.new(self._secret, message, hashlib.sha256).digest()

    def date_shift_days(self, key: str) -> int:
        """The shift of the dates of a document or patient ``key``: ±[min_shift_days, max_shift_days], never
        a whole number of years (in months), so that a month or a day and month without a year changes too."""
        rng = random.Random(int.from_bytes(self._digest("date-shift", key), "big"))
        days = 0
        for _ in range(100):  # a whole number of years would leave "marzo" and "17 de marzo" as they were
            days = rng.choice((-1, 1)) * rng.randint(self.min_shift_days, self.max_shift_days)
            if month_shift(days) % 12:
                break
        return days

    def for_document(self, document_key: str, *, patient_key: str | None = None) -> DocumentSurrogates:
        """The surrogates of one document (dates shifted per ``patient_key`` when given, else per document)."""
        return DocumentSurrogates(self, str(document_key), None if patient_key is None else str(patient_key))


class DocumentSurrogates:
    """Surrogates within one document: call :meth:`prepare` with all its PHI, then :meth:`replace` each."""

    def __init__(self, settings: Surrogates, document_key: str, patient_key: str | None):
        self.settings = settings
        self.language = settings.language
        self.document_key = document_key
        self.date_shift_days = settings.date_shift_days(
            f"patient\x1f{patient_key}" if patient_key is not None else f"document\x1f{document_key}"
        )
        self._scope_key = f"document\x1f{document_key}" if settings.scope == "document" else "project"
        self._locale = _locale(self.language)
        self._first_name_guesses: dict[str, str] = {}
        self._document_words: set[str] = set()  # the folded words of the document's PHI (document scope)

    # -- public

    def prepare(self, values: Iterable[tuple[str, str]]) -> None:
        """Learn from the document's PHI ``(value, kind)`` which unknown name words are first names, and
        (document scope) the words a drawn surrogate must not hold."""
        for value, kind in values:
            if self.settings.scope == "document":
                self._document_words.update(
                    folded for folded in (_fold(w.rstrip(".")) for w in _NAME_WORD.findall(value))
                    if len(folded) >= 3 and folded not in _PARTICLES and folded not in _TITLES
                )
            if kind not in _PERSON_KINDS:
                continue
            words = [w.rstrip(".") for w in _NAME_WORD.findall(value)]
            words = [w for w in words if len(w) > 1 and _fold(w) not in _PARTICLES and _fold(w) not in _TITLES]
            for i, word in enumerate(words):
                folded = _fold(word)
                if self._known_name(folded) or kind == "last_name":
                    continue
                if kind == "first_name" or (i == 0 and len(words) >= 2):
                    self._first_name_guesses.setdefault(folded, "female" if folded.endswith("a") else "male")

    def replace(self, value: str, *, label: str | None = None, kind: str | None = None) -> Surrogate:
        """The surrogate of ``value``, a PHI of ``kind`` (or of ``label``, through :func:`kind_for_label`)."""
        if kind is None:
            if label is None:
                raise ValueError("replace() needs a label or a kind")
            kind = kind_for_label(label)
        if kind not in KINDS:
            raise ValueError(f"unknown surrogate kind {kind!r}; choose one of {', '.join(sorted(KINDS))}")
        if not value.strip():
            return Surrogate(value, kind, "kept")
        return _REPLACERS[kind](self, value, kind)

    # -- randomness

    def _rng(self, kind: str, value: str, attempt: int = 0) -> random.Random:
        digest = self.settings._digest(self._scope_key, kind, _fold(value), str(attempt))
        return random.Random(int.from_bytes(digest, "big"))

    def _seed(self, kind: str, value: str, attempt: int) -> int:
        return self._rng(kind, value, attempt).getrandbits(63)

    def _differing(self, value: str, make: Callable[[int], str], attempts: int = 24, *,
                   new_words: bool = False) -> str:
        """The first ``make(attempt)`` unlike ``value`` (:func:`_unlike`) and, with ``new_words``, holding
        no word of the document's PHI (:meth:`_holds_document_word`); else the first one unlike ``value``,
        else the last one."""
        result = value
        unlike = None
        for attempt in range(attempts):
            result = make(attempt)
            if _unlike(result, value):
                if not (new_words and self._holds_document_word(result)):
                    return result
                unlike = unlike if unlike is not None else result
        return unlike if unlike is not None else result

    def _holds_document_word(self, text: str) -> bool:
        """Whether ``text`` holds a word of the document's PHI (see :meth:`prepare`)."""
        return bool(self._document_words) and any(
            _fold(w.rstrip(".")) in self._document_words for w in _NAME_WORD.findall(text))

    # -- names

    def _known_name(self, folded: str) -> bool:
        loc = self._locale
        return folded in loc.female_words or folded in loc.male_words or folded in loc.last_words

    def _name_class(self, folded: str, kind: str) -> str:
        loc = self._locale
        female, male = folded in loc.female_words, folded in loc.male_words
        if female and male:
            return "unisex"
        if female or male:
            return "female" if female else "male"
        if folded in self._first_name_guesses:
            return self._first_name_guesses[folded]
        if kind == "first_name" and folded not in loc.last_words:
            return "female" if folded.endswith("a") else "male"
        return "last"

    def name_word(self, word: str, kind: str = "person") -> str:
        """The surrogate of one word of a name (the same wherever the word is a proper name)."""
        folded = _fold(word)
        pool = self._locale.pools[self._name_class(folded, kind)]
        return _with_case(self._differing(word, lambda attempt: self._rng("name", word, attempt).choice(pool),
                                          new_words=True), word)

    def _initial(self, letter: str) -> str:
        choices = [c for c in _INITIALS if c != letter.upper()]
        new = self._rng("initial", letter).choice(choices)
        return new if letter.isupper() else new.lower()

    def _person(self, value: str, kind: str) -> Surrogate:
        def word(match: re.Match[str]) -> str:
            text = match.group()
            core = text.rstrip(".")
            folded = _fold(core)
            if folded in _PARTICLES or folded in _TITLES:
                return text
            if len(core) == 1:
                return self._initial(core) + text[len(core):]
            return self.name_word(core, kind) + text[len(core):]

        out = _NAME_WORD.sub(word, value)
        out = _DIGITS.sub(lambda m: self._digits(m.group(), "name-number"), out)
        return Surrogate(out, kind)

    # -- shapes

    def _digits(self, digits: str, kind: str) -> str:
        """Digit for digit, the first non-zero when it was."""
        def make(attempt: int) -> str:
            rng = self._rng(kind, digits, attempt)
            out = [str(rng.randrange(10)) for _ in digits]
            if digits[0] != "0":
                out[0] = str(rng.randrange(1, 10))
            return "".join(out)

        return self._differing(digits, make)

    def _shape(self, value: str, kind: str, *, pronounceable: bool = False) -> str:
        """Digit for digit and letter for letter (vowel for vowel when ``pronounceable``), separators kept."""
        def make(attempt: int) -> str:
            rng = self._rng(kind, value, attempt)
            out = []
            previous_digit = False
            for ch in value:
                if ch.isdigit():
                    out.append(str(rng.randrange(1 if ch != "0" and not previous_digit else 0, 10)))
                elif ch.isalpha():
                    if pronounceable:
                        pool = _VOWELS if _fold(ch) in _VOWELS else _CONSONANTS
                    else:
                        pool = _ID_LETTERS
                    new = rng.choice(pool)
                    out.append(new.upper() if ch.isupper() else new.lower())
                else:
                    out.append(ch)
                previous_digit = ch.isdigit()
            return "".join(out)

        return self._differing(value, make)

    def _identifier(self, value: str, kind: str) -> Surrogate:
        stripped = value.strip()
        if re.search(r"[^\W\d_]{3,}", stripped) and (
                not any(c.isdigit() for c in stripped) or re.search(r"[^\W\d_]{4,}", stripped) and " " in stripped):
            return self._other(value, kind)  # words, not an identifier ("lactante", "Residente de 5º año")
        for special in (self._dni, self._nie, self._nuss, self._us_ssn, self._personnummer):
            out = special(value, kind)
            if out is not None:
                return Surrogate(out, kind)
        return Surrogate(self._shape(value, kind), kind)

    def _dni(self, value: str, kind: str) -> str | None:
        m = re.fullmatch(r"(\s*)(\d{8})([ -]?)([A-Za-z])(\s*)", value)
        if m is None:
            return None
        number = self._digits(m.group(2), "dni")
        letter = _DNI_LETTERS[int(number) % 23]
        return m.group(1) + number + m.group(3) + (letter if m.group(4).isupper() else letter.lower()) + m.group(5)

    def _nie(self, value: str, kind: str) -> str | None:
        m = re.fullmatch(r"(\s*)([XYZxyz])([ -]?)(\d{7})([ -]?)([A-Za-z])(\s*)", value)
        if m is None:
            return None
        rng = self._rng("nie", value)
        prefix = rng.choice("XYZ")
        number = self._digits(m.group(4), "nie")
        letter = _DNI_LETTERS[int(str("XYZ".index(prefix)) + number) % 23]
        case = str.upper if m.group(6).isupper() else str.lower
        return (m.group(1) + (prefix if m.group(2).isupper() else prefix.lower()) + m.group(3) + number
                + m.group(5) + case(letter) + m.group(7))

    def _nuss(self, value: str, kind: str) -> str | None:
        """Spanish social-security number: province (2) + number (8) + control (2) = (province·number) mod 97."""
        if self.language != "es" or kind not in ("ssn", "health_plan"):
            return None
        m = re.fullmatch(r"(\s*)(\d{2})([ /-]?)(\d{8})([ /-]?)(\d{2})(\s*)", value)
        if m is None:
            return None
        rng = self._rng("nuss", value)
        province = f"{rng.randint(1, 52):02d}"
        number = self._digits(m.group(4), "nuss")
        control = f"{int(province + number) % 97:02d}"
        return m.group(1) + province + m.group(3) + number + m.group(5) + control + m.group(7)

    def _us_ssn(self, value: str, kind: str) -> str | None:
        if kind != "ssn":
            return None
        m = re.fullmatch(r"(\s*)(\d{3})([ -]?)(\d{2})([ -]?)(\d{4})(\s*)", value)
        if m is None:
            return None

        def make(attempt: int) -> str:
            rng = self._rng("us-ssn", value, attempt)
            area = rng.choice([a for a in range(1, 900) if a != 666])
            return (m.group(1) + f"{area:03d}" + m.group(3) + f"{rng.randint(1, 99):02d}" + m.group(5)
                    + f"{rng.randint(1, 9999):04d}" + m.group(7))

        return self._differing(value, make)

    def _personnummer(self, value: str, kind: str) -> str | None:
        if self.language != "sv":
            return None
        m = re.fullmatch(r"(\s*)(\d{2})?(\d{6})([-+]?)(\d{4})(\s*)", value)
        if m is None:
            return None
        def make(attempt: int) -> str:
            rng = self._rng("personnummer", value, attempt)
            born = dt.date(1920, 1, 1) + dt.timedelta(days=rng.randrange(365 * 95))
            serial = f"{rng.randrange(1000):03d}"
            body = born.strftime("%y%m%d") + serial
            total = 0
            for i, ch in enumerate(body):
                d = int(ch) * (2 if i % 2 == 0 else 1)
                total += d - 9 if d > 9 else d
            check = (10 - total % 10) % 10
            century = born.strftime("%Y")[:2] if m.group(2) else ""
            return m.group(1) + century + born.strftime("%y%m%d") + m.group(4) + serial + str(check) + m.group(6)

        return self._differing(value, make)

    def _phone(self, value: str, kind: str) -> Surrogate:
        m = re.match(r"\s*(?:\+|00)\d{1,3}|\s*\d{2}(?=[ -]+\d)", value)
        digits_total = sum(c.isdigit() for c in value)
        keep_prefix = m is not None and (m.group().lstrip().startswith(("+", "00")) or digits_total >= 11)
        head = m.group() if keep_prefix and m is not None else ""
        rest = value[len(head):]
        first = re.search(r"\d", rest)
        if first is None:
            return Surrogate(self._shape(value, kind), kind)
        keep = rest[: first.end()]
        return Surrogate(head + keep + self._shape(rest[first.end():], kind + head + keep), kind)

    def _postcode(self, value: str, kind: str) -> Surrogate:
        if self.language == "es" and re.fullmatch(r"\s*\d{5}\s*", value):
            def make(attempt: int) -> str:
                rng = self._rng("postcode", value, attempt)
                province = _POSTCODE_PROVINCES.draw(rng)
                # about half of the postcodes notes hold are of a provincial capital (third digit 0)
                local = f"0{rng.randint(1, 60):02d}" if rng.random() < 0.5 else f"{rng.randint(100, 999)}"
                return value.replace(value.strip(), province + local)

            return Surrogate(self._differing(value, make), kind)
        return Surrogate(self._shape(value, kind), kind)

    def _email(self, value: str, kind: str) -> Surrogate:
        if value.count("@") != 1:
            return Surrogate(self._shape(value, kind, pronounceable=True), kind)
        local, domain = value.split("@")
        return Surrogate(self._shape(local, "email-local", pronounceable=True) + "@" + self._domain(domain), kind)

    def _domain(self, domain: str) -> str:
        if _fold(domain) in _PUBLIC_MAIL_DOMAINS or "." not in domain:
            return domain if "." in domain else self._shape(domain, "domain", pronounceable=True)
        labels = domain.split(".")
        out = [
            label if i == len(labels) - 1 or _fold(label) in _COMMON_SECOND_LEVEL or _fold(label) == "www"
            else self._shape(label, "domain", pronounceable=True)
            for i, label in enumerate(labels)
        ]
        return ".".join(out)

    def _url(self, value: str, kind: str) -> Surrogate:
        m = re.fullmatch(r"(?P<scheme>[A-Za-z][\w+.-]*://)?(?P<host>[^/?#:\s]+)(?P<port>:\d+)?(?P<rest>.*)",
                         value, flags=re.DOTALL)
        if m is None:
            return Surrogate(self._shape(value, kind, pronounceable=True), kind)
        rest = m.group("rest")
        rest_out = re.sub(r"[^\W_]+", lambda w: w.group() if _fold(w.group()) in (
            "html", "htm", "php", "asp", "aspx", "pdf", "index", "www") else self._shape(w.group(), "url-path",
                                                                                        pronounceable=True), rest)
        out = (m.group("scheme") or "") + self._domain(m.group("host")) + (m.group("port") or "") + rest_out
        if _fold(out) == _fold(value):  # nothing but kept words: change the shape of the whole
            out = self._shape(value, kind, pronounceable=True)
        return Surrogate(out, kind)

    def _ip(self, value: str, kind: str) -> Surrogate:
        if re.fullmatch(r"\s*\d{1,3}(?:\.\d{1,3}){3}\s*", value):
            def make(attempt: int) -> str:
                rng = self._rng("ip", value, attempt)
                first = rng.choice([n for n in range(11, 224) if n != 127])
                octets = [first, rng.randrange(256), rng.randrange(256), rng.randint(1, 254)]
                return value.replace(value.strip(), ".".join(map(str, octets)))

            return Surrogate(self._differing(value, make), kind)
        if ":" in value:
            def make_v6(attempt: int) -> str:
                rng = self._rng("ipv6", value, attempt)
                return "".join(rng.choice("0123456789abcdef") if c in "0123456789abcdefABCDEF" else c for c in value)

            return Surrogate(self._differing(value, make_v6), kind)
        return Surrogate(self._shape(value, kind), kind)

    def _username(self, value: str, kind: str) -> Surrogate:
        return Surrogate(self._shape(value, kind, pronounceable=True), kind)

    # -- dates, ages, sex, relatives

    def _date(self, value: str, kind: str) -> Surrogate:
        out = shift_date_text(value, self.date_shift_days, self.language)
        if out is None or _fold(out) == _fold(value):
            return Surrogate(mask(value), kind, "masked")
        return Surrogate(out, kind)

    def _age(self, value: str, kind: str) -> Surrogate:
        bucket = self.settings.age_bucket
        m = _DIGITS.search(value)
        if bucket is None or m is None or _AGE_UNITS.search(value) or int(m.group()) < bucket:
            return Surrogate(value, kind, "kept")
        return Surrogate(value[: m.start()] + f"{bucket}+" + value[m.end():], kind)

    def _from_groups(self, word: str, groups: tuple[tuple[str, ...], ...], kind: str) -> str | None:
        """Another word of the group ``word`` belongs to (``word`` if the group has no other), else None."""
        folded = _fold(word)
        for group in groups:
            if folded in _folded_group(group):
                others = [w for w in group if _unlike(w, word)]
                if not others:
                    return word
                weights = _WORD_WEIGHTS.get(self.language, {})
                drawn = self._rng(kind, word).choices(others, [weights.get(_fold(w), 1) for w in others])[0]
                return _with_case(drawn, word)
        return None

    def _sex(self, value: str, kind: str) -> Surrogate:
        folded = _fold(value)
        if any(folded in _folded_group(group) for group in _SEX_WORDS.get(self.language, ())):
            return Surrogate(value, kind, "kept")
        return self._other(value, kind)

    def _relative(self, value: str, kind: str) -> Surrogate:
        return self._other(value, kind)

    # -- places and organisations

    def _draw_like(self, method: str, value: str, kind: str) -> str:
        """A Faker draw of ``method`` unlike ``value`` and holding no word of the document's PHI, with as many
        words as ``value`` if a few draws find one."""
        words = len(value.split())
        best = None
        for attempt in range(12):
            candidate = self._locale.draw(method, self._seed(kind, value, attempt))
            if not _unlike(candidate, value) or self._holds_document_word(candidate):
                continue
            if best is None:
                best = candidate
            if len(candidate.split()) == words:
                best = candidate
                break
        return _with_case(best if best is not None else self._shape(value, kind, pronounceable=True), value)

    def _draw_weighted(self, value: str, kind: str, pools: _WeightedPools) -> str:
        """A draw from ``pools`` unlike ``value`` and holding no word of the document's PHI, from the names
        with as many words as ``value`` when there are a few, else from all."""
        for pool in (pools.by_words.get(len(value.split())), pools.all):
            if pool is None:
                continue
            out = self._differing(value, lambda attempt: pool.draw(self._rng(kind, value, attempt)), new_words=True)
            if _unlike(out, value):
                # an abbreviation ("EE. UU.", "USA") is not a name written in capitals: the name keeps its case
                abbreviation = all(len(re.sub(r"\W", "", w)) <= 3 for w in value.split())
                return out if abbreviation else _with_case(out, value)
        return self._shape(value, kind, pronounceable=True)

    def _city(self, value: str, kind: str) -> Surrogate:
        stripped = value.strip()
        places = _places(self.language)
        if places is None:
            return Surrogate(value.replace(stripped, self._draw_like("city", stripped, "city")), kind)
        pools = places.regions if _fold(stripped) in places.region_names else places.cities
        return Surrogate(value.replace(stripped, self._draw_weighted(stripped, "city", pools)), kind)

    def _state(self, value: str, kind: str) -> Surrogate:
        stripped = value.strip()
        places = _places(self.language)
        if places is None:
            return Surrogate(value.replace(stripped, self._draw_like("state", stripped, "state")), kind)
        return Surrogate(value.replace(stripped, self._draw_weighted(stripped, "state", places.regions)), kind)

    def _country(self, value: str, kind: str) -> Surrogate:
        stripped = value.strip()
        return Surrogate(value.replace(stripped, self._draw_weighted(stripped, "country", _countries(self.language))),
                         kind)

    def _territory(self, value: str, kind: str) -> Surrogate:
        if re.fullmatch(r"[\d\s-]+", value.strip()):
            return self._postcode(value, kind)
        return self._city(value, kind)

    def _location(self, value: str, kind: str) -> Surrogate:
        stripped = value.strip()
        if re.fullmatch(r"[\d\s-]+", stripped):
            return self._postcode(value, kind)
        street_words = self._locale.street_words - _PARTICLES
        if any(c.isdigit() for c in stripped) or any(_fold(w.rstrip(".")) in street_words for w in stripped.split()):
            return self._street(value, kind)
        return self._city(value, kind)

    def _profession(self, value: str, kind: str) -> Surrogate:
        stripped = value.strip()
        if self._locale.has_jobs:
            out = self._draw_like("job", stripped, "profession")
        else:
            pool = _PROFESSIONS[self.language]
            out = _with_case(self._differing(stripped, lambda a: self._rng("profession", stripped, a).choice(pool),
                                             new_words=True), stripped)
        if stripped.islower():
            out = out.lower()
        return Surrogate(value.replace(stripped, out), kind)

    def _name_at(self, value: str, matches: list[re.Match[str]], i: int, keep: frozenset[str],
                 companies: bool) -> tuple[int, str] | None:
        """The place, country or (with ``companies``) company named from word ``i`` of ``value`` on
        ("Hospital de Móstoles", "Avenida de Burgos", "Universidad de Chile", "Laboratorios Alcon-Cusí SA"),
        longest first: the index of its last word and its surrogate — a place's is the same as the place's
        own (a TERRITORIO "Móstoles" of the note gets the same one), a company's another company. None if
        none."""
        if companies:
            for j in range(min(len(matches), i + _COMPANY_LONGEST) - 1, i - 1, -1):
                whole = value[matches[i].start():matches[j].end()]
                name = whole.rstrip(".") if _name_key(whole) not in _COMPANY_KEYS else whole
                if _name_key(name) in _COMPANY_KEYS:
                    return j, self._draw_weighted(name, "company", _COMPANIES) + whole[len(name):]
        places = _places(self.language)
        if places is None:
            return None
        for j in range(min(len(matches), i + places.longest) - 1, i - 1, -1):
            words = [_fold(m.group().rstrip(".")) for m in matches[i:j + 1]]
            if all(w in keep or w in _PARTICLES for w in words):
                continue
            whole = value[matches[i].start():matches[j].end()]
            name = whole.rstrip(".")
            kind = places.names.get(_fold(name))
            if kind is not None:
                surrogate = self._country(name, kind) if kind == "country" else self._city(name, "city")
                return j, surrogate.text + whole[len(name):]
        return None

    def _proper_words(self, value: str, kind: str, keep: frozenset[str], *, companies: bool = False) -> str:
        """Words of a street or institution: generic ones kept, places replaced by places, other proper names,
        numbers and acronyms replaced word by word."""
        matches = list(_WORD_OR_NUMBER.finditer(value))
        replaced: dict[int, str] = {}
        last_of: dict[int, int] = {}  # a place of several words: its first word's index -> its last word's
        skip_to = -1
        for i, m in enumerate(matches):
            if i <= skip_to:
                continue
            word = m.group()
            core = word.rstrip(".")
            folded = _fold(core)
            if (place := self._name_at(value, matches, i, keep, companies)) is not None:
                skip_to, replaced[i] = place
                last_of[i] = skip_to
                continue
            if folded in keep or folded in _TITLES or (len(core) == 1 and core.isalpha()):
                continue
            if core.isdigit():
                replaced[i] = self._digits(core, kind) + word[len(core):]
            elif self.language == "sv" and (ending := next(
                    (e for e in _SWEDISH_ENDINGS if folded.endswith(e) and len(folded) - len(e) >= 3), None)):
                replaced[i] = self._swedish_compound(core, len(core) - len(ending)) + word[len(core):]
            else:
                replaced[i] = self.name_word(core) + word[len(core):]
        if not replaced:  # every word generic: replace the last one that is not a particle
            for i in range(len(matches) - 1, -1, -1):
                core = matches[i].group().rstrip(".")
                if _fold(core) not in _PARTICLES and len(core) > 1:
                    other = self._from_groups(core, _GENERIC_GROUPS.get(self.language, ()), "generic")
                    if other is None or self._holds_document_word(other) or any(
                            not _unlike(other, m.group().rstrip(".")) for m in matches):
                        other = self.name_word(core, "last_name")
                    replaced[i] = other + matches[i].group()[len(core):]
                    break
        out = value
        for i in sorted(replaced, reverse=True):
            out = out[: matches[i].start()] + replaced[i] + out[matches[last_of.get(i, i)].end():]
        return out

    def _swedish_compound(self, word: str, cut: int) -> str:
        prefixes = street_prefixes(self._locale.code) or self._locale.pools["last"]
        head = word[:cut]
        new = self._differing(head, lambda a: self._rng("compound", head, a).choice(prefixes))
        return _with_case(new, head) + word[cut:]

    def _institution(self, value: str, kind: str) -> Surrogate:
        return Surrogate(self._proper_words(value, kind, _INSTITUTION_WORDS | _PARTICLES, companies=True), kind)

    def _street(self, value: str, kind: str) -> Surrogate:
        return Surrogate(self._proper_words(value, "street", self._locale.street_words), kind)

    # -- the rest

    def _other(self, value: str, kind: str) -> Surrogate:
        relatives = _RELATIVE_WORDS.get(self.language, ())
        sexes = _SEX_WORDS.get(self.language, ())

        def word(match: re.Match[str]) -> str:
            text = match.group()
            if text.isdigit():
                return self._digits(text, "other-number")
            core = text.rstrip(".")
            for groups, group_kind in ((relatives, "relative"), (sexes, "sex")):
                out = self._from_groups(core, groups, group_kind)
                if out is not None and _fold(out) != _fold(core):
                    return out + text[len(core):]
            folded = _fold(core)
            if self._known_name(folded):
                return (self.name_word(core) if len(core) > 1 else self._initial(core)) + text[len(core):]
            if len(core) <= 3 or folded in _PLAIN_WORDS:
                return text
            return self._common_word(core) + text[len(core):]

        out = _WORD_OR_NUMBER.sub(word, value)
        if _fold(out) == _fold(value):
            out = self._shape(value, kind, pronounceable=True)
        return Surrogate(out, kind)

    def _common_word(self, word: str) -> str:
        if not self._locale.has_own_words:
            return self._shape(word, "word", pronounceable=True)
        candidate = word
        for attempt in range(16):
            candidate = self._locale.draw("word", self._seed("word", word, attempt))
            if len(candidate) >= 4 and _unlike(candidate, word) and candidate.isalpha():
                break
        return _with_case(candidate, word)


def mask(value: str) -> str:
    """Letters -> ``X``, digits -> ``9``, everything else (spaces, separators) kept."""
    return "".join("X" if c.isalpha() else "9" if c.isdigit() else c for c in value)


_REPLACERS: dict[str, Callable[[DocumentSurrogates, str, str], Surrogate]] = {
    "person": DocumentSurrogates._person,
    "first_name": DocumentSurrogates._person,
    "last_name": DocumentSurrogates._person,
    "age": DocumentSurrogates._age,
    "sex": DocumentSurrogates._sex,
    "relative": DocumentSurrogates._relative,
    "date": DocumentSurrogates._date,
    "profession": DocumentSurrogates._profession,
    "institution": DocumentSurrogates._institution,
    "street": DocumentSurrogates._street,
    "city": DocumentSurrogates._city,
    "state": DocumentSurrogates._state,
    "territory": DocumentSurrogates._territory,
    "location": DocumentSurrogates._location,
    "country": DocumentSurrogates._country,
    "postcode": DocumentSurrogates._postcode,
    "phone": DocumentSurrogates._phone,
    "fax": DocumentSurrogates._phone,
    "email": DocumentSurrogates._email,
    "url": DocumentSurrogates._url,
    "ip": DocumentSurrogates._ip,
    "username": DocumentSurrogates._username,
    "other": DocumentSurrogates._other,
    **{kind: DocumentSurrogates._identifier for kind in _IDENTIFIER_KINDS},
}
assert set(_REPLACERS) == KINDS
