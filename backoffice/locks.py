"""The person's row lock: taken before any of their second-factor devices, by every action on them.

Enrolment (its device and its confirmation), a code's check, an administrator's reset and
``create_staff_user --totp`` each take it first, so they happen one at a time per person, and in
one order (the person, then the devices): two tabs cannot confirm one enrolment twice, no tab makes
a new enrolment device for a person another tab has just enrolled, and a reset waits for a code's
check instead of deadlocking with it.

FOR NO KEY UPDATE: the foreign keys naming the person (an audit event's actor, written inside these
transactions and by others) take FOR KEY SHARE on the row, which it does not block.
"""

from django.contrib.auth import get_user_model


def lock_person(user) -> None:
    get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).first()
