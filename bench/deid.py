"""De-identification of MEDDOCAN: residual PHI, surrogate consistency, date intervals, utility and speed.

Reads ``../shared/datasets/meddocan/{train,dev}`` (brat) and prints one JSON line with every figure, the
targets it checks and whether each passed. Measured in one run:

1. **Residual PHI** (dev, gold spans). Each document is concealed with its gold spans under every strategy
   (``--conceal-strategies``, default pseudo, class, mask, remove; the MEDDOCAN default policy with every
   label set to that strategy). The values checked are the distinct gold PHI strings of each document
   (compared case- and accent-insensitively), except

   - values shorter than :data:`MIN_LENGTH` characters (after stripping),
   - eponyms (``deid.core.eponyms``: "síndrome de Down" is not PHI and is left as written),
   - values made only of :data:`GENERIC_WORDS` ("Hospital", "Calle", "Dr.", "Centro de Salud"),
   - values that also occur, as whole words, in the original text outside every gold PHI span (what the
     gold leaves visible cannot be asked of the concealment; counted as ``also_outside_phi``),
   - under pseudo, values the surrogates keep by design (ages under 90, a sex word with no other
     wording: ``Surrogate.outcome == "kept"``; counted as ``kept_by_design``).

   A value is **residual** when it still occurs in the concealed document as a whole word (case- and
   accent-insensitive, runs of whitespace equal) anywhere — a stricter test than "where the gold PHI
   was" — except wholly inside the replacement of another PHI value: there it is a **collision**
   (``surrogate_collisions``, reported, not a target), the surrogate of another value that happens to be
   written like this one ("2001" shifted to "2005" in a note that also has a real "2005", "Femenino" ->
   "Mujer" beside a real "mujer"). Dates keep their intervals and sex and relative words keep their
   meaning, so such collisions are expected there. The words of person names (labels of kind
   ``person``: NOMBRE_SUJETO_ASISTENCIA, NOMBRE_PERSONAL_SANITARIO; eponyms aside) are also checked one by
   one (words of three letters or more, particles, titles and generic words aside, under the same
   exclusions), so that a surname left behind in a replaced full name, or a real name of the note drawn
   as the surrogate of another word of the same name, is caught (``residual_name_words``). Target: 0 of
   each, for every strategy.

   **Repeated values** (the same value and label at least twice in a document): the share whose
   replacements are all the same (case-insensitive), per strategy except remove. Target: 100 %.

   **Date intervals** (pseudo): the gold FECHAS of a document that :func:`read_full_date` reads as a full
   date (day, month and year: ``17/03/2009``, ``17-3-09``, ``2009-03-17``, ``17 de marzo de 2009``); for
   every pair of them the interval in days before and after concealment. Preserved when the two
   replacements are read as dates again and the interval is the same. Target: 100 %.

2. **Utility** (``--strategies``, default pseudo, class, mask): a CRF (``CRFTagger()``, default
   parameters) trained on the concealed export of MEDDOCAN train (concealed text, spans at their new
   offsets) and evaluated on the real dev, against the CRF trained on the original train in the same run;
   entity F1 (exact span and type, ``learning.core.metrics.evaluate``) of each and the difference, with
   the four types whose F1 falls most (weighted by their support: ``largest_losses``). Target
   for pseudo: |Δ| ≤ 0.01 (class and mask are reported, not checked: a tagger trained on "[FECHAS]" or
   "99/99/9999" cannot learn what real PHI looks like).

3. **Speed** (one core, one BLAS thread): dev de-identified end to end with the original-train CRF —
   tokenize, features, tag, conceal under pseudo — against tagging alone (tokenize, features, tag) in the
   same run. Features are extracted afresh in every pass (an empty feature cache); after one untimed
   warm-up pass of each, the two alternate ``--rounds`` times and the fastest pass of each counts.
   Target: end to end / tagging ≤ 1.20. Concealment alone is timed too (``conceal_overhead_ratio``:
   (tagging + concealment) / tagging), since its cost can be smaller than the noise between two passes.

Options: ``--train-limit N`` (first N training documents), ``--strategies`` (utility), ``--no-utility``,
``--no-speed``, ``--rounds``. A quick run: ``--train-limit 50 --strategies pseudo``.
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)  # before bench/, so that ``deid`` is the package and not this file

import argparse  # noqa: E402
import datetime as dt  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

from corpus.text import tokenize  # noqa: E402
from corpus.types import Document, Span  # noqa: E402
from deid.core.conceal import Concealed, Policy, conceal, default_policy  # noqa: E402
from deid.core.eponyms import is_eponym  # noqa: E402
from deid.core.surrogates import Surrogates, kind_for_label  # noqa: E402
from learning.core.features import FeatureCache  # noqa: E402
from learning.core.metrics import evaluate  # noqa: E402
from learning.core.taggers.crf import CRFTagger  # noqa: E402

MEDDOCAN_DIR = Path(REPO_ROOT).parent / "shared" / "datasets" / "meddocan"
PRESET = "MEDDOCAN"
LANGUAGE = "es"
SECRET = b"deidloop-bench-deid"

#: Values shorter than this (stripped) are not checked: "H", "V", "M", "28" say nothing on their own.
MIN_LENGTH = 3
#: Words that a PHI value may hold without being identifying by themselves (folded: lower case, no
#: accents, a final stop dropped). A value made only of these ("Hospital", "Calle", "Dr.", "Centro de
#: Salud", "Servicio de Urgencias") is not checked; a person-name word among them is not checked alone.
GENERIC_WORDS = frozenset(
    """
    hospital hospitales hospitalario hospitalaria universitario universitaria clinico clinica general
    centro salud servicio servicios unidad consulta consultas urgencias planta area departamento instituto
    fundacion residencia ambulatorio consultorio laboratorio complejo comarcal provincial regional
    materno infantil atencion primaria
    calle c/ avenida avda av plaza paseo carretera ctra camino ronda travesia numero piso puerta bajo
    dr dra doctor doctora sr sra srta don dona prof
    de del la las el los y e en san santa santo virgen
    """.split()
)
_NAME_WORD = re.compile(r"[^\W\d_]{3,}")
_WORD = re.compile(r"[^\W_]+(?:/)?")

TARGETS = {"residual_phi": 0, "residual_name_words": 0, "repeated_consistent_share": 1.0,
           "date_intervals_preserved_share": 1.0, "utility_abs_delta_f1_pseudo": 0.01, "speed_overhead_ratio": 1.20}


# ----------------------------------------------------------------------------------------- text helpers

def fold(text: str) -> str:
    """Lower case without accents, one character for each character of ``text`` (offsets stay valid)."""
    out = []
    for c in text:
        base = unicodedata.normalize("NFKD", c)[:1] or c
        lowered = base.lower()
        out.append(lowered if len(lowered) == 1 else base)
    return "".join(out)


def _whole_word_pattern(folded_value: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in folded_value.split())
    return re.compile(rf"(?<!\w){body}(?!\w)")


def _is_generic(value: str) -> bool:
    words = [fold(w).rstrip(".") for w in value.split()]
    return bool(words) and all(w in GENERIC_WORDS or not any(c.isalnum() for c in w) for w in words)


def _outside_phi(pattern: re.Pattern[str], folded_text: str, spans: Sequence[Span]) -> bool:
    """Whether ``pattern`` occurs in the (folded) original text somewhere no gold span covers."""
    return any(not any(s.start <= m.start() and m.end() <= s.end for s in spans)
               for m in pattern.finditer(folded_text))


_MONTHS = {name: i + 1 for i, name in enumerate(
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre".split())}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items())})
_MONTHS.update({"setiembre": 9, "sept": 9, "set": 9})
_NUMERIC_DAY_FIRST = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})")
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_WORDS_DATE = re.compile(r"(\d{1,2})(?:\s+de)?\s+([a-z]+)\.?(?:\s+(?:de|del))?\s+(\d{4})")


def read_full_date(text: str) -> dt.date | None:
    """A Spanish date with day, month and year, read on its own terms (not by ``deid.core.dates``):
    ``17/03/2009``, ``17-3-09``, ``17.03.2009`` (day first), ``2009-03-17``, ``17 de marzo de 2009``,
    ``17 mar 2009``. Two-digit years: 00-30 are 2000-2030, 31-99 are 1931-1999. Else None."""
    value = fold(text.strip())
    day = month = year = None
    if m := _ISO.fullmatch(value):
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif m := _NUMERIC_DAY_FIRST.fullmatch(value):
        day, month, year = int(m.group(1)), int(m.group(3)), m.group(4)
        year = int(year) if len(year) == 4 else (2000 if int(year) <= 30 else 1900) + int(year)
    elif (m := _WORDS_DATE.fullmatch(value)) and m.group(2) in _MONTHS:
        day, month, year = int(m.group(1)), _MONTHS[m.group(2)], int(m.group(3))
    if day is None:
        return None
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


# --------------------------------------------------------------------------------------- measurements

def conceal_document(doc: Document, policy: Policy, settings: Surrogates) -> Concealed:
    return conceal(doc.text, doc.spans, policy, settings.for_document(doc.name))


def concealment_figures(docs: Sequence[Document], strategy: str, settings: Surrogates,
                        preset: str = PRESET, examples: int = 5) -> dict:
    """Residual PHI, repeated values and (under pseudo) date intervals of ``docs`` concealed with their
    gold spans under ``strategy`` (see the module notes for the rules)."""
    policy = default_policy(preset).with_strategy(strategy)
    counts = dict.fromkeys(
        ("values_checked", "residual_phi", "surrogate_collisions", "short", "eponyms", "generic",
         "also_outside_phi", "kept_by_design", "name_words_checked", "residual_name_words", "repeated_values",
         "repeated_consistent",
         "date_pairs", "date_pairs_preserved", "dates_read", "dates_unreadable_after"), 0)
    leaks: list[dict] = []
    for doc in docs:
        concealed = conceal_document(doc, policy, settings)
        folded_text, folded_out = fold(doc.text), fold(concealed.text)
        replaced = [(new, fold(doc.text[origin.start:origin.end]))
                    for origin, new in zip(concealed.origins, concealed.spans, strict=True)]

        def found(pattern: re.Pattern[str]) -> str | None:
            """"residual", "collision" (only inside replacements of other values) or None (absent)."""
            hits = list(pattern.finditer(folded_out))
            if not hits:
                return None
            for m in hits:
                inside = [origin for new, origin in replaced if new.start <= m.start() and m.end() <= new.end]
                if not inside or any(pattern.search(origin) for origin in inside):
                    return "residual"
            return "collision"
        surrogates = settings.for_document(doc.name)
        seen: set[str] = set()
        name_words: set[str] = set()
        for span in doc.spans:
            value = doc.text[span.start:span.end]
            key = " ".join(fold(value).split())
            if kind_for_label(span.label) == "person" and not is_eponym(doc.text, span):
                name_words.update(w for w in (fold(w) for w in _NAME_WORD.findall(value)) if w not in GENERIC_WORDS)
            if key in seen:
                continue
            seen.add(key)
            if len(value.strip()) < MIN_LENGTH:
                counts["short"] += 1
            elif is_eponym(doc.text, span):
                counts["eponyms"] += 1
            elif _is_generic(value):
                counts["generic"] += 1
            else:
                pattern = _whole_word_pattern(key)
                if _outside_phi(pattern, folded_text, doc.spans):
                    counts["also_outside_phi"] += 1
                elif strategy == "pseudo" and surrogates.replace(value, label=span.label).outcome == "kept":
                    counts["kept_by_design"] += 1
                else:
                    counts["values_checked"] += 1
                    outcome = found(pattern)
                    if outcome == "collision":
                        counts["surrogate_collisions"] += 1
                    elif outcome == "residual":
                        counts["residual_phi"] += 1
                        if len(leaks) < examples:
                            leaks.append({"document": doc.name, "label": span.label, "value": value})
        for word in sorted(name_words):
            pattern = _whole_word_pattern(word)
            if _outside_phi(pattern, folded_text, doc.spans):
                continue
            counts["name_words_checked"] += 1
            outcome = found(pattern)
            if outcome == "collision":
                counts["surrogate_collisions"] += 1
            elif outcome == "residual":
                counts["residual_name_words"] += 1
                if len(leaks) < examples:
                    leaks.append({"document": doc.name, "label": "name word", "value": word})

        if strategy == "remove":
            continue
        replacements: dict[tuple[str, str], set[str]] = defaultdict(set)
        mentions: dict[tuple[str, str], int] = defaultdict(int)
        dates: list[tuple[dt.date, dt.date | None]] = []
        for origin, new in zip(concealed.origins, concealed.spans, strict=True):
            original, replacement = doc.text[origin.start:origin.end], concealed.text[new.start:new.end]
            key = (origin.label, " ".join(fold(original).split()))
            replacements[key].add(" ".join(fold(replacement).split()))
            mentions[key] += 1
            if strategy == "pseudo" and kind_for_label(origin.label) == "date":
                before = read_full_date(original)
                if before is not None:
                    after = read_full_date(replacement)
                    dates.append((before, after))
                    counts["dates_read"] += 1
                    counts["dates_unreadable_after"] += after is None
        for key, n in mentions.items():
            if n > 1:
                counts["repeated_values"] += 1
                counts["repeated_consistent"] += len(replacements[key]) == 1
        for (b1, a1), (b2, a2) in itertools.combinations(dates, 2):
            counts["date_pairs"] += 1
            counts["date_pairs_preserved"] += a1 is not None and a2 is not None and (a2 - a1) == (b2 - b1)
    figures: dict = {"strategy": strategy, **counts}
    if strategy != "remove":
        figures["repeated_consistent_share"] = _share(counts["repeated_consistent"], counts["repeated_values"])
    if strategy == "pseudo":
        figures["date_intervals_preserved_share"] = _share(counts["date_pairs_preserved"], counts["date_pairs"])
    figures["leaks"] = leaks
    return figures


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 5) if whole else None


def concealed_corpus(docs: Sequence[Document], strategy: str, settings: Surrogates,
                     preset: str = PRESET) -> list[Document]:
    """The export of ``docs`` under ``strategy``: concealed text and the spans at their new offsets."""
    policy = default_policy(preset).with_strategy(strategy)
    out = []
    for doc in docs:
        concealed = conceal_document(doc, policy, settings)
        out.append(Document(text=concealed.text, spans=concealed.spans, name=doc.name))
    return out


def utility_figures(train: Sequence[Document], dev: Sequence[Document], strategies: Sequence[str],
                    settings: Surrogates, tagger_factory: Callable[[], CRFTagger] = CRFTagger,
                    preset: str = PRESET) -> tuple[dict, CRFTagger]:
    """Entity F1 on the real ``dev`` of a tagger trained on the original ``train`` and of one trained on
    each strategy's export of it; also returns the original-train tagger."""
    def train_and_score(docs: Sequence[Document]) -> tuple[dict, CRFTagger]:
        started = time.perf_counter()
        tagger = tagger_factory().fit(list(docs))
        fitted = time.perf_counter()
        metrics = evaluate(dev, tagger.predict(dev))
        return {"entity_f1": round(metrics["entity"]["f1"], 4), "entity_p": round(metrics["entity"]["p"], 4),
                "entity_r": round(metrics["entity"]["r"], 4), "train_seconds": round(fitted - started, 1),
                "per_type": metrics["per_type"]}, tagger

    reference, tagger = train_and_score(train)
    per_type = reference.pop("per_type")
    figures: dict = {"original": reference}
    for strategy in strategies:
        scores, _ = train_and_score(concealed_corpus(train, strategy, settings, preset))
        scores["delta_f1"] = round(scores["entity_f1"] - reference["entity_f1"], 4)
        # where the difference comes from: the types that lose most F1, weighted by their support
        losses = {label: (scores["per_type"].get(label, {"f1": 0.0})["f1"] - by["f1"]) * by["support"]
                  for label, by in per_type.items()}
        scores["largest_losses"] = {
            label: round(scores["per_type"].get(label, {"f1": 0.0})["f1"] - per_type[label]["f1"], 3)
            for label in sorted(losses, key=losses.get)[:4] if losses[label] < 0}
        del scores["per_type"]
        figures[strategy] = scores
    return figures, tagger


def speed_figures(tagger: CRFTagger, docs: Sequence[Document], settings: Surrogates, rounds: int = 3,
                  preset: str = PRESET) -> dict:
    """Tokens per second of tagging alone and of tagging then concealing under pseudo, and their ratio."""
    policy = default_policy(preset).with_strategy("pseudo")
    n_tokens = sum(len(tokenize(d.text)) for d in docs)

    def tag() -> list[list[Span]]:
        tagger.set_params(feature_cache=FeatureCache())  # features extracted afresh, as for new documents
        return tagger.predict(docs)

    def deidentify() -> list[str]:
        predicted = tag()
        return [conceal(d.text, spans, policy, settings.for_document(d.name)).text
                for d, spans in zip(docs, predicted)]

    predicted = tag()

    def conceal_only() -> list[str]:
        return [conceal(d.text, spans, policy, settings.for_document(d.name)).text
                for d, spans in zip(docs, predicted)]

    timings: dict[str, list[float]] = {"tag": [], "deidentify": [], "conceal": []}
    for timed in (False, *[True] * rounds):
        for name, work in (("tag", tag), ("deidentify", deidentify), ("conceal", conceal_only)):
            started = time.perf_counter()
            work()
            if timed:
                timings[name].append(time.perf_counter() - started)
    tag_s, deid_s, conceal_s = min(timings["tag"]), min(timings["deidentify"]), min(timings["conceal"])
    return {"tokens": n_tokens, "documents": len(docs), "rounds": rounds,
            "tag_seconds": round(tag_s, 6), "deidentify_seconds": round(deid_s, 6),
            "tag_tokens_per_second": round(n_tokens / tag_s), "deidentify_tokens_per_second": round(n_tokens / deid_s),
            "overhead_ratio": round(deid_s / tag_s, 3),
            # concealment timed on its own (the predicted spans of a tagging pass): the overhead without the
            # noise of two tagging passes, which on a shared machine can exceed it
            "conceal_seconds": round(conceal_s, 6), "conceal_overhead_ratio": round((tag_s + conceal_s) / tag_s, 3)}


def checks(result: dict) -> dict:
    """Each target against its figure: True (met), False, or None (not measured in this run)."""
    out: dict = {}
    for strategy, figures in result.get("concealment", {}).items():
        out[f"residual_phi_{strategy}"] = figures["residual_phi"] == TARGETS["residual_phi"]
        out[f"residual_name_words_{strategy}"] = figures["residual_name_words"] == TARGETS["residual_name_words"]
        if "repeated_consistent_share" in figures and figures["repeated_consistent_share"] is not None:
            out[f"repeated_consistent_{strategy}"] = figures["repeated_consistent_share"] >= 1.0
        if figures.get("date_intervals_preserved_share") is not None:
            out["date_intervals_pseudo"] = figures["date_intervals_preserved_share"] >= 1.0
    utility = result.get("utility", {})
    if "pseudo" in utility:
        out["utility_pseudo"] = abs(utility["pseudo"]["delta_f1"]) <= TARGETS["utility_abs_delta_f1_pseudo"]
    if "speed" in result:
        out["speed_overhead"] = max(result["speed"]["overhead_ratio"],
                                    result["speed"]["conceal_overhead_ratio"]) <= TARGETS["speed_overhead_ratio"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-limit", type=int, default=None, help="first N training documents (all)")
    parser.add_argument("--strategies", default="pseudo,class,mask", help="utility: strategies to train on")
    parser.add_argument("--conceal-strategies", default="pseudo,class,mask,remove",
                        help="residual PHI: strategies to check")
    parser.add_argument("--rounds", type=int, default=3, help="speed: timed passes of each")
    parser.add_argument("--no-utility", action="store_true")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()

    from corpus.formats import read_corpus

    if not (MEDDOCAN_DIR / "train").is_dir() or not (MEDDOCAN_DIR / "dev").is_dir():
        print(json.dumps({"benchmark": "deid", "skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    started = time.perf_counter()
    train = sorted(read_corpus(MEDDOCAN_DIR / "train", "brat"), key=lambda d: d.name)[: args.train_limit]
    dev = sorted(read_corpus(MEDDOCAN_DIR / "dev", "brat"), key=lambda d: d.name)
    settings = Surrogates(language=LANGUAGE, secret=SECRET)
    result: dict = {"benchmark": "deid", "corpus": "meddocan", "train_docs": len(train), "dev_docs": len(dev),
                    "dev_spans": sum(len(d.spans) for d in dev), "targets": TARGETS}

    phase = time.perf_counter()
    result["concealment"] = {s: concealment_figures(dev, s, settings) for s in args.conceal_strategies.split(",") if s}
    result["concealment_seconds"] = round(time.perf_counter() - phase, 1)

    tagger = None
    if not args.no_utility:
        phase = time.perf_counter()
        strategies = [s for s in args.strategies.split(",") if s]
        result["utility"], tagger = utility_figures(train, dev, strategies, settings)
        result["utility_seconds"] = round(time.perf_counter() - phase, 1)
    if not args.no_speed:
        if tagger is None:
            tagger = CRFTagger().fit(train)
        try:  # one core: the figure is per core, and the machine is shared
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        except (AttributeError, OSError):
            pass
        result["speed"] = speed_figures(tagger, dev, settings, rounds=args.rounds)
    result["checks"] = checks(result)
    result["all_passed"] = all(v for v in result["checks"].values())
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
