"""Merging several annotators' spans for adjudication: agreed spans, majority votes, conflicts, resolution."""
from __future__ import annotations

import pytest

from corpus.adjudication import Conflict, agreed_spans, conflicts, majority_spans, resolve
from corpus.types import Span

NAME, CITY, DATE = Span(0, 8, "NAME"), Span(17, 23, "CITY"), Span(30, 40, "DATE")
SHORT_NAME = Span(0, 3, "NAME")


def test_agreed_spans_are_those_everybody_marked():
    assert agreed_spans({"a": [NAME, CITY], "b": [SHORT_NAME, CITY]}) == [CITY]
    assert agreed_spans({"a": [NAME, NAME], "b": [NAME]}) == [NAME]  # a repeat is one vote
    assert agreed_spans({"a": [], "b": []}) == []


def test_a_majority_decides_unless_a_vote_is_tied():
    three = {"a": [NAME, CITY], "b": [NAME], "c": [SHORT_NAME, CITY]}
    assert majority_spans(three) == [NAME, CITY]  # NAME 2 of 3, CITY 2 of 3, SHORT_NAME 1 of 3
    assert majority_spans({"a": [NAME], "b": [SHORT_NAME]}) is None  # two annotators: 1 of 2 is a tie
    assert majority_spans({"a": [NAME], "b": [NAME]}) == [NAME]
    assert majority_spans({"a": [NAME], "b": [NAME], "c": [], "d": [CITY]}) is None  # NAME has 2 of 4
    # accepted spans that overlap cannot both be gold: a person decides
    overlapping = {"a": [NAME, Span(4, 8, "CITY")], "b": [NAME, Span(4, 8, "CITY")], "c": []}
    assert majority_spans(overlapping) is None


def test_conflicts_join_overlapping_disputed_spans_and_list_every_version():
    spans = {"b": [SHORT_NAME, CITY], "a": [NAME, CITY, DATE]}
    assert conflicts(spans) == [
        Conflict(0, 8, {"a": (NAME,), "b": (SHORT_NAME,)}),
        Conflict(30, 40, {"a": (DATE,), "b": ()}),  # b says: no PHI here
    ]
    assert conflicts({"a": [NAME], "b": [NAME]}) == []


def test_resolving_keeps_the_agreed_spans_and_takes_the_chosen_versions():
    spans = {"a": [NAME, CITY, DATE], "b": [SHORT_NAME, CITY]}
    assert resolve(spans, ["b", "a"]) == [SHORT_NAME, CITY, DATE]
    assert resolve(spans, ["a", None]) == [NAME, CITY]
    with pytest.raises(ValueError, match="2 conflicts but 1 choices"):
        resolve(spans, ["a"])
    with pytest.raises(ValueError, match="no annotator 'z'"):
        resolve(spans, ["z", None])
