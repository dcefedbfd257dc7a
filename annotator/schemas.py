"""PHI label schemas a project can start from. A project keeps its own copy of the labels it uses."""
from __future__ import annotations

import colorsys
import re

MEDDOCAN = (
    "NOMBRE_SUJETO_ASISTENCIA", "EDAD_SUJETO_ASISTENCIA", "SEXO_SUJETO_ASISTENCIA",
    "FAMILIARES_SUJETO_ASISTENCIA", "NOMBRE_PERSONAL_SANITARIO", "FECHAS", "PROFESION", "HOSPITAL",
    "CENTRO_SALUD", "INSTITUCION", "CALLE", "TERRITORIO", "PAIS", "NUMERO_TELEFONO", "NUMERO_FAX",
    "CORREO_ELECTRONICO", "ID_SUJETO_ASISTENCIA", "ID_CONTACTO_ASISTENCIAL", "ID_ASEGURAMIENTO",
    "ID_TITULACION_PERSONAL_SANITARIO", "ID_EMPLEO_PERSONAL_SANITARIO", "IDENTIF_VEHICULOS_NRSERIE_PLACAS",
    "IDENTIF_DISPOSITIVOS_NRSERIE", "NUMERO_BENEF_PLAN_SALUD", "URL_WEB", "DIREC_PROT_INTERNET",
    "IDENTIF_BIOMETRICOS", "OTRO_NUMERO_IDENTIF", "OTROS_SUJETO_ASISTENCIA",
)

I2B2_2014 = (
    "PATIENT", "DOCTOR", "USERNAME", "PROFESSION", "ROOM", "DEPARTMENT", "HOSPITAL", "ORGANIZATION",
    "STREET", "CITY", "STATE", "COUNTRY", "ZIP", "LOCATION-OTHER", "AGE", "DATE", "PHONE", "FAX", "EMAIL",
    "URL", "SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE", "BIOID", "IDNUM",
)

HIPAA_18 = (
    "NAME", "GEOGRAPHIC_SUBDIVISION", "DATE", "TELEPHONE", "FAX", "EMAIL", "SSN", "MEDICAL_RECORD_NUMBER",
    "HEALTH_PLAN_BENEFICIARY_NUMBER", "ACCOUNT_NUMBER", "CERTIFICATE_LICENSE_NUMBER", "VEHICLE_IDENTIFIER",
    "DEVICE_IDENTIFIER", "URL", "IP_ADDRESS", "BIOMETRIC_IDENTIFIER", "FULL_FACE_PHOTO",
    "OTHER_UNIQUE_IDENTIFIER",
)

STOCKHOLM_EPR = (
    "First_Name", "Last_Name", "Age", "Phone_Number", "Location", "Full_Date", "Date_Part",
    "Health_Care_Unit", "Organization",
)

PRESETS: dict[str, tuple[str, ...]] = {
    "MEDDOCAN": MEDDOCAN,
    "i2b2-2014": I2B2_2014,
    "HIPAA-18": HIPAA_18,
    "Stockholm-EPR": STOCKHOLM_EPR,
}
CUSTOM = "custom"


class UnknownSchemaError(ValueError):
    pass


def preset_labels(name: str) -> list[str]:
    for preset, labels in PRESETS.items():
        if preset.lower() == name.lower():
            return list(labels)
    raise UnknownSchemaError(f"unknown label schema {name!r}; choose one of {', '.join(PRESETS)} or 'custom'")


def canonical_preset_name(name: str) -> str:
    for preset in PRESETS:
        if preset.lower() == name.lower():
            return preset
    if name.lower() == CUSTOM:
        return CUSTOM
    raise UnknownSchemaError(f"unknown label schema {name!r}; choose one of {', '.join(PRESETS)} or 'custom'")


# --- how the workbench shows labels --------------------------------------------------------------------------
# A label's colour is the hue the workbench paints it in (its own lightness keeps the text readable); its key
# labels a selection with one keystroke. A project stores them in Project.label_styles; a label it leaves out
# takes the colour and digit of its position, as the workbench always showed them.

#: Hand-picked hues for the first labels, then the golden angle so any number of labels stay apart.
DEFAULT_HUES = (211, 4, 135, 32, 279, 176, 330, 55, 96, 250)
#: Keys the workbench uses for itself (c: character mode, l: label filter, m: mentions, p: possible missed,
#: x: delete); a label may take any other lowercase letter or a digit.
RESERVED_KEYS = frozenset("clmpx")
LABEL_KEYS = tuple("1234567890") + tuple(key for key in "abcdefghijklmnopqrstuvwxyz" if key not in RESERVED_KEYS)
#: What a label may be called: letters, digits, "_" and "-" (brat and CoNLL take no spaces in a type).
LABEL_NAME = re.compile(r"^[^\W][\w\-]*$")
LABEL_NAME_MAX = 100
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


class LabelError(ValueError):
    """A label, colour or key that cannot be used, or a change of the schema that cannot be made; ``field``
    names the input at fault."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def default_hue(position: int) -> int:
    return DEFAULT_HUES[position] if position < len(DEFAULT_HUES) else round((position * 137.508) % 360)


def hue_colour(hue: float) -> str:
    """The colour the workbench paints a hue in (its label swatch: 90% saturation, 62% lightness)."""
    red, green, blue = colorsys.hls_to_rgb(hue / 360, 0.62, 0.90)
    return "#{:02x}{:02x}{:02x}".format(*(round(channel * 255) for channel in (red, green, blue)))


def colour_hue(colour: str) -> int:
    red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return round(colorsys.rgb_to_hls(red, green, blue)[0] * 360) % 360


def check_colour(colour: str) -> str:
    colour = (colour or "").strip()
    if not _COLOUR.match(colour):
        raise LabelError(f"{colour!r} is not a colour; write it as #rrggbb, e.g. #3f7fd9", field="colour")
    return colour.lower()


def check_key(key: str) -> str:
    """A label's shortcut key, or "" for none."""
    key = (key or "").strip()
    if key and key.lower() in RESERVED_KEYS:
        raise LabelError(f"the workbench uses {key!r} for itself; choose a digit or another letter", field="key")
    if key and key not in LABEL_KEYS:
        raise LabelError(f"{key!r} cannot be a shortcut; use one digit or one lowercase letter", field="key")
    return key


def check_label_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise LabelError("a label needs a name", field="name")
    if len(name) > LABEL_NAME_MAX:
        raise LabelError(f"a label's name has at most {LABEL_NAME_MAX} characters", field="name")
    if not LABEL_NAME.match(name):
        raise LabelError(f"{name!r}: a label's name is letters, digits, '_' and '-' (no spaces)", field="name")
    return name


def label_styles(labels: list[str], stored: dict | None) -> list[dict]:
    """Each label with its colour, hue and key, in the labels' order: the stored ones, else its position's.

    A position's digit goes to the label there unless another label stores that key; the first nine labels
    have digits 1…9 unless the project chose otherwise.
    """
    stored = stored or {}
    taken = {style.get("key") for label, style in stored.items() if label in labels and style.get("key")}
    styles = []
    for position, label in enumerate(labels):
        own = stored.get(label) or {}
        if own.get("colour"):
            colour, hue = own["colour"], colour_hue(own["colour"])
        else:
            hue = default_hue(position)
            colour = hue_colour(hue)
        if "key" in own:
            key = own["key"] or ""
        else:
            digit = str(position + 1) if position < 9 else ""
            key = digit if digit and digit not in taken else ""
        styles.append({"label": label, "colour": colour, "hue": hue, "key": key})
    return styles


def unused_style(labels: list[str], stored: dict | None) -> dict:
    """A colour and key for a label added after ``labels``: the next default colour none of them has, and the
    first key none of them uses."""
    styles = label_styles(labels, stored)
    hues = {style["hue"] for style in styles}
    position = len(labels)
    hue = next((default_hue(i) for i in range(position, position + 360) if default_hue(i) not in hues),
               default_hue(position))
    keys = {style["key"] for style in styles}
    return {"colour": hue_colour(hue), "key": next((key for key in LABEL_KEYS if key not in keys), "")}
