from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "approvals"
    verbose_name = "Approvals (four eyes)"

    def ready(self):
        # The views of the apps below submit their actions through backoffice.approval_gate (they
        # cannot import this app); from here on, the gate holds what needs a second person.
        from approvals.api.serializers import ApprovalHeldSerializer, ApprovalSerializer
        from approvals.services import approval_submit
        from backoffice import approval_gate as gate
        from backoffice.api.views import document_held

        def hold(service, **kwargs):
            approval, result = approval_submit(service, **kwargs)
            return gate.Done(result) if approval is None else gate.Held(ApprovalSerializer(approval).data)

        gate.register(hold)
        document_held(ApprovalHeldSerializer)  # the 202 body of those views (held_response)
