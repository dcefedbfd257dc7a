"""Sentence templates of the synthetic notes, the numeric ranges their number slots draw from, section titles.

Constants only. ``{slot}`` holes are filled by the composers (``spanish.py``, ``english.py``); a slot named in
``ES_NUMBERS``/``EN_NUMBERS`` becomes a number drawn from ``(low, high, decimals)``, any other slot calls the
composer's ``_s_<slot>`` method. A template with an unknown slot fails at import, not mid-note. The order of
every tuple is part of the output for a seed.
"""
from __future__ import annotations

# --------------------------------------------------------------------------------------------------
# Spanish: MEDDOCAN-style case reports
# --------------------------------------------------------------------------------------------------

ES_NUMBERS: dict[str, tuple[float, float, int]] = {
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

ES_OPENINGS_ADULT = (
    "{Sexo} de {edad} de edad, {profesion}, sin alergias medicamentosas conocidas, que consulta por {motivo}.",
    "Se trata de {un} {sexo} de {edad}, natural de {lugar_origen}, que acude al Servicio de Urgencias del {hospital} por {motivo}.",
    "Paciente de {edad}, {profesion}, remitid{o} desde {el_centro_salud} por {motivo}.",
    "{Paciente}, {sexo} de {edad}, ingresa el {fecha_ingreso} en el Servicio de {servicio} por {motivo}.",
    "Presentamos el caso de {un} {sexo} de {edad} que es derivad{o} a la consulta de {servicio} del {hospital} por {motivo}.",
    "{Sexo} de {edad} que trabaja como {profesion} y acude a su médico de atención primaria por {motivo}.",
    "{Paciente} es {un} {sexo} de {edad} de edad, {profesion} de profesión, que consulta el {fecha_ingreso} por {motivo}.",
)
ES_OPENINGS_CHILD = (
    "{Sexo} de {edad} que acude a Urgencias de Pediatría del {hospital} acompañad{o} de {su_progenitor} por {motivo}.",
    "Presentamos el caso de {un} {sexo} de {edad}, sin antecedentes de interés, remitid{o} por su pediatra del {centro_salud} por {motivo}.",
    "{Paciente}, {sexo} de {edad}, es traíd{o} por {su_familiar_plural} al Servicio de Urgencias el {fecha_ingreso} por {motivo}.",
)
ES_ANTECEDENTES_ADULT = (
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
ES_HABITOS = (
    "Fumador{a} de {cigarrillos} cigarrillos al día desde los {edad_joven}.",
    "Exfumador{a} desde {fecha_previa}; no refiere consumo de alcohol.",
    "No refiere hábitos tóxicos.",
    "Bebedor{a} de unos {unidades} gramos de alcohol al día; no fuma.",
)
ES_ANTECEDENTES_FAMILIARES = (
    "Antecedentes familiares: {familiar} con {enfermedad_familiar} y {familiar} con {enfermedad_familiar}.",
    "Refiere que {su_familiar} falleció por {enfermedad_familiar}.",
    "No hay antecedentes familiares de interés.",
    "Entre sus antecedentes familiares destaca que {su_familiar} padece {enfermedad_familiar}.",
)
ES_ANTECEDENTES_CHILD = (
    "Embarazo controlado y parto eutócico a término, con un peso al nacimiento de {peso_nacer} g.",
    "Vacunación correcta según el calendario vigente.",
    "Sin alergias medicamentosas conocidas.",
    "Como antecedentes familiares, {su_familiar} padece {enfermedad_familiar}.",
    "Refiere que {un_familiar} presentó un cuadro similar en {fecha_previa}.",
    "Vive con {su_familiar_plural} en {ciudad}.",
)
ES_ACTUAL = (
    "El {fecha_ingreso} acude a Urgencias por empeoramiento de los síntomas.",
    "No refiere contacto con personas enfermas en su entorno.",
    "Había sido valorad{o} días antes en {el_centro_salud}, donde se pautó tratamiento sintomático sin mejoría.",
    "{Su_familiar} refiere que en los días previos se encontraba más decaíd{o} de lo habitual.",
    "Niega traumatismos previos o viajes recientes al extranjero.",
)
ES_EXPLORACION = (
    "A su llegada presenta una tensión arterial de {ta_sistolica}/{ta_diastolica} mmHg, frecuencia cardiaca de {fc} lpm, temperatura de {temperatura} ºC y saturación de oxígeno del {saturacion} %.",
    "Buen estado general, consciente y orientad{o}, normocoloread{o} y normohidratad{o}.",
    "La auscultación cardiopulmonar es rítmica, sin soplos, con murmullo vesicular conservado.",
    "Abdomen blando y depresible, sin masas ni megalias palpables.",
    "Sin edemas en miembros inferiores y con pulsos distales presentes y simétricos.",
)
ES_EXPLORACION_NINO = (
    "A su llegada presenta una frecuencia cardiaca de {fc_nino} lpm, temperatura de {temperatura} ºC y saturación de oxígeno del {saturacion} %.",
    "Aceptable estado general, bien hidratad{o} y perfundid{o}.",
    "La otoscopia y la orofaringe no muestran alteraciones.",
    "El peso y la talla se encuentran en percentiles adecuados para su edad.",
)
ES_PRUEBAS_NINO = (
    "La bioquímica básica fue normal.",
    "El sedimento de orina fue normal.",
    "La radiografía de tórax no mostró alteraciones significativas.",
)
ES_PRUEBAS = (
    "En la analítica de ingreso destacan una hemoglobina de {hemoglobina} g/dl, {leucocitos} leucocitos/µl y una PCR de {pcr} mg/l.",
    "La bioquímica mostró función renal y perfil hepático dentro de la normalidad.",
    "El estudio de coagulación fue normal.",
    "La radiografía de tórax no mostró alteraciones significativas.",
    "Las serologías de virus hepatotropos y VIH fueron negativas.",
)
ES_TRATAMIENTO_HEAD = (
    "Con el diagnóstico de {diagnostico}, se decide su ingreso a cargo del Servicio de {servicio}.",
    "Se establece el diagnóstico de {diagnostico}.",
    "Ante la sospecha de {diagnostico}, {el_dr_medico} decide su ingreso para estudio.",
)
ES_TRATAMIENTO = (
    "El caso se comentó en el comité multidisciplinar del {hospital} el {fecha}.",
    "Se traslada al {hospital2} para valoración por el Servicio de {servicio_apoyo}, donde {lo} atiende {el_dr_otro}.",
    "Se informa a {su_familiar} de la situación clínica y se obtiene el consentimiento informado.",
    "Se remitieron muestras {a_laboratorio} para completar el estudio.",
)
ES_EVOLUCION_HEAD = (
    "La evolución fue favorable y {el} paciente fue dad{o} de alta el {fecha}.",
    "Tras {dias} días de ingreso, {paciente} fue dad{o} de alta con tratamiento domiciliario.",
    "Durante el ingreso no presentó complicaciones.",
)
ES_EVOLUCION = (
    "En la revisión realizada el {fecha_control}, {paciente} se encuentra asintomátic{o}.",
    "Actualmente sigue controles periódicos en las consultas externas del {hospital} y en {el_centro_salud}.",
    "Se remite {al_dr_medico} para seguimiento en consultas.",
    "El caso se notificó {a_autoridad}.",
    "Tras {meses} meses de seguimiento no ha presentado nuevos episodios.",
    "{Paciente} se encuentra bien y sin secuelas.",
    "Para cualquier consulta, la unidad puede contactarse en el teléfono {telefono}.",
)
ES_SECTION_TITLES = (
    ("Motivo de ingreso", "Motivo de consulta"),
    ("Antecedentes personales", "Antecedentes"),
    ("Enfermedad actual", "Historia actual"),
    ("Exploración física", "Exploración"),
    ("Pruebas complementarias", "Exploraciones complementarias"),
    ("Diagnóstico y tratamiento", "Juicio clínico y tratamiento"),
    ("Evolución", "Evolución y comentarios"),
)

# Institutions a note sends samples to or notifies: (article, name pattern); a pattern may use {city} (the
# hospital's city), {province} (the patient's province) and {surname} (a Faker surname).
ES_LABORATORIOS = (
    ("al ", "Instituto de Investigación Sanitaria de {city}"),
    ("a la ", "Facultad de Medicina de {city}"),
    ("al laboratorio de referencia de la ", "Universidad de {city}"),
    ("a la ", "Fundación {surname} de Investigación Biomédica"),
    ("al ", "Centro de Transfusión de {province}"),
)
ES_AUTORIDADES = (
    ("al ", "Sistema Español de Farmacovigilancia"),
    ("a la ", "Delegación Territorial de Sanidad de {province}"),
    ("al ", "Registro de Tumores de {province}"),
    ("a la ", "Red de Vigilancia Epidemiológica de {province}"),
    ("al ", "Instituto de Medicina Legal de {province}"),
)


# --------------------------------------------------------------------------------------------------
# English: i2b2-2014-style discharge summaries
# --------------------------------------------------------------------------------------------------

EN_NUMBERS: dict[str, tuple[float, float, int]] = {
    "minutes": (20, 90, 0), "troponin": (0.1, 12.0, 2), "days": (2, 10, 0), "glucose": (350, 900, 0),
    "gap": (18, 32, 0), "hemoglobin": (5.5, 9.5, 1), "pounds": (5, 20, 0), "ef": (20, 45, 0),
}

EN_OPENINGS = (
    "{Patient} is a {age} year old {profession} who presents with {reason}.",
    "{Patient} is a {age}-year-old {sex} with a history of {pmh} who presented to the {hospital} emergency department on {admission} with {reason}.",
    "This is a {age} y/o {sex}, originally from {country}, who was referred by {doctor2} for {reason}.",
)
EN_HISTORY = (
    "Past medical history is notable for {pmh} and {pmh}.",
    "{He} lives in {city} with {his} family and works for {organization}.",
    "{He} quit smoking in {year}.",
    "{His} last admission was at {hospital2} in {month_year} for {pmh}.",
    "Primary care is with {doctor2} in {city}.",
)
EN_COURSE = (
    "{Patient} was seen by {doctor2} from cardiology on {date}.",
    "{He} remained hemodynamically stable throughout the admission.",
    "Case management arranged home services through {organization}.",
)
EN_DISPOSITION = (
    "{He} was discharged home on {date} in stable condition.",
    "{Patient} will follow up with {doctor2} on {date}.",
    "Please call {phone} with any questions.",
)
