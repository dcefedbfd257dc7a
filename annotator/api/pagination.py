"""Pages of API lists: a limit beyond ``max_limit``, or a limit or offset that is not a whole number, is a 400
with the reason (never a silent default, never one response with a whole project in it).

A page that ends the list (fewer rows than the limit) tells how long the list is, so the list is counted only
when it goes on past the page: a record's annotations, the commonest list, take one statement, not two."""
from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = self.get_limit(request)
        self.offset = self.get_offset(request)
        page = list(queryset[self.offset:self.offset + self.limit])
        if len(page) < self.limit and (page or self.offset == 0):
            self.count = self.offset + len(page)
        else:
            self.count = self.get_count(queryset)
        if self.count > self.limit and self.template is not None:
            self.display_page_controls = True
        return page

    def get_limit(self, request):
        return self._whole_number(request, self.limit_query_param, self.default_limit, maximum=self.max_limit)

    def get_offset(self, request):
        return self._whole_number(request, self.offset_query_param, 0)

    @staticmethod
    def _whole_number(request, name: str, default: int, *, maximum: int | None = None) -> int:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ValidationError({name: f"{name} must be a whole number, not {raw[:40]!r}"}) from None
        if value < 0:
            raise ValidationError({name: f"{name} must not be negative"})
        if maximum is not None and value > maximum:
            raise ValidationError({name: f"{name} may be at most {maximum}"})
        return value
