"""The learning core of deidloop: a pure library (no Django) on numpy arrays.

Taggers are estimators (``fit`` / ``predict`` / ``predict_marginals``), query strategies are pure
functions of marginals, and everything works on character offsets through :mod:`corpus.types`.
"""
