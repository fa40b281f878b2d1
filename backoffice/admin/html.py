"""Small HTML pieces of the back-office pages: links to admin pages and to other pages of a list,
amounts, JSON, service errors."""

import json

from django.contrib.admin.utils import quote
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from backoffice import formatting
from backoffice.formatting import EMPTY


def object_url(model, pk, action: str = "change") -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{action}", args=[quote(pk)])


def admin_url(obj, action: str = "change") -> str:
    return object_url(type(obj), obj.pk, action)


def changelist_url(model, **params) -> str:
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def approval_request_link(approval_id) -> str:
    """"request #N", linking the request's page: a held change's message leads to what waits."""
    return format_html('<a href="{}">request #{}</a>', reverse("admin:approvals_approval_change", args=[approval_id]),
                       approval_id)


def link(obj, text=None):
    if obj is None:
        return EMPTY
    return format_html('<a href="{}">{}</a>', admin_url(obj), text if text is not None else obj)


def query_with(request, **params) -> str:
    """The query string of the page being viewed, with ``params`` set: "?page=2&check=1"."""
    query = request.GET.copy()
    for name, value in params.items():
        query[name] = value
    return f"?{query.urlencode()}"


def page_links(request, page, param: str) -> list:
    """(label, url) of the first, previous, next and last pages of ``page``, numbered by ``param``."""

    def url(number):
        return query_with(request, **{param: number})

    links = []
    if page.has_previous():
        links += [("« First", url(1)), ("‹ Previous", url(page.previous_page_number()))]
    if page.has_next():
        links += [("Next ›", url(page.next_page_number())), ("Last »", url(page.paginator.num_pages))]
    return links


def money(value) -> str:
    """An amount as every list writes it (backoffice.formatting.money): "58,131.40" (0.00 for none)."""
    return formatting.money(value or 0)


def json_html(value):
    if value in (None, "", {}, []):
        return EMPTY
    return format_html('<pre class="pf-json">{}</pre>', json.dumps(value, indent=2, sort_keys=True,
                                                                 ensure_ascii=False))


def service_error_messages(error) -> dict:
    """A service's error as {field or None: [messages]}: a ValidationError, or any error that names
    its fields in ``message_dict`` (a conflict with the state of things, say)."""
    if isinstance(error, ValidationError) and not hasattr(error, "error_dict"):
        return {None: error.messages}
    return error.message_dict


def service_error_text(error) -> str:
    parts = []
    for field, field_messages in service_error_messages(error).items():
        text = " ".join(str(message) for message in field_messages)
        parts.append(f"{field.replace('_', ' ')}: {text}" if field and field != "__all__" else text)
    return "; ".join(parts)
