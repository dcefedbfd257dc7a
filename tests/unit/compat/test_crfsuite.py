"""sklearn-crfsuite==0.5.0 / python-crfsuite==0.9.12: the model file and dump that
learning.core._compat.crfsuite reads (see its docstring)."""
from __future__ import annotations

import numpy as np
import pytest
import sklearn_crfsuite

from learning.core._compat import crfsuite as crfsuite_compat
from learning.core._compat.crfsuite import CRFModelFormatError, read_crfsuite_weights

# "ana gil vive" / "vive luis": every transition of the gold sequences goes one way only.
XS = [[["w=ana", "cap"], ["w=gil", "cap"], ["w=vive"]], [["w=vive"], ["w=luis", "cap"]]] * 3
YS = [["B-PER", "I-PER", "O"], ["O", "B-PER"]] * 3


@pytest.fixture(scope="module")
def crf() -> sklearn_crfsuite.CRF:
    model = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=0.01, max_iterations=50, all_possible_transitions=True)
    return model.fit(XS, YS)


def test_dump_maps_names_to_decimal_string_ids(crf):
    dump = crfsuite_compat.model_dump(crf)
    assert dump.labels == {"B-PER": "0", "I-PER": "1", "O": "2"}  # ids in order of first appearance
    assert dump.attributes == {"w=ana": "0", "cap": "1", "w=gil": "2", "w=vive": "3", "w=luis": "4"}


def test_dump_keys_state_features_by_attribute_label_and_transitions_by_from_to(crf):
    dump = crfsuite_compat.model_dump(crf)
    # c1=0 keeps every (attribute, label) pair seen in training; all 9 transitions are possible.
    assert set(dump.state_features) == {
        ("w=ana", "B-PER"), ("cap", "B-PER"), ("cap", "I-PER"), ("w=gil", "I-PER"), ("w=vive", "O"),
        ("w=luis", "B-PER"),
    }
    assert set(dump.transitions) == {(a, b) for a in ("B-PER", "I-PER", "O") for b in ("B-PER", "I-PER", "O")}
    # (from, to): B-PER -> I-PER and I-PER -> O are seen, their reverses never are.
    assert dump.transitions[("B-PER", "I-PER")] > 0 > dump.transitions[("I-PER", "B-PER")]
    assert dump.transitions[("I-PER", "O")] > 0 > dump.transitions[("O", "I-PER")]
    # Weights are printed with 6 decimals.
    assert all(round(w, 6) == w for w in [*dump.state_features.values(), *dump.transitions.values()])


def test_model_file_holds_every_weight_of_the_dump_at_full_precision(crf):
    dump = crfsuite_compat.model_dump(crf)
    model = crfsuite_compat.model_file_bytes(crf)
    assert model[:4] == b"lCRF"
    n_labels, n_attrs, records = read_crfsuite_weights(model)
    assert (n_labels, n_attrs) == (3, 5)
    label = {int(i): name for name, i in dump.labels.items()}
    attribute = {int(i): name for name, i in dump.attributes.items()}
    state = records[records["type"] == 0]
    trans = records[records["type"] == 1]
    assert len(state) + len(trans) == len(records) == 6 + 9
    from_file = {(attribute[int(r["src"])], label[int(r["dst"])]): float(r["weight"]) for r in state}
    assert from_file.keys() == dump.state_features.keys()
    transitions = {(label[int(r["src"])], label[int(r["dst"])]): float(r["weight"]) for r in trans}
    assert transitions.keys() == dump.transitions.keys()
    for weights, printed in ((from_file, dump.state_features), (transitions, dump.transitions)):
        for key, w in weights.items():
            assert abs(w - printed[key]) <= 5e-7, key
    assert any(round(w, 6) != w for w in from_file.values())  # more digits than the dump


def test_a_file_that_is_not_a_crf1d_model_is_refused(crf):
    with pytest.raises(CRFModelFormatError, match="too short"):
        read_crfsuite_weights(b"lCRF")
    with pytest.raises(CRFModelFormatError, match="not a crfsuite CRF1d model"):
        read_crfsuite_weights(b"not a model file at all, not even close to one....")
    model = bytearray(crfsuite_compat.model_file_bytes(crf))
    offset = int(np.frombuffer(bytes(model[28:32]), dtype="<u4")[0])  # the header's feature chunk offset
    model[offset : offset + 4] = b"XXXX"
    with pytest.raises(CRFModelFormatError, match="feature chunk not found"):
        read_crfsuite_weights(bytes(model))
