"""The person's row lock: taken before any of their second-factor devices.

Enrolment (its device and its confirmation), an administrator's reset and ``create_staff_user
--totp`` each change a person's devices under it, so they happen one at a time per person: two
tabs cannot confirm one enrolment twice, and no tab makes a new enrolment device for a person
another tab has just enrolled. Checking a code locks the devices only, in the same order
(authenticator app, then recovery codes), so no two of these wait on each other in a cycle.
"""

from django.contrib.auth import get_user_model


def lock_person(user) -> None:
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
