import math

import numpy as np
import pytest
import textstat

from learning.core.stylometry import (
    FEATURE_NAMES,
    UnsupportedLanguageError,
    best_k,
    cluster_documents,
    cluster_features,
    document_features,
    drop_redundant_features,
    dunn_index,
    feature_matrix,
    standardize,
)
from tests.unit.core.meddocan import read_split

# Lists of measurements, one per line, with almost no words — the style of a vital-signs block.
TELEGRAPHIC = [
    "TA 120/80\nFC 72\nSat 98%\nT 36,5",
    "FC 88 lpm\nTA 135/90\nGlu 110",
    "Hb 12,1\nPlaq 250000\nCr 0,9\nNa 140\nK 4,1",
    "TA 110/70\nFC 64\nFR 16",
    "PCR 3,2\nVSG 25\nLeuc 8900",
    "Peso 72 kg\nTalla 170 cm\nIMC 24,9\nTA 125/85",
]
# One long narrative sentence each.
NARRATIVE = [
    "La paciente, una mujer de mediana edad que vivía sola en una casa de campo alejada del pueblo, acudió a "
    "la consulta acompañada por su hermana porque desde hacía varias semanas notaba un cansancio profundo que "
    "le impedía realizar las tareas cotidianas con la soltura de antes.",
    "Durante la entrevista, que se prolongó bastante más de lo habitual porque la enferma quería explicar con "
    "todo detalle cómo habían empezado sus molestias, refirió que el malestar aparecía sobre todo al final de "
    "la tarde y que mejoraba ligeramente después de descansar durante la noche.",
    "Tras valorar cuidadosamente la evolución de los síntomas y revisar los informes que la familia había "
    "traído de otros centros, se decidió mantener una actitud expectante y programar una nueva visita al cabo "
    "de un mes para comprobar si la situación se estabilizaba por sí sola.",
    "El hijo mayor, que trabajaba como maestro en una escuela de la comarca y conocía bien las costumbres de "
    "su madre, explicó que en los últimos tiempos ella había perdido el interés por las actividades que "
    "siempre le habían gustado, como cuidar el huerto o pasear por el camino del río.",
    "A lo largo de los meses siguientes la familia observó una mejoría lenta pero constante, de manera que la "
    "paciente recuperó poco a poco el apetito, volvió a dormir toda la noche sin despertarse y retomó con "
    "ilusión las pequeñas rutinas que daban sentido a sus días.",
    "Como conclusión, se recomendó a la familia que mantuviera un acompañamiento cercano, que favoreciera los "
    "paseos diarios al aire libre y que consultara de nuevo sin demora en caso de que reaparecieran las "
    "molestias o surgiera cualquier otra circunstancia que les preocupara.",
]


# --------------------------------------------------------------------------------------------------
# Features


def test_features_of_a_tiny_english_text_match_the_formulas_by_hand():
    # 6 words, 2 sentences, 5 types ("the" twice), every word one syllable and three letters: 18 letters.
    f = document_features("The cat sat. The dog ran.", "en")
    assert list(f) == list(FEATURE_NAMES)
    assert f["flesch_reading_ease"] == pytest.approx(206.835 - 1.015 * 3 - 84.6 * 1)  # 119.19
    assert f["flesch_kincaid_grade"] == pytest.approx(0.39 * 3 + 11.8 - 15.59)  # -2.62
    assert f["gunning_fog"] == pytest.approx(0.4 * 3)  # no complex word
    assert f["coleman_liau"] == pytest.approx(0.0588 * 300 - 0.296 * 100 * 2 / 6 - 15.8)
    assert f["linsear_write"] == pytest.approx((6 / 2 - 2) / 2)  # 6 easy words over 2 sentences ≤ 20
    assert f["lix"] == pytest.approx(3.0)  # no word longer than six letters
    assert f["forcast"] == pytest.approx(20 - 6 * 150 / 6 / 10)  # 5
    assert f["danielson_bryan"] == pytest.approx(131.059 - 10.364 * 18 / 5 - 0.194 * 18 / 2)
    assert f["dickes_steiwer"] == pytest.approx(235.95993 - 73.021 * 3 - 12.56438 * 3 - 50.03293 * 5 / 6)
    assert f["carroll_cttr"] == pytest.approx(5 / math.sqrt(12))
    assert f["dugast_uber"] == pytest.approx(math.log(6) ** 2 / (math.log(6) - math.log(5)))
    assert f["yule_k"] == pytest.approx(1e4 * ((2**2 + 4) / 36 - 1 / 6))  # 555.6
    # MTLD: the running TTR never falls to 0.72 either way and ends at 5/6, so 6 / ((1 - 5/6) / 0.28).
    assert f["mtld"] == pytest.approx(6 / ((1 - 5 / 6) / 0.28))
    assert f["clinical_term_ratio"] == 0.0


def test_clinical_term_ratio_ignores_case_and_accents_and_takes_a_custom_list():
    text = "Paciente con dolor. Diagnóstico: diabetes."  # 5 words; 4 match the default Spanish stems
    assert document_features(text, "es")["clinical_term_ratio"] == pytest.approx(4 / 5)
    assert document_features(text, "es", clinical_terms=["CON"])["clinical_term_ratio"] == pytest.approx(1 / 5)
    assert document_features(text, "es", clinical_terms=["diagnostico"])["clinical_term_ratio"] == pytest.approx(1 / 5)
    assert document_features(text, "es", clinical_terms=[])["clinical_term_ratio"] == 0.0
    with pytest.raises(ValueError, match="non-empty"):
        document_features(text, "es", clinical_terms=["dolor", " "])


def test_a_line_break_ends_a_sentence():
    # Two lines of two words: 2 words per sentence, no long word, so LIX = 2 (textstat would count one
    # sentence, or none, as it skips sentences of two words or fewer).
    assert document_features("TA 120\nFC 80", "es")["lix"] == pytest.approx(2.0)


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("text", ["", "   \n\t", "... ¿? --", "a", "7", "Sí.", "No no no", "Dr.", "12/03/2020"])
def test_empty_and_very_short_texts_give_finite_features(text, language):
    f = document_features(text, language)
    assert list(f) == list(FEATURE_NAMES)
    assert all(math.isfinite(v) for v in f.values())


def test_a_text_without_words_gives_zeros():
    assert set(document_features("  ...  ", "es").values()) == {0.0}


def test_uber_index_when_every_word_is_distinct_takes_one_repeat():
    # 3 distinct words: log(3)² / (log 3 - log 2), the value for 3 words and 2 types.
    f = document_features("uno dos tres", "es")
    assert f["dugast_uber"] == pytest.approx(math.log(3) ** 2 / math.log(3 / 2))
    assert document_features("uno", "es")["dugast_uber"] == 0.0


def test_feature_matrix_has_one_row_per_text():
    names, matrix = feature_matrix(["", "La paciente refiere dolor.", "TA 120/80"], "es")
    assert names == list(FEATURE_NAMES)
    assert matrix.shape == (3, len(FEATURE_NAMES))
    assert matrix[1].tolist() == list(document_features("La paciente refiere dolor.", "es").values())
    assert feature_matrix([], "en")[1].shape == (0, len(FEATURE_NAMES))


def test_unsupported_language_is_refused():
    with pytest.raises(UnsupportedLanguageError, match="'sv'"):
        document_features("Patienten har ont.", "sv")
    with pytest.raises(UnsupportedLanguageError):
        feature_matrix(["x"], "fr")


def test_textstat_global_language_is_left_alone():
    sample = "Der Patient wurde gestern aufgenommen. Er klagt seit Tagen über starke Schmerzen im Bauch."
    textstat.set_lang("de_DE")
    try:
        before = textstat.flesch_reading_ease(sample)
        document_features("Paciente con dolor abdominal.", "es")
        document_features("The patient reports abdominal pain.", "en")
        # A leaked "es" or "en" would change the constants (German: 180 - ASL - 58.5 ASW).
        assert textstat.flesch_reading_ease(sample) == before
        assert before == pytest.approx(textstat.backend.metrics.flesch_reading_ease(sample, "de_DE"))
    finally:
        textstat.set_lang("en_US")  # textstat's default


# --------------------------------------------------------------------------------------------------
# Redundant features


def test_standardize_gives_z_scores_and_flags_constant_columns():
    z, varying = standardize(np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]]))
    assert varying.tolist() == [True, False]
    assert z[:, 0] == pytest.approx([-math.sqrt(1.5), 0.0, math.sqrt(1.5)])  # population std sqrt(2/3)
    assert z[:, 1].tolist() == [0.0, 0.0, 0.0]


def test_duplicated_constant_and_anticorrelated_columns_are_dropped():
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    e = np.array([2.0, 1.0, 4.0, 3.0, 5.0])  # r(a, e) = 0.8
    matrix = np.column_stack([a, 2 * a + 1, np.full(5, 7.0), -a, e])
    assert drop_redundant_features(matrix, ["a", "b", "c", "d", "e"]) == ["a", "e"]
    # The earlier of a pair stays.
    assert drop_redundant_features(matrix[:, [1, 0]], ["b", "a"]) == ["b"]
    # Below the threshold both stay.
    assert drop_redundant_features(matrix[:, [0, 4]], ["a", "e"], threshold=0.81) == ["a", "e"]
    assert drop_redundant_features(matrix[:, [0, 4]], ["a", "e"], threshold=0.79) == ["a"]


def test_a_column_is_dropped_only_for_a_column_that_stays():
    # Zero-mean orthogonal x, y of equal norm: the correlation of two columns is the cosine of their angle.
    x = np.array([1.0, -1.0, 1.0, -1.0])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    at = lambda degrees: math.cos(math.radians(degrees)) * x + math.sin(math.radians(degrees)) * y  # noqa: E731
    # r(a, b) = cos 17° = 0.956 and r(b, c) = 0.956 drop b; r(a, c) = cos 34° = 0.829 keeps c.
    matrix = np.column_stack([at(0), at(17), at(34)])
    assert drop_redundant_features(matrix, ["a", "b", "c"]) == ["a", "c"]


def test_feature_checks():
    with pytest.raises(ValueError, match="3 columns but 2"):
        drop_redundant_features(np.zeros((4, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="NaN"):
        cluster_features(np.array([[1.0], [np.nan], [2.0]]), ["a"])


# --------------------------------------------------------------------------------------------------
# Dunn index and clustering


def test_dunn_index_by_hand():
    points = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 0.0], [4.0, 3.0]])
    # Diameters 1 and 3; closest points of different clusters (0,0)-(4,0) at 4.
    assert dunn_index(points, [0, 0, 1, 1]) == pytest.approx(4 / 3)
    # {(0,0)} alone, {(0,1), (4,0), (4,3)}: separation 1, diameter |(0,1)-(4,3)| = sqrt(20).
    assert dunn_index(points, [0, 1, 1, 1]) == pytest.approx(1 / math.sqrt(20))
    assert dunn_index(points, [0, 1, 2, 3]) == math.inf  # singletons: no spread inside any cluster
    with pytest.raises(ValueError, match="two clusters"):
        dunn_index(points, [5, 5, 5, 5])


def test_best_k_prefers_fewer_clusters_on_a_tie():
    assert best_k({2: 0.5, 3: 0.9, 4: 0.9}) == 3
    assert best_k({2: 1.0, 3: 1.0 + 1e-13, 4: 0.2}) == 2
    assert best_k({2: 0.1, 3: math.inf, 4: math.inf}) == 3


def test_square_ties_between_two_and_three_clusters_and_takes_two():
    # Corners of a unit square: two opposite sides (separation 1, diameter 1) or one side and two corners
    # (separation 1, diameter 1) both have Dunn index 1.
    square = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    result = cluster_features(square, ["x", "y"])
    assert result.dunn == pytest.approx({2: 1.0, 3: 1.0})
    assert result.k == 2
    for c in range(2):
        a, b = square[result.labels == c]
        assert np.linalg.norm(a - b) == pytest.approx(1.0)


def test_clusters_are_numbered_by_size_with_unstandardised_means():
    a = np.array([10.0, 11.0, 0.0, 1.0, 2.0, 0.5])  # a pair first, then four points near 0
    matrix = np.column_stack([a, 2 * a])  # the second column is redundant
    result = cluster_features(matrix, ["a", "double"])
    assert result.kept_features == ("a",)
    assert result.feature_names == ("a", "double")
    assert result.k == 2
    assert result.labels.tolist() == [1, 1, 0, 0, 0, 0]
    assert result.sizes == [4, 2]
    assert result.cluster_means == pytest.approx(np.array([[0.875, 1.75], [10.5, 21.0]]))
    # k = 2: separation |2 - 10| = 8, largest diameter 2.
    assert result.dunn[2] == pytest.approx(4.0)
    assert set(result.dunn) == {2, 3, 4, 5}
    assert max(result.dunn.values()) == pytest.approx(4.0)
    assert set(cluster_features(matrix, ["a", "double"], k_max=3).dunn) == {2, 3}


@pytest.mark.parametrize("n", [0, 1, 2])
def test_fewer_than_three_documents_form_one_cluster(n):
    result = cluster_features(np.arange(n * 2, dtype=float).reshape(n, 2), ["a", "b"])
    assert result.labels.tolist() == [0] * n
    assert result.k == min(n, 1)
    assert result.dunn == {}
    assert result.cluster_means.shape == (min(n, 1), 2)


def test_identical_documents_form_one_cluster():
    result = cluster_documents(["La paciente refiere dolor."] * 5, "es")
    assert result.k == 1
    assert result.kept_features == ()
    assert result.labels.tolist() == [0] * 5


def test_telegraphic_and_narrative_texts_are_clustered_apart():
    texts = TELEGRAPHIC + NARRATIVE
    group = np.array([0] * len(TELEGRAPHIC) + [1] * len(NARRATIVE))
    two = cluster_documents(texts, "es", k_max=2)
    assert two.labels.tolist() == group.tolist()  # equal sizes: cluster 0 holds document 0
    best = cluster_documents(texts, "es")
    assert best.k >= 2
    for c in range(best.k):
        assert len(set(group[best.labels == c])) == 1, "a cluster mixes the two styles"


def test_clustering_thirty_meddocan_documents():
    docs = read_split("train", limit=30)
    if len(docs) < 30:
        pytest.skip("MEDDOCAN train split not available")
    result = cluster_documents([d.text for d in docs], "es")
    assert result.k >= 1
    assert len(result.labels) == 30
    assert set(result.labels.tolist()) == set(range(result.k))
    assert result.sizes == sorted(result.sizes, reverse=True)
    assert result.cluster_means.shape == (result.k, len(FEATURE_NAMES))
    assert np.isfinite(result.cluster_means).all()
    assert set(result.dunn) == set(range(2, 11))
