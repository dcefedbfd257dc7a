"""crfsuite internals that :mod:`learning.core.taggers.crf` relies on (sklearn-crfsuite==0.5.0 and
python-crfsuite==0.9.12, the lock's pins).

Pinned by ``tests/unit/compat/test_crfsuite.py``. What is relied on:

- the fitted ``sklearn_crfsuite.CRF`` keeps its trained model in a file named by ``crf.modelfile.name``
  (an undocumented attribute);
- that file's layout, crfsuite's CRF1d format: a little-endian header (magic ``lCRF``, model type
  ``FOMC``, the label and attribute counts and the offset of the feature chunk) and a ``FEAT`` chunk of
  (type, source, destination, float64 weight) records, type 0 for attribute -> label and type 1 for
  label -> label;
- ``crf.tagger_.info()``, pycrfsuite's parse of crfsuite's text dump: ``labels`` and ``attributes`` map
  names to ids written as decimal strings, ``state_features`` maps ``(attribute, label)`` and
  ``transitions`` ``(from label, to label)`` to weights rounded to 6 decimals.
"""
from __future__ import annotations

import struct

import numpy as np

__all__ = ["CRFModelFormatError", "model_dump", "model_file_bytes", "read_crfsuite_weights"]


class CRFModelFormatError(ValueError):
    """A crfsuite model file could not be read as a CRF1d model."""


_HEADER = struct.Struct("<4sI4sIIIIIIIII")
_CHUNK = struct.Struct("<4sII")
_FEATURE_DTYPE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])


def read_crfsuite_weights(model: bytes) -> tuple[int, int, np.ndarray]:
    """(number of labels, number of attributes, feature records) of a crfsuite CRF1d model file.

    Records have fields ``type`` (0: state feature attribute ``src`` -> label ``dst``; 1: transition
    label ``src`` -> label ``dst``), ``src``, ``dst`` and ``weight`` (float64, as trained).
    """
    if len(model) < _HEADER.size:
        raise CRFModelFormatError("model file too short")
    (magic, _size, mtype, _version, _n_features, n_labels, n_attrs, off_features, *_rest) = _HEADER.unpack_from(
        model, 0
    )
    if magic != b"lCRF" or mtype != b"FOMC":
        raise CRFModelFormatError(f"not a crfsuite CRF1d model (magic {magic!r}, type {mtype!r})")
    # The header's own feature count is not filled in by crfsuite; the chunk's count and size are.
    chunk, chunk_size, n = _CHUNK.unpack_from(model, off_features)
    if chunk != b"FEAT" or chunk_size != _CHUNK.size + n * _FEATURE_DTYPE.itemsize:
        raise CRFModelFormatError("feature chunk not found where the header says")
    begin = off_features + _CHUNK.size
    if begin + n * _FEATURE_DTYPE.itemsize > len(model):
        raise CRFModelFormatError("feature chunk runs past the end of the file")
    records = np.frombuffer(model, dtype=_FEATURE_DTYPE, count=n, offset=begin)
    return n_labels, n_attrs, records


def model_file_bytes(crf) -> bytes:
    """The bytes of the model file a fitted ``sklearn_crfsuite.CRF`` was trained into."""
    with open(crf.modelfile.name, "rb") as fh:
        return fh.read()


def model_dump(crf):
    """pycrfsuite's ``ParsedDump`` of a fitted ``sklearn_crfsuite.CRF``: ``labels``, ``attributes``,
    ``state_features`` and ``transitions`` as described above."""
    return crf.tagger_.info()
