"""PHI label schemas a project can start from. A project keeps its own copy of the labels it uses."""
from __future__ import annotations

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
