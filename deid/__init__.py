"""Concealment of PHI in exported text (Pseudo, Class, Mask, Remove), the eponym guard, the release planner."""
