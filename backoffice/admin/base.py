"""Base classes of every back-office admin.

The server seed of an unrevealed seed pair never reaches a page: no admin shows a ``server_seed``
field, none searches it, and no admin accepts a URL lookup through it (``?server_seed__startswith=``
would otherwise make a changelist an oracle for it).
"""

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ERROR_FLAG, PAGE_VAR, ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext

from backoffice.admin.exports import Export, csv_response
from backoffice.admin.html import admin_url, changelist_url
from backoffice.admin.paginator import CappedCountPaginator
from backoffice.admin.search import indexed_search
from backoffice.replica_reads import read_alias

SECRET_FIELD = "server_seed"


class ExportChangeList(ChangeList):
    """A changelist that only builds its queryset: an export reads every row itself, streamed, so no
    page is fetched and no COUNT runs."""

    def get_results(self, request):
        self.result_count = self.full_result_count = None
        self.result_list = []
        self.can_show_all = self.multi_page = False
        self.paginator = None


class BackOfficeAdmin(admin.ModelAdmin):
    """Base of every back-office admin.

    - No URL lookup touches the server seed (see the module docstring).
    - A numeric search term also matches the primary key (and ``numeric_search_fields``) exactly,
      by index, instead of a text match over an integer column.
    - The admins of the big tables (rounds, bets, ledger, audit) say how to search in
      ``search_arms``: each arm an index-backed lookup, combined by ``indexed_search`` (see there)
      instead of Django's OR over joined tables, which reads whole tables at a million rows.
    - Nothing is ever deleted from the back-office: records are retired, voided or reversed.
    """

    numeric_search_fields: tuple = ()
    max_int_search_digits = 18
    # Lists never count a whole table: at most CAP rows, shown as "about N" or "more than N".
    paginator = CappedCountPaginator
    show_full_result_count = False
    # The CSV export of the changelist, offered to those who may view the model.
    csv_export: Export | None = None

    class Media:
        css = {"all": ("backoffice/admin.css",)}

    def action_checkbox(self, obj):
        """A row's checkbox, the same HTML as Django's, written directly: Django renders each through
        the form widget's template, a quarter of a 100-row list's time (docs/decisions/0010)."""
        if not settings.ADMIN_DIRECT_CHECKBOXES:
            return super().action_checkbox(obj)
        label = format_html(gettext("Select this object for an action - {}"), str(obj))
        return format_html('<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="{}">',
                           helpers.ACTION_CHECKBOX_NAME, str(obj.pk), label)

    def url_name(self, suffix: str) -> str:
        """The name of one of this admin's URLs ("export", "recall", …), without the "admin:" namespace."""
        return f"{self.opts.app_label}_{self.opts.model_name}_{suffix}"

    def own_url(self, suffix: str, *args) -> str:
        """The path of one of this admin's URLs; an object's key goes through ``quote`` first."""
        return reverse(f"admin:{self.url_name(suffix)}", args=args, current_app=self.admin_site.name)

    def object_view(self, view, has_permission, permission: str = ""):
        """``view(request, obj)`` as the view of an object's URL (``<path:object_id>/…/``).

        A missing object sends to the index with a message, as Django's own change page does;
        without ``has_permission(request, obj)`` the answer is 403, naming ``permission``
        ("app_label.codename") as the one needed."""

        def serve(request, object_id):
            obj = self.get_object(request, unquote(object_id))
            if obj is None:
                self.message_user(request, gettext("%(name)s with ID “%(key)s” doesn’t exist. Perhaps it was deleted?")
                                  % {"name": self.opts.verbose_name, "key": unquote(object_id)}, messages.WARNING)
                return HttpResponseRedirect(reverse("admin:index", current_app=self.admin_site.name))
            if not has_permission(request, obj):
                raise PermissionDenied(permission)
            return view(request, obj)

        return self.admin_site.admin_view(serve)

    def lookup_allowed(self, lookup, value, request=None):
        if SECRET_FIELD in lookup.split(LOOKUP_SEP):
            return False
        return super().lookup_allowed(lookup, value, request)

    def search_arms(self, request, term: str):
        """None (Django's search over ``search_fields``), or the arms of an index-backed search: see
        ``indexed_search``. ``term`` is stripped and not empty; the numeric matches are added."""
        return None

    def get_search_results(self, request, queryset, search_term):
        base = queryset
        term = search_term.strip()
        if not term:
            return queryset, False
        numeric = term.isdigit() and len(term) <= self.max_int_search_digits
        arms = self.search_arms(request, term)
        if arms is not None:
            if numeric:
                arms = [*arms, *(Q(**{field: int(term)}) for field in ("pk", *self.numeric_search_fields))]
            return indexed_search(base, arms), False
        if self.get_search_fields(request):
            queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        else:
            queryset, may_have_duplicates = base.none(), False
        if numeric:
            for field in ("pk", *self.numeric_search_fields):
                queryset = queryset | base.filter(**{field: int(term)})
        return queryset, may_have_duplicates

    def get_queryset(self, request):
        """A list or its export reads a replica when one may serve the request (backoffice.replica_reads);
        a change page, which may then write, and every action read the primary."""
        queryset = super().get_queryset(request)
        if getattr(request, "_backoffice_list", False):
            return queryset.using(read_alias(request))
        return queryset

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def has_delete_permission(self, request, obj=None):
        return False

    # CSV export of exactly the rows the changelist shows (its filters, search and ordering).

    def get_changelist(self, request, **kwargs):
        if getattr(request, "_backoffice_export", False):
            return ExportChangeList
        return super().get_changelist(request, **kwargs)

    def export_csv_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        request._backoffice_export = request._backoffice_list = True
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseRedirect(f"{changelist_url(self.model)}?{ERROR_FLAG}=1")
        return csv_response(self.csv_export, changelist.get_queryset(request))

    def export_url(self, request) -> str:
        query = request.GET.copy()
        query.pop(PAGE_VAR, None)
        query.pop(ERROR_FLAG, None)
        url = self.own_url("export")
        return f"{url}?{query.urlencode()}" if query else url

    def changelist_tools(self, request) -> list:
        """Links above the changelist: (url, label, css class)."""
        tools = []
        if self.csv_export is not None and self.has_view_permission(request):
            tools.append((self.export_url(request), "Export CSV", "pf-export-csv"))
        return tools

    def changelist_view(self, request, extra_context=None):
        request._backoffice_list = True
        extra_context = {"backoffice_tools": self.changelist_tools(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        urls = super().get_urls()
        if self.csv_export is None:
            return urls
        return [path("export/", self.admin_site.admin_view(self.export_csv_view), name=self.url_name("export")),
                *urls]

    def action_form_response(self, request, *, title, form, objects, submit_label, description="",
                             action=None, queryset=None, original=None, details=None):
        """The intermediate page of an action that asks for input (a reason, an amount)."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "opts": self.opts,
            "form": form,
            "objects": objects,
            "description": description,
            "details": details or [],
            "submit_label": submit_label,
            "action": action,
            "queryset": queryset if queryset is not None else [],
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "original": original,
            "cancel_url": admin_url(original) if original is not None else changelist_url(self.model),
            "media": self.media + form.media,
        }
        return TemplateResponse(request, "admin/backoffice/action_form.html", context)


class ReadOnlyAdmin(BackOfficeAdmin):
    """Viewable by those with the view permission; nobody adds or changes rows here by hand."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False
