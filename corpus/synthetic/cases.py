"""The clinical pictures a synthetic note is built around, with the sentences each adds to the report.

Constants only, plus the frozen record type they are written in. Sentences use ``{slot}`` holes filled by the
composers (``spanish.py``, ``english.py``): a slot is either a numeric range in ``templates.py`` or a
``_s_<slot>`` method of the composer. As in ``vocabulary.py``, the order of cases and sentences is part of
the output for a seed.
"""
from __future__ import annotations

from dataclasses import dataclass

# --------------------------------------------------------------------------------------------------
# Spanish: MEDDOCAN-style case reports
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
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


CASES_ES = (
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
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
    Case(
        servicio="Aparato Digestivo", ages=(30, 85), diagnostico="pancreatitis aguda de origen biliar",
        motivos=("dolor epigástrico intenso irradiado en cinturón",),
        actual=("El dolor comenzó tras una comida copiosa y se acompañaba de vómitos alimentarios.",),
        exploracion=("El abdomen es doloroso a la palpación en el epigastrio, sin signos de irritación peritoneal.",),
        pruebas=("La lipasa sérica se elevó hasta {lipasa} U/l.",
                 "La TC abdominal a las 72 horas mostró un páncreas edematoso sin necrosis."),
        tratamiento=("Se pautó fluidoterapia intensiva, analgesia y reintroducción precoz de la dieta oral.",),
        evolucion=("Se realizó una colecistectomía programada el {fecha_control}.",),
    ),
    Case(
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
    Case(
        servicio="Neurología", ages=(50, 95), diagnostico="ictus isquémico de la arteria cerebral media izquierda",
        motivos=("pérdida de fuerza en el hemicuerpo derecho y dificultad para hablar",),
        actual=("Los síntomas comenzaron de forma brusca, unas {horas} horas antes de su llegada.",),
        exploracion=("Presenta afasia motora y hemiparesia derecha, con una puntuación NIHSS de {nihss}.",),
        pruebas=("La TC craneal urgente no mostró signos de sangrado.",
                 "La angio-TC evidenció una oclusión de la arteria cerebral media izquierda."),
        tratamiento=("Se administró fibrinólisis intravenosa con alteplasa y se realizó trombectomía mecánica con recanalización completa.",),
        evolucion=("Al alta persistía una leve paresia facial, con una puntuación de 1 en la escala de Rankin modificada.",),
    ),
    Case(
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
    Case(
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
    Case(
        servicio="Oftalmología", diagnostico="desprendimiento de retina regmatógeno",
        motivos=("visión de moscas volantes y destellos luminosos", "pérdida de visión en el campo superior del ojo derecho"),
        actual=("Refiere la visión de una sombra en el campo visual superior desde hace {dias} días.",),
        exploracion=("La biomicroscopía del segmento anterior es normal.",),
        pruebas=("La agudeza visual era de {agudeza} en el ojo derecho y de la unidad en el izquierdo.",
                 "En el fondo de ojo se aprecia un desprendimiento de retina inferior con un desgarro en herradura."),
        tratamiento=("Se practicó una vitrectomía posterior vía pars plana con taponamiento con gas el {fecha}.",),
        evolucion=("A los tres meses la agudeza visual había mejorado hasta {agudeza}.",),
    ),
    Case(
        servicio="Oftalmología", ages=(18, 60), diagnostico="uveítis anterior aguda",
        motivos=("dolor ocular, fotofobia y ojo rojo",),
        exploracion=("En la biomicroscopía se observa un Tyndall de dos cruces en cámara anterior y precipitados queráticos finos.",),
        pruebas=("La presión intraocular fue de {pio} mmHg en ambos ojos.", "El HLA-B27 fue positivo."),
        tratamiento=("Se pautaron colirios de dexametasona y ciclopentolato.",),
        evolucion=("Fue remitid{o} a Reumatología para descartar una espondiloartropatía asociada.",),
    ),
    Case(
        servicio="Oftalmología", ages=(50, 90), diagnostico="oclusión de la vena central de la retina",
        motivos=("pérdida brusca e indolora de visión en el ojo izquierdo",),
        pruebas=("La tomografía de coherencia óptica mostró un edema macular quístico.",
                 "La angiografía con fluoresceína confirmó una oclusión de la vena central de la retina."),
        tratamiento=("Se administraron tres inyecciones intravítreas de antiangiogénico con periodicidad mensual.",),
        evolucion=("En la revisión del {fecha_control} el edema macular se había resuelto.",),
    ),
    Case(
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
    Case(
        servicio="Dermatología", diagnostico="psoriasis en placas",
        motivos=("placas eritematodescamativas pruriginosas en codos y rodillas",),
        exploracion=("Presenta placas eritematosas bien delimitadas con descamación nacarada que afectan al {superficie} % de la superficie corporal.",),
        pruebas=("La biopsia cutánea fue compatible con psoriasis.",
                 "El cribado de tuberculosis latente fue negativo."),
        tratamiento=("Se inició tratamiento con metotrexato 15 mg semanales y ácido fólico.",
                     "Ante la respuesta insuficiente se inició un fármaco biológico anti-IL-17."),
        evolucion=("En la revisión del {fecha_control} el índice PASI se había reducido más de un 90 %.",),
    ),
    Case(
        servicio="Traumatología", ages=(65, 98), diagnostico="fractura subcapital de fémur izquierdo",
        motivos=("dolor e impotencia funcional en la cadera izquierda tras una caída casual",),
        actual=("La caída se produjo en su domicilio, sin pérdida de conocimiento.",),
        exploracion=("Presenta acortamiento y rotación externa del miembro inferior izquierdo.",),
        pruebas=("La radiografía mostró una fractura subcapital de fémur izquierdo desplazada.",),
        tratamiento=("Se implantó una artroplastia parcial de cadera el {fecha}.",),
        evolucion=("Inició rehabilitación precoz y deambulaba con andador en el momento del alta.",),
    ),
    Case(
        servicio="Traumatología", ages=(25, 65), diagnostico="hernia discal L5-S1",
        motivos=("dolor lumbar irradiado a la pierna derecha",),
        actual=("El dolor empeora con la sedestación y no cede con los analgésicos habituales.",),
        exploracion=("La maniobra de Lasègue es positiva a 40 grados en la pierna derecha, con hipoestesia en el borde lateral del pie.",),
        pruebas=("La resonancia magnética lumbar evidenció una hernia discal L5-S1 con compresión radicular.",),
        tratamiento=("Se realizó una microdiscectomía el {fecha}, con desaparición del dolor radicular.",),
        evolucion=("Se reincorporó a su trabajo a los tres meses de la intervención.",),
    ),
    Case(
        servicio="Traumatología", ages=(18, 45), diagnostico="rotura del ligamento cruzado anterior",
        motivos=("tumefacción de la rodilla tras un traumatismo deportivo",),
        exploracion=("La prueba de Lachman y el cajón anterior son positivos en la rodilla derecha.",),
        pruebas=("La resonancia de rodilla confirmó una rotura completa del ligamento cruzado anterior.",),
        tratamiento=("Se llevó a cabo una ligamentoplastia con injerto autólogo de isquiotibiales el {fecha}.",),
        evolucion=("A los seis meses había retomado la actividad deportiva.",),
    ),
    Case(
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
    Case(
        servicio="Nefrología", ages=(40, 90), diagnostico="enfermedad renal crónica estadio 5",
        motivos=("astenia, náuseas y disminución de la diuresis",
                 "un deterioro de la función renal detectado en una analítica de rutina"),
        pruebas=("La creatinina sérica era de {creatinina} mg/dl, con un filtrado glomerular estimado de {filtrado} ml/min.",
                 "La ecografía renal mostró riñones de tamaño reducido con mala diferenciación corticomedular."),
        tratamiento=("Se colocó un catéter tunelizado y se inició hemodiálisis el {fecha}.",
                     "Tras un periodo de entrenamiento, se inició diálisis peritoneal continua ambulatoria."),
        evolucion=("Fue incluid{o} en la lista de espera de trasplante renal del {hospital2}.",),
    ),
    Case(
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
    Case(
        servicio="Hematología", ages=(50, 90), diagnostico="mieloma múltiple",
        motivos=("dolor lumbar persistente y astenia",),
        pruebas=("El proteinograma mostró un componente monoclonal IgG kappa.",
                 "El aspirado de médula ósea confirmó la infiltración por células plasmáticas.",
                 "La serie ósea mostró lesiones líticas en el cráneo y en las vértebras lumbares."),
        tratamiento=("Se inició tratamiento con bortezomib, lenalidomida y dexametasona.",
                     "Posteriormente recibió un autotrasplante de progenitores hematopoyéticos."),
        evolucion=("En la revisión del {fecha_control} mantenía una respuesta parcial muy buena.",),
    ),
    Case(
        servicio="Hematología", ages=(18, 80), diagnostico="leucemia mieloide aguda",
        motivos=("hematomas espontáneos y sangrado gingival",),
        exploracion=("Presenta petequias en extremidades inferiores y palidez cutánea.",),
        pruebas=("El hemograma mostró {leucocitos} leucocitos/µl con un {blastos} % de blastos y {plaquetas} plaquetas/µl.",
                 "El estudio de médula ósea confirmó una leucemia mieloide aguda."),
        tratamiento=("Se inició quimioterapia de inducción y se solicitó estudio de donante para trasplante alogénico.",),
        evolucion=("El aspirado medular tras la inducción mostró remisión completa.",),
    ),
    Case(
        servicio="Pediatría", ages=(1, 6), diagnostico="enfermedad de Kawasaki",
        motivos=("fiebre elevada de cinco días de evolución", "un exantema generalizado y conjuntivitis"),
        actual=("Había recibido tratamiento con ibuprofeno sin mejoría.",),
        exploracion=("Presenta labios fisurados, lengua aframbuesada y edema indurado en manos y pies.",),
        pruebas=("En la analítica destacan {leucocitos} leucocitos/µl, una PCR de {pcr} mg/l y trombocitosis.",
                 "La ecocardiografía mostró una dilatación leve de las arterias coronarias."),
        tratamiento=("Se administró gammaglobulina intravenosa y ácido acetilsalicílico a dosis antiinflamatorias.",),
        evolucion=("En el control ecocardiográfico a las ocho semanas las arterias coronarias eran normales.",),
    ),
    Case(
        servicio="Cirugía Pediátrica", ages=(5, 14), diagnostico="apendicitis aguda",
        motivos=("vómitos y dolor abdominal periumbilical",),
        actual=("El dolor se desplazó posteriormente a la fosa iliaca derecha.",),
        exploracion=("El abdomen es doloroso en la fosa iliaca derecha, con signo de Blumberg positivo.",),
        pruebas=("La ecografía abdominal mostró un apéndice engrosado con líquido libre periapendicular.",
                 "En la analítica destacan {leucocitos} leucocitos/µl con neutrofilia."),
        tratamiento=("Se realizó una apendicectomía laparoscópica el {fecha}.",),
        evolucion=("El postoperatorio transcurrió sin incidencias.",),
    ),
    Case(
        servicio="Pediatría", ages=(0, 0), diagnostico="bronquiolitis aguda por virus respiratorio sincitial",
        motivos=("dificultad respiratoria y rechazo de las tomas",),
        actual=("Presentaba rinorrea y tos desde hacía {dias} días.",),
        exploracion=("Presenta tiraje subcostal y sibilancias espiratorias bilaterales.",),
        pruebas=("El test rápido para virus respiratorio sincitial en aspirado nasofaríngeo fue positivo.",),
        tratamiento=("Precisó oxigenoterapia de alto flujo durante tres días y alimentación por sonda nasogástrica.",),
        evolucion=("Fue dad{o} de alta con buena tolerancia oral y sin necesidad de oxígeno.",),
    ),
    Case(
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
    Case(
        servicio="Ginecología", sexes="M", ages=(35, 55), diagnostico="mioma uterino submucoso",
        motivos=("sangrado menstrual abundante y anemia",),
        pruebas=("La hemoglobina era de {hemoglobina} g/dl con ferropenia.",
                 "La ecografía transvaginal mostró un mioma submucoso de {tam} cm."),
        tratamiento=("Se realizó una miomectomía histeroscópica el {fecha}.",),
        evolucion=("En la revisión del {fecha_control} refería reglas de cantidad normal.",),
    ),
    Case(
        servicio="Enfermedades Infecciosas", ages=(20, 75), diagnostico="brucelosis",
        motivos=("fiebre ondulante y artralgias de tres semanas de evolución",),
        actual=("Refiere contacto habitual con ganado ovino y consumo de queso fresco sin control sanitario.",),
        exploracion=("Se palpa una hepatoesplenomegalia moderada.",),
        pruebas=("La serología frente a Brucella fue positiva a título elevado.",
                 "Los hemocultivos aislaron Brucella melitensis."),
        tratamiento=("Se trató con doxiciclina y estreptomicina con buena respuesta clínica.",),
        evolucion=("Las serologías de control del {fecha_control} mostraron un descenso progresivo de los títulos.",),
    ),
    Case(
        servicio="Enfermedades Infecciosas", ages=(30, 90), diagnostico="endocarditis infecciosa sobre válvula nativa",
        motivos=("fiebre y un soplo cardiaco de nueva aparición",),
        actual=("Hace {semanas} semanas se le realizó una extracción dentaria sin profilaxis antibiótica.",),
        exploracion=("Se ausculta un soplo holosistólico en el foco mitral y presenta lesiones de Janeway en las palmas.",),
        pruebas=("Los hemocultivos fueron positivos para Staphylococcus aureus sensible a meticilina.",
                 "El ecocardiograma transesofágico mostró una vegetación de {tam_mm} mm en la válvula mitral."),
        tratamiento=("Se inició tratamiento con cloxacilina intravenosa durante seis semanas.",),
        evolucion=("Los hemocultivos de control fueron negativos a partir del tercer día de tratamiento.",),
    ),
    Case(
        servicio="Endocrinología", ages=(20, 70), diagnostico="enfermedad de Graves-Basedow",
        motivos=("palpitaciones, temblor y pérdida de peso",),
        actual=("En los últimos {meses} meses ha perdido {kilos} kg a pesar de mantener el apetito.",),
        exploracion=("Se palpa un bocio difuso grado II, sin nódulos, y presenta un temblor fino distal.",),
        pruebas=("La TSH estaba suprimida, con una T4 libre de {t4} ng/dl.",
                 "Los anticuerpos antirreceptor de TSH fueron positivos."),
        tratamiento=("Se inició tratamiento con metimazol y propranolol.",),
        evolucion=("En la revisión del {fecha_control} se encontraba eutiroide y asintomátic{o}.",),
    ),
    Case(
        servicio="Endocrinología", ages=(25, 75), diagnostico="feocromocitoma",
        motivos=("crisis de cefalea, sudoración y palpitaciones",),
        exploracion=("La tensión arterial en consulta era de {ta_sistolica}/{ta_diastolica} mmHg.",),
        pruebas=("Las metanefrinas en orina de 24 horas estaban muy elevadas.",
                 "La TC abdominal mostró una masa suprarrenal derecha de {tam} cm."),
        tratamiento=("Tras el bloqueo alfa con doxazosina, se realizó una adrenalectomía laparoscópica el {fecha}.",),
        evolucion=("Las metanefrinas de control fueron normales y no precisó tratamiento antihipertensivo.",),
    ),
    Case(
        servicio="Endocrinología", ages=(16, 40), diagnostico="diabetes mellitus tipo 1 de reciente diagnóstico",
        motivos=("poliuria, polidipsia y pérdida de peso",),
        pruebas=("La glucemia al ingreso era de {glucemia} mg/dl, con una hemoglobina glucosilada del {hba1c} %.",
                 "La gasometría venosa mostró una cetoacidosis leve."),
        tratamiento=("Se inició insulinoterapia en pauta bolo-basal y educación diabetológica.",),
        evolucion=("En la revisión del {fecha_control} la hemoglobina glucosilada había descendido al 7 %.",),
    ),
)


# --------------------------------------------------------------------------------------------------
# English: i2b2-2014-style discharge summaries
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseEn:
    reason: tuple[str, ...]
    history: tuple[str, ...]
    course: tuple[str, ...]


CASES_EN = (
    CaseEn(
        reason=("chest pain radiating to the left arm", "substernal chest pressure with diaphoresis"),
        history=("The pain started at rest and lasted about {minutes} minutes.",
                 "An ECG showed ST depressions in the lateral leads and the troponin peaked at {troponin} ng/mL."),
        course=("{He} underwent cardiac catheterization on {date}, which showed a 90% stenosis of the LAD treated with a drug-eluting stent.",
                "{He} was started on aspirin, ticagrelor, metoprolol and high-intensity atorvastatin."),
    ),
    CaseEn(
        reason=("fever and productive cough", "shortness of breath and pleuritic chest pain"),
        history=("{He} reports {days} days of cough with green sputum and subjective fevers.",
                 "Chest X-ray showed a right lower lobe consolidation."),
        course=("{He} was treated with ceftriaxone and azithromycin with steady improvement.",
                "Oxygen was weaned to room air by {date}."),
    ),
    CaseEn(
        reason=("nausea, vomiting and abdominal pain", "polyuria, polydipsia and weight loss"),
        history=("Glucose on arrival was {glucose} mg/dL with an anion gap of {gap}.",
                 "{He} had run out of insulin about {days} days before admission."),
        course=("{He} was admitted to the ICU for an insulin drip, which was transitioned to subcutaneous insulin on {date}.",
                "Diabetes education was provided and {he} demonstrated correct insulin technique."),
    ),
    CaseEn(
        reason=("a fall at home with right hip pain", "inability to bear weight after a fall"),
        history=("{He} tripped over a rug and was unable to get up.",
                 "X-rays demonstrated a displaced right femoral neck fracture."),
        course=("Orthopedics performed a right hip hemiarthroplasty on {date} without complications.",
                "{He} worked with physical therapy and was walking with a walker at discharge."),
    ),
    CaseEn(
        reason=("black tarry stools and lightheadedness", "coffee-ground emesis"),
        history=("Hemoglobin on arrival was {hemoglobin} g/dL.", "{He} takes ibuprofen daily for back pain."),
        course=("EGD on {date} showed a clean-based duodenal ulcer.",
                "{He} received two units of packed red blood cells and was started on pantoprazole."),
    ),
    CaseEn(
        reason=("worsening leg swelling and dyspnea on exertion", "orthopnea and weight gain"),
        history=("{His} weight is up {pounds} pounds over two weeks.",
                 "Echocardiogram showed an ejection fraction of {ef}%."),
        course=("{He} was diuresed with IV furosemide, with a net negative balance of several liters.",
                "Lisinopril and carvedilol were titrated before discharge."),
    ),
)
