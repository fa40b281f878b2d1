"""The operations dashboard in the admin (/admin/dashboard/), for those with settlement.view_dashboard.

A page of the back-office admin site, registered by ``settlement.admin`` (the site checks the
permission). Everything shown comes from settlement.reports, which reads only the daily aggregates.
"""

from datetime import timedelta

from django import forms
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from backoffice.replica_reads import data_age_seconds, read_alias
from games.models import GameInstance
from settlement import reports

PERMISSION = "settlement.view_dashboard"
DEFAULT_DAYS = 30
MAX_DAYS = 3 * 366


class DashboardForm(forms.Form):
    start = forms.DateField(label="From", widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label="To", widget=forms.DateInput(attrs={"type": "date"}))
    game = forms.ModelChoiceField(queryset=GameInstance.objects.order_by("slug"), required=False,
                                  to_field_name="slug", empty_label="All games")
    currency = forms.ChoiceField(required=False)

    def __init__(self, data, currencies):
        super().__init__(data)
        self.fields["currency"].choices = [(c, c) for c in currencies] or [("USD", "USD")]

    def clean(self):
        data = super().clean()
        start, end = data.get("start"), data.get("end")
        if start and end:
            if start > end:
                raise forms.ValidationError("The period must start on or before its last day.")
            if (end - start).days >= MAX_DAYS:
                raise forms.ValidationError(f"Choose a period of at most {MAX_DAYS} days.")
        game = data.get("game")
        if game is not None:
            data["currency"] = game.currency
        return data


def default_period():
    today = timezone.now().date()
    return today - timedelta(days=DEFAULT_DAYS - 1), today


def dashboard_view(request, site):
    using = read_alias(request)  # a replica when one may serve: the page says how old its figures are
    currencies = reports.currencies(using=using)
    start, end = default_period()
    data = {"start": start.isoformat(), "end": end.isoformat(), "currency": currencies[0] if currencies else "USD"}
    data.update({key: value for key, value in request.GET.items() if key in ("start", "end", "game", "currency")})
    form = DashboardForm(data, currencies)
    form.fields["game"].queryset = form.fields["game"].queryset.using(using)
    board = None
    if form.is_valid():
        board = reports.dashboard(start=form.cleaned_data["start"], end=form.cleaned_data["end"],
                                  currency=form.cleaned_data["currency"] or data["currency"],
                                  game=form.cleaned_data["game"], using=using)
    context = {
        **site.each_context(request),
        "title": "Operations dashboard",
        "subtitle": None,
        "form": form,
        "board": board,
        "chart_data": board.series if board else {},
        "currencies": currencies,
        "queue_url": reverse("admin:settlement_settlementbatch_changelist", current_app=site.name),
        "top_panels": site.dashboard_panels(request),
        "data_age": data_age_seconds(request),
    }
    return TemplateResponse(request, "admin/settlement/dashboard.html", context)
