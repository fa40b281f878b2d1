"""The authentication log's second-factor events (backoffice.second_factor's signals): each code
entered at log-in, at enrolment or for a step-up, right or wrong; lock-outs; enrolments; resets.
The person's name, the outcome, why the code was asked, the address and the user agent: never a code."""

from django.conf import settings

from audit.choices import AuditAction, AuthOutcome
from audit.services import auth_event_record
from baccarat_site.receivers import _recorded
from backoffice import second_factor

OUTCOMES = {second_factor.SUCCEEDED: AuthOutcome.SUCCEEDED, second_factor.RECOVERY_CODE: AuthOutcome.RECOVERY_CODE,
            second_factor.WRONG_CODE: AuthOutcome.WRONG_CODE,
            second_factor.REFUSED_LOCKED: AuthOutcome.CODE_REFUSED_LOCKED}


def record_checked(sender, request, user, purpose: str, outcome: str, recovery_codes_left=None, **kwargs) -> None:
    failed = outcome not in (second_factor.SUCCEEDED, second_factor.RECOVERY_CODE)
    recorded = _recorded(request) if failed else {}  # failures within AUTH_LOG_FAILURES_PER_MINUTE
    if recorded is None:
        return
    action = AuditAction.STEP_UP if purpose == second_factor.STEP_UP else AuditAction.SECOND_FACTOR
    auth_event_record(actor=user, action=action, outcome=OUTCOMES[outcome], username=user.get_username(),
                      details={"purpose": purpose, **recorded, **({} if recovery_codes_left is None else
                                                                   {"recovery_codes_left": recovery_codes_left})})


def record_locked_out(sender, request, user, **kwargs) -> None:
    auth_event_record(actor=user, action=AuditAction.LOGIN_LOCKED_OUT, outcome=AuthOutcome.SECOND_FACTOR_LOCKED,
                      username=user.get_username(),
                      details={"locked": "the person's second factor, from every address", "failures":
                               settings.LOGIN_FAILURE_LIMIT, "seconds": settings.LOGIN_LOCKOUT_SECONDS})


def record_enrolled(sender, request, user, by, **kwargs) -> None:
    auth_event_record(actor=by, action=AuditAction.SECOND_FACTOR_ENROLLED, outcome=AuthOutcome.ENROLLED,
                      username=user.get_username(), details={"device": "TOTP authenticator app",
                                                             "recovery_codes": second_factor.RECOVERY_CODES})


def record_reset(sender, user, by, **kwargs) -> None:
    auth_event_record(actor=by, action=AuditAction.SECOND_FACTOR_RESET, outcome=AuthOutcome.RESET,
                      username=user.get_username(), details={"by": by.get_username()})
