"""A Content-Security-Policy that allows no inline script is on every response, and no page needs more:
no page of the admin, the public site or the API docs holds an inline script, an event-handler
attribute, a javascript: URL or an inline style. (tests/browser checks that pages report no violation.)"""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from games.models import SeedPair
from tests.admin.test_pages import page_urls, world  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
DATA_BLOCK = re.compile(r'\btype\s*=\s*"application/(?:ld\+)?json"', re.I)


def inline_code(html: str) -> list[str]:
    """What a policy without 'unsafe-inline' would block on a page."""
    found = []
    for attributes, body in SCRIPT.findall(html):
        if re.search(r"\bsrc\s*=", attributes, re.I):
            if body.strip():
                found.append(f"<script{attributes}> with a body")
        elif not DATA_BLOCK.search(attributes):  # a JSON data block is not run
            found.append(f"inline <script{attributes}>{body[:60]}")
    found += re.findall(r"<[a-zA-Z][^>]*?\son[a-z]+\s*=[^>]*>", html)
    found += re.findall(r"""(?:href|src|action)\s*=\s*["']?\s*javascript:""", html, re.I)
    found += re.findall(r"<style\b[^>]*>", html, re.I)
    found += re.findall(r"<[a-zA-Z][^>]*?\sstyle\s*=[^>]*>", html)
    return found


def assert_policy(response, url):
    assert response.get("Content-Security-Policy"), f"no Content-Security-Policy on {url}"
    assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY, url
    if response.get("Content-Type", "").startswith("text/html") and not response.streaming:
        assert inline_code(response.content.decode()) == [], url


def test_the_policy_allows_scripts_and_styles_from_this_site_only():
    directives = dict(directive.strip().split(" ", 1) for directive in settings.CONTENT_SECURITY_POLICY.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["base-uri"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in settings.CONTENT_SECURITY_POLICY


def test_every_admin_page_carries_the_policy_and_needs_no_inline_code(as_admin, world):  # noqa: F811
    urls = page_urls(as_admin)
    assert len(urls) > 150
    for url in [*urls, reverse("admin:games_gameinstance_add"), reverse("admin:dashboard"),
                reverse("admin:password_change"), "/admin/no-such-page/"]:
        assert_policy(as_admin.get(url), url)


def test_the_public_pages_the_docs_and_the_api_carry_the_policy(client, api_as, operator, world):  # noqa: F811
    pair = SeedPair.objects.filter(revealed_at__isnull=False).first()
    round_ = pair.rounds.first()
    urls = ["/", f"/?server_seed={pair.server_seed}&client_seed={pair.client_seed}&nonce={round_.nonce}"
                 f"&decks={round_.decks}", "/?server_seed=bad", f"/pairs/{pair.server_seed_hash}/", "/no-such-page/",
            "/admin/login/", "/api/docs/", "/api/schema/", "/api/v1/games/"]
    for url in urls:
        assert_policy(client.get(url), url)
    assert_policy(api_as(operator).get("/api/v1/games/"), "/api/v1/games/ with a token")


def test_the_docs_start_up_script_is_a_file_of_its_own(client):
    page = client.get("/api/docs/").content.decode()
    sources = re.findall(r'<script[^>]*\bsrc="([^"]+)"', page)
    own = [source for source in sources if source.startswith("/api/docs/")]
    assert own, sources

    script = client.get(own[0].replace("&amp;", "&"))

    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.content.decode() and "/api/schema/" in script.content.decode()


@override_settings(CONTENT_SECURITY_POLICY="default-src 'none'")
def test_the_policy_is_a_setting(client):
    assert client.get("/")["Content-Security-Policy"] == "default-src 'none'"


@override_settings(CONTENT_SECURITY_POLICY="")
def test_an_empty_setting_sends_no_header(client):
    assert "Content-Security-Policy" not in client.get("/")


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.html")), ids=lambda path: str(path.relative_to(TEMPLATES)))
def test_no_template_has_inline_code(path):
    assert inline_code(path.read_text(encoding="utf-8")) == []
