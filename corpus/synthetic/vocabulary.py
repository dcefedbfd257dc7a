"""Word lists the synthetic notes draw from: places, professions, relatives, conditions, drugs.

Constants only. The order of every tuple is part of the output: a seeded ``random.Random`` picks from them by
position, so reordering, adding or removing an item changes the notes every seed gives.
"""
from __future__ import annotations

# --------------------------------------------------------------------------------------------------
# Spanish (MEDDOCAN-style case reports)
# --------------------------------------------------------------------------------------------------

MESES = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
         "noviembre", "diciembre")

# Faker's es_ES "cities" are province names: the two-digit postal prefix of each, and the city a hospital
# of that province is usually named after where the two differ.
PROVINCIAS: dict[str, tuple[str, str]] = {
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

PAISES_ORIGEN = ("Marruecos", "Ecuador", "Colombia", "Rumanía", "Bolivia", "Perú", "Argentina", "Venezuela",
                 "Senegal", "China", "Portugal", "Francia", "Reino Unido", "Ucrania", "República Dominicana",
                 "Paraguay", "Cuba", "Argelia", "Nigeria", "Alemania", "Italia", "Bulgaria", "Pakistán")

PROFESIONES = (
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

ADVOCACIONES = ("Virgen de la Esperanza", "Virgen del Mar", "Nuestra Señora del Prado", "San Rafael",
                "Santa Lucía", "Virgen de los Lirios", "San Juan de la Cruz", "Santa Bárbara",
                "Virgen de la Luz", "Nuestra Señora de la Salud", "San Pedro", "Santa María del Rosell",
                "Virgen de la Concha", "San Agustín", "Santa Teresa", "Virgen de la Vega")

BARRIOS = ("Los Olivos", "La Chopera", "Las Fuentes", "El Ensanche", "Barrio del Carmen", "San Blas",
           "Las Acacias", "La Estación", "El Puerto", "Casco Antiguo", "Los Pinos", "La Alameda",
           "Valdezarza", "San Lorenzo", "La Florida", "El Castillo", "Santa Ana", "Las Delicias", "El Parque",
           "La Paloma", "Los Rosales", "Miraflores", "Vallehermoso", "Huerta del Rey")

SERVICIOS_APOYO = ("Medicina Interna", "Medicina Intensiva", "Cirugía General", "Oncología Médica",
                   "Radiología Intervencionista", "Cirugía Vascular", "Cuidados Paliativos")
SERVICIOS_APOYO_NINO = ("Cuidados Intensivos Pediátricos", "Cirugía Pediátrica", "Cardiología Pediátrica",
                        "Infectología Pediátrica")

# (singular noun, feminine?) — relatives as MEDDOCAN labels them: the noun, without the article.
FAMILIARES_ADULTO = (("madre", True), ("padre", False), ("hermano", False), ("hermana", True),
                     ("hijo", False), ("hija", True), ("abuela materna", True), ("abuelo paterno", False),
                     ("tío materno", False), ("tía paterna", True), ("primo", False), ("sobrina", True))
FAMILIARES_NINO = (("madre", True), ("padre", False), ("hermano", False), ("hermana", True),
                   ("abuela materna", True), ("abuelo paterno", False), ("tío paterno", False))
FAMILIARES_PLURAL = ("padres", "hermanos", "hijos", "familiares")

ANTECEDENTES = ("hipertensión arterial", "diabetes mellitus tipo 2", "dislipemia", "hipotiroidismo",
                "fibrilación auricular paroxística", "enfermedad pulmonar obstructiva crónica",
                "obesidad grado I", "hiperuricemia", "asma bronquial leve", "cardiopatía isquémica",
                "síndrome de apnea obstructiva del sueño", "depresión en tratamiento",
                "artrosis de rodillas", "gastritis crónica", "insuficiencia venosa crónica",
                "hepatitis C tratada", "migraña sin aura", "osteoporosis")
CIRUGIAS = ("apendicectomía", "colecistectomía laparoscópica", "hernia inguinal derecha",
            "amigdalectomía", "cataratas en ambos ojos", "prótesis total de rodilla izquierda",
            "túnel carpiano derecho", "hemorroides", "septoplastia", "meniscectomía artroscópica")
FARMACOS_CRONICOS = ("enalapril 10 mg", "metformina 850 mg", "simvastatina 20 mg", "omeprazol 20 mg",
                     "levotiroxina 50 µg", "amlodipino 5 mg", "bisoprolol 2,5 mg", "lorazepam 1 mg",
                     "paracetamol a demanda", "alopurinol 100 mg", "tiotropio inhalado", "sertralina 50 mg",
                     "hidroclorotiazida 25 mg", "atorvastatina 40 mg", "acenocumarol según pauta")
ENFERMEDADES_FAMILIARES = ("cáncer de colon", "cardiopatía isquémica", "diabetes mellitus",
                           "cáncer de mama", "enfermedad de Alzheimer", "ictus", "insuficiencia renal crónica",
                           "cáncer de pulmón", "epilepsia", "hipercolesterolemia familiar")


# --------------------------------------------------------------------------------------------------
# English (i2b2-2014-style discharge summaries)
# --------------------------------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
COUNTRIES = ("Mexico", "India", "China", "the Philippines", "Vietnam", "Ireland", "Poland", "Brazil",
             "Haiti", "Nigeria", "Italy", "Guatemala", "Korea", "Canada")
PROFESSIONS_EN = ("retired teacher", "truck driver", "nurse", "accountant", "construction worker",
                  "software engineer", "electrician", "retired firefighter", "cashier", "mechanic",
                  "farmer", "lawyer", "bus driver", "chef", "postal worker", "librarian", "plumber",
                  "security guard", "real estate agent", "retired machinist")
PMH_EN = ("hypertension", "type 2 diabetes", "hyperlipidemia", "COPD", "atrial fibrillation",
          "chronic kidney disease", "hypothyroidism", "osteoarthritis", "depression", "gout", "asthma")
HOSPITAL_SUFFIXES = ("Medical Center", "General Hospital", "Memorial Hospital", "Community Hospital",
                     "Regional Medical Center", "University Hospital")
