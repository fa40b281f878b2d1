from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    """Django's admin, on the back-office site (backoffice.admin.site.BackOfficeAdminSite)."""

    default_site = "backoffice.admin.site.BackOfficeAdminSite"

    def ready(self):
        super().ready()
        from django.contrib import admin
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from baccarat_site import receivers
        from backoffice.admin.lockouts import add_unlock_action
        from backoffice.admin.site import staff_login_refused
        from backoffice.api.authentication import token_refused
        from backoffice.lockout import login_locked_out, login_unlocked

        login_locked_out.connect(receivers.record_locked_out, dispatch_uid="baccarat_site.audit_locked_out")
        login_unlocked.connect(receivers.record_unlocked, dispatch_uid="baccarat_site.audit_unlocked")
        # The authentication log (audit events): log-ins, refused API tokens.
        user_logged_in.connect(receivers.record_logged_in, dispatch_uid="baccarat_site.auth_log.logged_in")
        user_login_failed.connect(receivers.record_login_failed, dispatch_uid="baccarat_site.auth_log.login_failed")
        token_refused.connect(receivers.record_token_refused, dispatch_uid="baccarat_site.auth_log.token_refused")
        staff_login_refused.connect(receivers.record_staff_login_refused,
                                    dispatch_uid="baccarat_site.auth_log.staff_login_refused")
        add_unlock_action(admin.site.get_model_admin(get_user_model()))  # registered by django.contrib.auth
