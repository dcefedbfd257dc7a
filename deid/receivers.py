"""deid's answers to the other apps' signals (they never import deid)."""
from functools import lru_cache

from django.dispatch import receiver

from annotator.signals import suggestion_guard
from deid.core.eponyms import EponymGuard


@lru_cache(maxsize=64)
def _guard(extra: tuple[str, ...]) -> EponymGuard:
    """One guard per list of a project's own eponyms, built once (every hand-out asks for it)."""
    return EponymGuard(extra=extra)


@receiver(suggestion_guard)
def hide_eponyms(sender, project, **kwargs):
    """A model span that is an eponym in a medical context ("enfermedad de Parkinson", the project's own
    eponyms included) is not suggested to annotators as PHI."""
    return _guard(tuple(project.eponyms or ())).is_eponym
