"""The second factor of every staff user: a TOTP authenticator app (django-otp), with single-use
recovery codes, entered after the password before any admin page or session API call.

- **Enrolment** at first log-in (or by ``create_staff_user --totp``): an unconfirmed TOTP device is
  made and shown (QR code and secret); the first right code confirms it, and ten recovery codes
  (a static device) are made and shown once.
- **Verification**: a code of the authenticator app (each time step once only: django-otp refuses a
  code already used) or a recovery code (used up). django-otp keeps the verified device in the
  session (``is_verified``: still one of the person's); ``VERIFIED_AT`` keeps when a code was last entered, which
  ``is_fresh`` compares with STEP_UP_MINUTES (backoffice.step_up).
- **Brute force**: a wrong code counts against the person (backoffice.lockout): LOGIN_FAILURE_LIMIT of
  them lock the second factor for LOGIN_LOCKOUT_SECONDS, and no code is checked meanwhile. Each code
  is counted before it is checked, so codes sent at once are held to the same limit.
- **Reset** by an administrator deletes the person's devices: they enrol again at their next log-in.
- Every session of a person ends when their devices change (backoffice.staff_sessions), but the one
  that enrolled.

Each outcome is sent as a signal (the site records the authentication log from them): never a code.
"""

import secrets
from base64 import b32encode

import django_otp
import segno
from django.conf import settings
from django.db import transaction
from django.dispatch import Signal
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from backoffice import lockout, staff_sessions
from backoffice.locks import lock_person

VERIFIED_AT = "_second_factor_at"  # session: when a code was last entered (staff_sessions.clock)
RECOVERY_CODES = 10

# Why a code is asked for.
LOG_IN, STEP_UP, ENROLMENT = "log_in", "step_up", "enrolment"
# What became of it.
SUCCEEDED, RECOVERY_CODE, WRONG_CODE, REFUSED_LOCKED = "succeeded", "recovery_code", "wrong_code", "refused_locked"
# The enrolment this code was for was confirmed meanwhile, by another tab (not a wrong code).
ENROLLED_MEANWHILE = "enrolled_meanwhile"

LOCKED_MESSAGE = ("Too many wrong codes: this person's second factor is locked for {minutes} minutes. "
                  "An administrator can unlock it.")

# Sent with request=, user=, purpose=, outcome= (and recovery_codes_left= after a recovery code).
second_factor_checked = Signal()
second_factor_locked_out = Signal()  # request=, user=: the code that locked it
second_factor_enrolled = Signal()  # request= (None from a command), user=, by=
second_factor_reset = Signal()  # user=, by=


def locked_message() -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, settings.LOGIN_LOCKOUT_SECONDS // 60))


def is_verified(request) -> bool:
    """The session's second factor was entered, with a device the person still has (the standing the
    session middleware reads: no query of its own)."""
    user = request.user
    device_id = request.session.get(DEVICE_ID_SESSION_KEY) if user.is_authenticated else None
    return device_id is not None and device_id in staff_sessions.second_factor_of(user)


def is_pending(request) -> bool:
    """Signed in with the password, second factor still to enter (or to enrol)."""
    user = request.user
    return user.is_authenticated and user.is_active and user.is_staff and not is_verified(request)


def is_fresh(request, minutes: float) -> bool:
    """Verified, with a code entered within the last ``minutes``."""
    entered = request.session.get(VERIFIED_AT)
    return is_verified(request) and entered is not None and staff_sessions.clock() - entered < minutes * 60


def is_enrolled(user) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def enrolment_device(user) -> TOTPDevice | None:
    """The unconfirmed TOTP device of an enrolment under way: the same one on every reload. None once
    the person is enrolled (by another tab, meanwhile): they enter a code as at every sign-in."""
    with transaction.atomic():
        lock_person(user)
        if is_enrolled(user):
            return None
        device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
        return device or TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=False)


def otpauth_uri(device: TOTPDevice) -> str:
    """The otpauth:// URI an authenticator app scans (issuer OTP_TOTP_ISSUER, the user name, the secret)."""
    return device.config_url


def secret_text(device: TOTPDevice) -> str:
    """The secret in base32, in groups of four, for typing into an app that cannot scan."""
    secret = b32encode(device.bin_key).decode().rstrip("=")
    return " ".join(secret[i:i + 4] for i in range(0, len(secret), 4))


def qr_data_uri(uri: str) -> str:
    """The QR code of ``uri`` as an SVG data: URI (an <img>, as the Content-Security-Policy allows)."""
    return segno.make(uri, error="m").svg_data_uri(scale=5, border=2)


def _recovery_codes(user) -> list:
    """New recovery codes replacing any others: ten codes of 10 base32 characters, shown once."""
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name="Recovery codes", confirmed=True)
    codes = [b32encode(secrets.token_bytes(5)).decode().lower() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create([StaticToken(device=device, token=code) for code in codes])
    return [f"{code[:5]}-{code[5:]}" for code in codes]


def enrol(user, *, request=None, by=None) -> tuple:
    """A confirmed TOTP device for ``user`` (replacing any) and new recovery codes, in one transaction
    with its audit event: (device, recovery codes). For ``create_staff_user --totp``."""
    with transaction.atomic():
        lock_person(user)
        TOTPDevice.objects.filter(user=user).delete()
        device = TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=True)
        codes = _recovery_codes(user)
        second_factor_enrolled.send(sender=TOTPDevice, request=request, user=user, by=by or user)
    return device, codes


def _normalised(code) -> str:
    return "".join(str(code or "").split()).replace("-", "").lower()[:32]


def _entered(request, device) -> None:
    django_otp.login(request, device)
    request.session[VERIFIED_AT] = staff_sessions.clock()
    lockout.clear_second_factor_failures(request.user.get_username())


def _attempt(request, purpose: str) -> int | None:
    """This code's number among the person's (counted before it is checked: backoffice.lockout), or
    None when the second factor is locked and no code is checked."""
    user = request.user
    attempt = lockout.second_factor_attempt(user.get_username())
    if attempt > settings.LOGIN_FAILURE_LIMIT:
        second_factor_checked.send(sender=TOTPDevice, request=request, user=user, purpose=purpose,
                                   outcome=REFUSED_LOCKED)
        return None
    return attempt


def _wrong(request, purpose: str, attempt: int) -> str:
    user = request.user
    second_factor_checked.send(sender=TOTPDevice, request=request, user=user, purpose=purpose, outcome=WRONG_CODE)
    if lockout.second_factor_failed(user.get_username(), attempt):
        second_factor_locked_out.send(sender=TOTPDevice, request=request, user=user)
    return WRONG_CODE


def confirm_enrolment(request, code) -> list | str:
    """The first code of the enrolment's device: the recovery codes (the device is confirmed and the
    session verified, and stays signed in), or WRONG_CODE / REFUSED_LOCKED / ENROLLED_MEANWHILE."""
    user = request.user
    if (attempt := _attempt(request, ENROLMENT)) is None:
        return REFUSED_LOCKED
    with transaction.atomic():
        lock_person(user)
        device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
        if device is None and is_enrolled(user):
            return ENROLLED_MEANWHILE
        code = _normalised(code)
        if device is None or not (code.isascii() and code.isdigit()) or not device.verify_token(code):
            return _wrong(request, ENROLMENT, attempt)
        TOTPDevice.objects.filter(user=user).exclude(pk=device.pk).delete()
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        codes = _recovery_codes(user)
        second_factor_enrolled.send(sender=TOTPDevice, request=request, user=user, by=user)
    _entered(request, device)
    staff_sessions.restamp(request)
    return codes


def verify(request, code, purpose: str) -> str:
    """Check a code of the signed-in person (an authenticator's, or a recovery code, used up): SUCCEEDED,
    RECOVERY_CODE, WRONG_CODE or REFUSED_LOCKED. On success the session is verified, and fresh."""
    user = request.user
    if (attempt := _attempt(request, purpose)) is None:
        return REFUSED_LOCKED
    code = _normalised(code)
    with transaction.atomic():
        # Locked: two requests with one code cannot both pass (django-otp keeps the last time step used).
        lock_person(user)
        totp = TOTPDevice.objects.select_for_update().filter(user=user, confirmed=True).first()
        recovery = StaticDevice.objects.select_for_update().filter(user=user, confirmed=True).first()
        # ASCII digits only: Python (and django-otp) would read other scripts' digits as the same number.
        digits = code.isascii() and code.isdigit()
        if totp is not None and digits and totp.verify_token(code):
            device, outcome, details = totp, SUCCEEDED, {}
        elif recovery is not None and not digits and recovery.verify_token(code):
            device, outcome = recovery, RECOVERY_CODE
            details = {"recovery_codes_left": recovery.token_set.count()}
        else:
            return _wrong(request, purpose, attempt)
        second_factor_checked.send(sender=TOTPDevice, request=request, user=user, purpose=purpose, outcome=outcome,
                                   **details)
    _entered(request, device)
    return outcome


def reset(user, *, by) -> None:
    """Delete the person's devices (an administrator's act, audited): every session of theirs ends,
    and they enrol again at their next log-in."""
    with transaction.atomic():
        lock_person(user)
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
        second_factor_reset.send(sender=TOTPDevice, user=user, by=by)
    lockout.clear_second_factor_failures(user.get_username())
