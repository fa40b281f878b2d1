"""RTP policies in the API: listed by whoever may view them, defined and changed by administrators."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from audit.validators import REASON_REQUIRED
from backoffice.api.pagination import CursorPagination
from backoffice.api.serializers import StrictInputMixin, reason_field
from backoffice.api.views import ERRORS, NOT_FOUND, READ_ERRORS, ApiView, get_or_404, validated
from games import services
from games.models import RtpPolicy
from games.rtp import LIMIT_FIELDS


def _check_limits(attrs, current) -> None:
    errors = {}
    for low, high in LIMIT_FIELDS.values():
        minimum = attrs.get(low, getattr(current, low, None))
        maximum = attrs.get(high, getattr(current, high, None))
        if minimum is not None and maximum is not None and minimum > maximum:
            errors[high] = ["The maximum must be at least the minimum."]
    if errors:
        raise serializers.ValidationError(errors)


class RtpPolicySerializer(serializers.ModelSerializer):
    class Meta:
        model = RtpPolicy
        fields = ["id", *RtpPolicy.CONFIGURATION_FIELDS, "created_at", "updated_at"]
        read_only_fields = fields


class RtpPolicyCreateSerializer(StrictInputMixin, serializers.ModelSerializer):
    class Meta:
        model = RtpPolicy
        fields = list(RtpPolicy.CONFIGURATION_FIELDS)

    def validate(self, attrs):
        _check_limits(attrs, None)
        return attrs


class RtpPolicyUpdateSerializer(StrictInputMixin, serializers.ModelSerializer):
    reason = reason_field(write_only=True)

    class Meta:
        model = RtpPolicy
        fields = [*RtpPolicy.CONFIGURATION_FIELDS, "reason"]

    def validate(self, attrs):
        if "reason" not in attrs:
            raise serializers.ValidationError({"reason": [REASON_REQUIRED]})
        _check_limits(attrs, self.instance)
        return attrs


def _policy_get(*, policy_id: int) -> RtpPolicy:
    return RtpPolicy.objects.get(pk=policy_id)


class RtpPolicyListView(ApiView):
    required_permissions = {"GET": "games.view_rtppolicy", "POST": "games.add_rtppolicy"}
    pagination_class = CursorPagination

    @extend_schema(tags=["rtp policies"], summary="RTP policies",
                   responses={200: RtpPolicySerializer(many=True), **READ_ERRORS})
    def get(self, request):
        return self.paginate(RtpPolicy.objects.all(), RtpPolicySerializer)

    @extend_schema(tags=["rtp policies"], summary="Define an RTP policy (limits in percent)",
                   request=RtpPolicyCreateSerializer, responses={201: RtpPolicySerializer, **ERRORS})
    def post(self, request):
        data = validated(RtpPolicyCreateSerializer, request.data)
        policy = services.rtp_policy_create(actor=request.user, **data)
        return Response(RtpPolicySerializer(policy).data, status=status.HTTP_201_CREATED)


class RtpPolicyDetailView(ApiView):
    required_permissions = {"GET": "games.view_rtppolicy", "PATCH": "games.change_rtppolicy"}

    @extend_schema(tags=["rtp policies"], summary="An RTP policy",
                   responses={200: RtpPolicySerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, policy_id):
        return Response(RtpPolicySerializer(get_or_404(_policy_get, policy_id=policy_id)).data)

    @extend_schema(tags=["rtp policies"], summary="Change an RTP policy (refused while an assigned game breaks it)",
                   request=RtpPolicyUpdateSerializer, responses={200: RtpPolicySerializer, **ERRORS, **NOT_FOUND})
    def patch(self, request, policy_id):
        policy = get_or_404(_policy_get, policy_id=policy_id)
        changes = dict(validated(RtpPolicyUpdateSerializer, request.data, instance=policy, partial=True))
        reason = changes.pop("reason")
        policy = services.rtp_policy_update(policy_id=policy.pk, actor=request.user, reason=reason, changes=changes)
        return Response(RtpPolicySerializer(policy).data)
