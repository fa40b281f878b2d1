"""Every kind of page runs under a Content-Security-Policy that allows no inline script, and none of them
breaks it: the public page with a verification, a revealed pair's rounds, the admin's log-in, index,
lists, game form (its live RTP preview), round recall, the dashboard (its charts) and the API docs
(Swagger UI, its start-up script a file of its own). The context fixture fails any test whose pages
reported a violation; here, also, an inline script is shown to be blocked and reported."""

import re

import pytest
from django.conf import settings
from django_celery_beat.models import IntervalSchedule, PeriodicTask
from playwright.sync_api import expect

from games import services as game_services

pytestmark = pytest.mark.browser


def _visit(page, url):
    response = page.goto(url)
    assert response.status == 200, url
    policy = response.header_value("content-security-policy")
    assert policy == settings.CONTENT_SECURITY_POLICY, url
    script_src = re.search(r"script-src ([^;]*)", policy).group(1)
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src


def test_no_page_breaks_the_policy(page, context, live_server, sign_in, shot, operator, game, play,
                                   funded_account):
    player = funded_account("player-1", "100.00")
    round_ = play(game, bets=[(player, "BANKER", "10.00")])
    pair = round_.seed_pair
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    pair.refresh_from_db()

    _visit(page, f"{live_server.url}/?server_seed={pair.server_seed}&client_seed={pair.client_seed}"
                 f"&nonce={round_.nonce}&decks={round_.decks}")
    expect(page.locator("#result-outcome")).to_contain_text(round_.outcome)
    shot("1-public")
    _visit(page, f"{live_server.url}/pairs/{pair.server_seed_hash}/")
    _visit(page, f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info")).to_contain_text("Roles")  # its script ran: the schema is shown
    shot("2-api-docs")

    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, operator)
    # The schedules the migrations made are gone after an earlier transactional test's flush.
    task = PeriodicTask.objects.first() or PeriodicTask.objects.create(
        name="Webhook deliveries sweep", task="webhooks.sweep",
        interval=IntervalSchedule.objects.create(every=10, period=IntervalSchedule.SECONDS))
    for path in ("/admin/", "/admin/games/round/", "/admin/games/round/recall/?account=player-1",
                 f"/admin/games/round/{round_.pk}/change/", "/admin/audit/auditevent/",
                 f"/admin/django_celery_beat/periodictask/{task.pk}/change/"):
        _visit(page, f"{live_server.url}{path}")
    # django-celery-beat's form script, now a file of its own, ran: it hides the translation field.
    expect(page.locator(".field-crontab_translation")).to_be_hidden()
    _visit(page, f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/")
    with page.expect_response(lambda response: "/rtp-preview/" in response.url):  # connect-src 'self'
        page.locator("#id_tie_multiplier").fill("11")
    expect(page.locator('#rtp-preview tr[data-bet="TIE"] [data-field="multiplier"]')).to_contain_text("11")
    _visit(page, f"{live_server.url}/admin/dashboard/")
    expect(page.locator("body")).to_have_attribute("data-charts", "ready")
    shot("3-dashboard")
    assert context.csp_violations == [] and errors == []


def test_an_inline_script_is_blocked_and_reported(page, context, live_server):
    _visit(page, f"{live_server.url}/")

    page.evaluate("""() => { const script = document.createElement("script");
                             script.textContent = "window.inlineRan = true;"; document.body.append(script); }""")

    page.wait_for_timeout(300)  # the report is an event: let it arrive
    assert page.evaluate("window.inlineRan === undefined")
    assert any("script-src" in message for message in context.csp_violations), context.csp_violations
    context.csp_violations.clear()  # expected here; the fixture checks for any other
