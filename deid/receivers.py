"""deid's answers to the other apps' signals (they never import deid)."""
from django.dispatch import receiver

from annotator.signals import suggestion_guard
from deid.core.eponyms import EponymGuard


@receiver(suggestion_guard)
def hide_eponyms(sender, project, **kwargs):
    """A model span that is an eponym in a medical context ("enfermedad de Parkinson", the project's own
    eponyms included) is not suggested to annotators as PHI."""
    return EponymGuard(extra=project.eponyms or ()).is_eponym
