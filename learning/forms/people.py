"""The hourly rate a lead enters on the "People and costs" page."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from learning.selectors.people import DEFAULT_HOURLY_RATE, HOURLY_RATE_HELP


class HourlyRateForm(forms.Form):
    rate = forms.FloatField(label=_("Hourly rate"), min_value=0, max_value=1e6, initial=DEFAULT_HOURLY_RATE,
                            help_text=HOURLY_RATE_HELP, widget=forms.NumberInput(attrs={"step": "any"}))
