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
        self._second_factor(admin.site)

    def _second_factor(self, site):
        """The second factor's authentication log, its reset on users, and step-up on role changes
        (backoffice.step_up; apitokens' admin asks for it on issuing tokens). django-otp's own device
        pages (which show secrets) are not served: devices are enrolled and reset only through the
        second factor's own pages."""
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group
        from django_otp.plugins.otp_static.models import StaticDevice
        from django_otp.plugins.otp_totp.models import TOTPDevice

        from baccarat_site import second_factor_receivers as receivers
        from backoffice import second_factor
        from backoffice.admin.second_factor import add_reset_action
        from backoffice.step_up import require_step_up_on

        second_factor.second_factor_checked.connect(receivers.record_checked, dispatch_uid="baccarat_site.2fa.checked")
        second_factor.second_factor_locked_out.connect(receivers.record_locked_out,
                                                       dispatch_uid="baccarat_site.2fa.locked_out")
        second_factor.second_factor_enrolled.connect(receivers.record_enrolled,
                                                     dispatch_uid="baccarat_site.2fa.enrolled")
        second_factor.second_factor_reset.connect(receivers.record_reset, dispatch_uid="baccarat_site.2fa.reset")
        for model in (TOTPDevice, StaticDevice):
            if site.is_registered(model):
                site.unregister(model)
        user_admin = site.get_model_admin(get_user_model())
        add_reset_action(user_admin)
        require_step_up_on(user_admin, "add_view", "change_view", "user_change_password")
        require_step_up_on(site.get_model_admin(Group), "add_view", "change_view")
