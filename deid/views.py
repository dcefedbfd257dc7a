"""(being written)"""
from django.http import HttpResponse


def planner(request, project_id):
    return HttpResponse("not yet", status=501)
