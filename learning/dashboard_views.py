"""(being written)"""
from django.http import HttpResponse


def _todo(request, *args, **kwargs):
    return HttpResponse("not yet", status=501)


dashboard = model_version = start_simulation = simulation = people = clusters = _todo
