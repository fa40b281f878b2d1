"""The second factor in the browser: a new operator enrols at first log-in (the QR code and the key
shown, the first code computed from that key, the recovery codes shown once), then signs in again with
the password and a later code; a wrong code is refused on the page."""

import time
from base64 import b32decode

import pytest
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD

pytestmark = pytest.mark.browser


def code_from_key(key: str, steps_ahead: int = 0) -> str:
    """What an authenticator app the key was typed into shows (now, or a later time step)."""
    secret = key.replace(" ", "")
    totp = TOTP(b32decode(secret + "=" * (-len(secret) % 8)))
    totp.time = time.time() + 30 * steps_ahead
    return f"{totp.token():06d}"


def test_enrolment_at_first_log_in_then_a_log_in_with_a_code(page, live_server, shot, operator):
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(operator.get_username())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    # First log-in: the enrolment, before any admin page.
    expect(page.locator("h1")).to_have_text("Set up your second factor")
    qr_code = page.locator("#totp-qr-code")
    expect(qr_code).to_be_visible()
    assert qr_code.evaluate("image => image.naturalWidth") > 100  # the SVG rendered
    key = page.locator("#totp-secret").inner_text()
    assert len(key.replace(" ", "")) == 32
    expect(page.locator("#user-tools")).to_have_count(0)
    shot("1-enrol")
    page.get_by_label("Code").fill("000000" if code_from_key(key) != "000000" else "111111")
    page.get_by_role("button", name="Confirm").click()
    expect(page.locator(".errorlist")).to_contain_text("Wrong code")
    shot("2-wrong-code")
    page.get_by_label("Code").fill(code_from_key(key))
    page.get_by_role("button", name="Confirm").click()

    expect(page.locator("h1")).to_have_text("Your recovery codes")
    expect(page.locator("#recovery-codes li")).to_have_count(10)
    shot("3-recovery-codes")
    page.get_by_role("link", name="I have saved them: continue").click()
    expect(page.locator("#user-tools")).to_contain_text(operator.get_username())
    assert TOTPDevice.objects.get(user=operator).confirmed
    shot("4-index")

    # Log out, and in again: the password, then the next code of the app (each code counts once).
    page.get_by_role("button", name="Log out").click()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/games/round/")
    page.get_by_label("Username").fill(operator.get_username())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("h1")).to_have_text("Second factor")
    shot("5-code-asked")
    page.get_by_label("Code").fill(code_from_key(key, steps_ahead=1))
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("h1")).to_contain_text("Select round")
    shot("6-signed-in")
