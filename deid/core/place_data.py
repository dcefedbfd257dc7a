"""Weighted place, country and company lists that surrogates are drawn from (pure data).

A pseudonymised corpus trains taggers only if its surrogates look like the values real notes hold: a
Spanish note names Madrid far more often than Teruel, and Spain far more often than Tuvalu. So places are
drawn in proportion to how often they turn up, approximated by population (municipalities, regions,
postcode provinces) or, for countries, by how often a country is a patient's home or origin in the
language's notes. The figures are rounded and only their ratios matter.

- :data:`SPANISH_MUNICIPALITIES` — the larger Spanish municipalities and a spread of smaller ones (the
  towns hospitals serve), population in thousands; a town with two names in use in Spanish text ("A Coruña"
  and "La Coruña", "Lleida" and "Lérida") has both, its population shared between them.
- :data:`SPANISH_REGIONS` — autonomous communities, and provinces or islands not named after their capital
  (those are in the municipalities), population in thousands. A place value found here is replaced by
  another region.
- :data:`FOREIGN_CITIES` — cities abroad that Spanish notes name (origin of a patient, a referral),
  weighted so that together they are about one place in twenty-five. Names that Spanish notes mostly use
  for something else are left out ("La Paz" is a hospital in Madrid before it is a city in Bolivia).
- :data:`SPANISH_POSTCODE_PROVINCES` — the two-digit province prefix of Spanish postcodes, population in
  thousands.
- :data:`COMPANIES` — pharmaceutical, medical-device and other companies notes name (the maker of a drug, an
  implant, a device), weighted by how often; the same in every language.
- :data:`COUNTRY_WEIGHTS` — per language, the weight of the countries a note most often names; every
  other country of the locale's list weighs :data:`OTHER_COUNTRY_WEIGHT`. Spanish weighs about half of all
  draws for Spain itself, as it is in Spanish notes.
"""
from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "COMPANIES",
    "COUNTRY_WEIGHTS",
    "FOREIGN_CITIES",
    "OTHER_COUNTRY_WEIGHT",
    "SPANISH_MUNICIPALITIES",
    "SPANISH_POSTCODE_PROVINCES",
    "SPANISH_REGIONS",
]

SPANISH_MUNICIPALITIES: Mapping[str, int] = {
    # the fifty largest
    "Madrid": 3300, "Barcelona": 1640, "Valencia": 790, "Sevilla": 685, "Zaragoza": 675, "Málaga": 580,
    "Murcia": 460, "Palma": 250, "Palma de Mallorca": 170, "Las Palmas de Gran Canaria": 380, "Bilbao": 345, "Alicante": 340,
    "Córdoba": 320, "Valladolid": 298, "Vigo": 295, "Gijón": 270, "L'Hospitalet de Llobregat": 265,
    "Vitoria": 180, "Vitoria-Gasteiz": 75, "A Coruña": 150, "La Coruña": 95, "Elche": 235, "Granada": 230, "Terrassa": 223, "Badalona": 220,
    "Oviedo": 218, "Cartagena": 216, "Sabadell": 215, "Jerez de la Frontera": 213, "Móstoles": 210,
    "Santa Cruz de Tenerife": 208, "Pamplona": 203, "Almería": 200, "Alcalá de Henares": 195,
    "Fuenlabrada": 192, "Leganés": 187, "San Sebastián": 187, "Getafe": 185, "Burgos": 174, "Albacete": 173,
    "Santander": 172, "Castellón": 120, "Castellón de la Plana": 52, "Alcorcón": 170, "San Cristóbal de La Laguna": 158,
    "Logroño": 151, "Badajoz": 150, "Marbella": 147, "Salamanca": 144, "Huelva": 143, "Lleida": 80, "Lérida": 60,
    "Tarragona": 136, "Dos Hermanas": 135, "Torrejón de Ardoz": 132,
    # other provincial capitals and large towns
    "Parla": 130, "Mataró": 128, "León": 122, "Algeciras": 122, "Santa Coloma de Gramenet": 120,
    "Alcobendas": 117, "Cádiz": 114, "Jaén": 112, "Ourense": 60, "Orense": 45, "Reus": 104, "Girona": 60, "Gerona": 42, "Telde": 102,
    "Barakaldo": 100, "Roquetas de Mar": 100, "Lugo": 98, "Santiago de Compostela": 97, "Cáceres": 96,
    "Lorca": 95, "Las Rozas de Madrid": 95, "Rivas-Vaciamadrid": 95, "San Fernando": 95,
    "Sant Cugat del Vallès": 92, "San Sebastián de los Reyes": 90, "El Puerto de Santa María": 88,
    "Cornellà de Llobregat": 88, "Pozuelo de Alarcón": 86, "Melilla": 86, "Guadalajara": 85, "Toledo": 85,
    "Mijas": 85, "Chiclana de la Frontera": 85, "El Ejido": 84, "Ceuta": 83, "Talavera de la Reina": 83,
    "Pontevedra": 83, "Torrevieja": 83, "Fuengirola": 83, "Torrent": 83, "Arona": 82, "Vélez-Málaga": 82,
    "Coslada": 81, "Orihuela": 78, "Palencia": 78, "Getxo": 78, "Manresa": 78, "Rubí": 78, "Valdemoro": 77,
    "Avilés": 76, "Alcalá de Guadaíra": 75, "Ciudad Real": 75, "Gandía": 75, "Majadahonda": 72,
    "Molina de Segura": 72, "Paterna": 71, "Benidorm": 70, "Estepona": 70, "Sanlúcar de Barrameda": 69,
    "Benalmádena": 68, "Sagunto": 67, "Castelldefels": 67, "Viladecans": 67, "Vilanova i la Geltrú": 67,
    "Ponferrada": 64, "Ferrol": 64, "Arrecife": 64, "Collado Villalba": 64,
    "La Línea de la Concepción": 63, "Irún": 62, "Granollers": 62, "Zamora": 61, "Aranjuez": 60,
    "Boadilla del Monte": 60, "Mérida": 60, "Alcoy": 59, "Ávila": 58, "Motril": 58, "Linares": 57,
    "Arganda del Rey": 56, "Cuenca": 54, "San Bartolomé de Tirajana": 54, "Huesca": 53, "Pinto": 53,
    "Elda": 52, "Utrera": 52, "Siero": 52, "Segovia": 51, "Calvià": 51, "Torrelavega": 51,
    "Mollet del Vallès": 51, "Ibiza": 50, "Adeje": 49, "Tres Cantos": 48, "Mairena del Aljarafe": 47,
    "Figueres": 47, "Vic": 47, "Puertollano": 46, "Portugalete": 46, "Santurtzi": 45, "Alzira": 45,
    "Manacor": 44, "Alcantarilla": 42, "Antequera": 41, "Puerto del Rosario": 41, "Soria": 40, "Écija": 40,
    "Plasencia": 40, "Basauri": 40, "Igualada": 40, "Langreo": 39, "Narón": 39, "Tudela": 37, "Mieres": 37,
    "Don Benito": 37, "Teruel": 36, "Tomelloso": 36, "Águilas": 36, "Miranda de Ebro": 35, "Yecla": 35,
    "Cieza": 35, "Ronda": 34, "Úbeda": 34, "Inca": 34, "Aranda de Duero": 33, "Hellín": 30,
    "Alcázar de San Juan": 30, "Valdepeñas": 30, "Ciutadella": 30, "Mahón": 29, "Eibar": 27, "Sestao": 27,
    "Villanueva de la Serena": 25, "Villarrobledo": 25, "Calahorra": 24, "Almansa": 24, "Torrelodones": 24,
    "Medina del Campo": 20, "Calatayud": 20, "Lalín": 20, "Benavente": 18, "Monforte de Lemos": 18,
    "Manzanares": 18, "Ejea de los Caballeros": 17, "Barbastro": 17, "Monzón": 17, "La Roda": 16,
    "Alcañiz": 16, "Estella": 14, "Jaca": 13, "Astorga": 11,
}

SPANISH_REGIONS: Mapping[str, int] = {
    "Andalucía": 8500, "Cataluña": 7700, "Comunidad de Madrid": 6750, "Comunidad Valenciana": 5050,
    "Galicia": 2700, "Castilla y León": 2380, "País Vasco": 2210, "Canarias": 2200,
    "Castilla-La Mancha": 2050, "Región de Murcia": 1520, "Aragón": 1330, "Islas Baleares": 1180,
    "Baleares": 600, "Extremadura": 1060, "Asturias": 1010, "Navarra": 660, "Cantabria": 585,
    "La Rioja": 320, "Vizcaya": 1150, "Guipúzcoa": 720, "Álava": 330, "Tenerife": 930, "Gran Canaria": 850,
    "Mallorca": 910, "Menorca": 95, "Lanzarote": 155, "Fuerteventura": 120,
}

FOREIGN_CITIES: Mapping[str, int] = {
    "Buenos Aires": 80, "Ciudad de México": 70, "Bogotá": 70, "Lima": 60, "Caracas": 60, "Quito": 60,
    "La Habana": 50, "Santo Domingo": 50, "Guayaquil": 40, "Medellín": 40, "Santiago de Chile": 40,
    "Montevideo": 30, "Asunción": 30, "Cali": 30, "Lisboa": 40, "París": 50, "Londres": 50,
    "Roma": 30, "Berlín": 20, "Bucarest": 50, "Casablanca": 50, "Tánger": 40, "Rabat": 20, "Nueva York": 30,
    "Miami": 20,
}

SPANISH_POSTCODE_PROVINCES: Mapping[str, int] = {
    "01": 335, "02": 386, "03": 1900, "04": 730, "05": 158, "06": 670, "07": 1180, "08": 5700, "09": 356,
    "10": 390, "11": 1245, "12": 585, "13": 492, "14": 780, "15": 1120, "16": 196, "17": 785, "18": 920,
    "19": 265, "20": 727, "21": 525, "22": 224, "23": 627, "24": 451, "25": 439, "26": 320, "27": 327,
    "28": 6750, "29": 1700, "30": 1520, "31": 660, "32": 306, "33": 1010, "34": 160, "35": 1130, "36": 945,
    "37": 330, "38": 1040, "39": 585, "40": 153, "41": 1950, "42": 89, "43": 820, "44": 134, "45": 700,
    "46": 2590, "47": 520, "48": 1150, "49": 170, "50": 970, "51": 83, "52": 86,
}

#: The weight of a country of the locale's list that :data:`COUNTRY_WEIGHTS` does not name.
OTHER_COUNTRY_WEIGHT = 0.5

COUNTRY_WEIGHTS: Mapping[str, Mapping[str, float]] = {
    "es": {
        "España": 250, "Marruecos": 10, "Rumania": 10, "Colombia": 8, "Ecuador": 8, "Argentina": 8,
        "Venezuela": 6, "Perú": 6, "México": 6, "Francia": 6, "Portugal": 6, "Bolivia": 5, "Reino Unido": 5,
        "Alemania": 5, "Italia": 5, "Cuba": 4, "República Dominicana": 4, "Chile": 4, "Brasil": 4, "China": 4,
        "Estados Unidos": 4, "Paraguay": 3, "Bulgaria": 3, "Ucrania": 3, "Argelia": 3, "Uruguay": 2,
        "Honduras": 2, "Nicaragua": 2, "Guatemala": 2, "Polonia": 2, "Senegal": 2, "Nigeria": 2,
        "Pakistán": 2, "Rusia": 2, "India": 2, "Suiza": 2, "Bélgica": 2, "Países Bajos": 2,
        "Guinea Ecuatorial": 2, "Mali": 1.5, "Costa Rica": 1.5, "El Salvador": 1.5, "Panamá": 1.5,
        "Filipinas": 1.5, "Irlanda": 1.5, "Suecia": 1.5,
    },
    "en": {
        "United States": 250, "Mexico": 10, "Canada": 10, "United Kingdom": 8, "India": 8, "China": 8,
        "Philippines": 6, "Vietnam": 5, "Cuba": 5, "Dominican Republic": 5, "El Salvador": 4, "Guatemala": 4,
        "Haiti": 4, "Jamaica": 4, "Germany": 4, "Ireland": 3, "Italy": 3, "Poland": 3, "Russia": 3,
        "Brazil": 3, "Colombia": 3, "Honduras": 3, "Japan": 2, "France": 2, "Nigeria": 2,
        "Ukraine": 2, "Pakistan": 2, "Iran": 2, "Israel": 2, "Puerto Rico": 2,
    },
}

COMPANIES: Mapping[str, int] = {
    "Pfizer": 10, "Merck": 8, "MSD": 8, "Novartis": 8, "Roche": 8, "Sanofi": 6, "Sanofi Aventis": 3, "Bayer": 6,
    "GlaxoSmithKline": 5, "AstraZeneca": 5, "Lilly": 5, "Boehringer Ingelheim": 4, "Allergan": 5, "Alcon": 5,
    "Alcon Cusí": 3, "Medtronic": 5, "Boston Scientific": 4, "Abbott": 5, "Johnson & Johnson": 4, "Janssen": 3,
    "Siemens": 4, "Philips": 4, "Carl Zeiss": 3, "Zeiss": 2, "Dräger": 2, "B. Braun": 3, "Fresenius": 3,
    "Baxter": 3, "Grifols": 3, "Almirall": 2, "Esteve": 2, "Ferrer": 2, "Bristol-Myers Squibb": 3,
    "Schering-Plough": 2, "Biogen": 2, "Chiesi": 2, "Nestlé": 2, "Septodont": 1, "Dentsply": 2, "Straumann": 2,
    "Bausch & Lomb": 2, "Stryker": 2, "Zimmer": 2, "Smith & Nephew": 2, "Olympus": 2, "GE Healthcare": 2,
    "Coloplast": 1, "Hewlett Packard": 1,
}
