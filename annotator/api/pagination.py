"""Pages of API lists: a limit beyond ``max_limit``, or a limit or offset that is not a whole number, is a 400
with the reason (never a silent default, never one response with a whole project in it)."""
from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000

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
