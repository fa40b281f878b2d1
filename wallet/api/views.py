"""The accounts API: accounts, their ledger, and manual adjustments."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from backoffice.api.pagination import ExternalIdCursorPagination
from backoffice.api.permissions import RolePermission
from backoffice.api.views import (
    ERRORS,
    HELD,
    NOT_FOUND,
    READ_ERRORS,
    ApiView,
    KeyLookupView,
    get_or_404,
    held_response,
    validated,
)
from backoffice.approval_gate import Held, submit
from backoffice.step_up import FreshSecondFactor
from wallet import selectors, services
from wallet.api import serializers as s


class AccountListView(ApiView):
    required_permissions = {"GET": "wallet.view_account", "POST": "wallet.add_account"}
    pagination_class = ExternalIdCursorPagination

    @extend_schema(tags=["accounts"], summary="Accounts, by external id",
                   responses={200: s.AccountSerializer(many=True), **READ_ERRORS})
    def get(self, request):
        return self.paginate(selectors.account_list(using=self.read_db), s.AccountSerializer)

    @extend_schema(tags=["accounts"], summary="Open an account", request=s.AccountCreateSerializer,
                   responses={201: s.AccountSerializer, **ERRORS})
    def post(self, request):
        data = validated(s.AccountCreateSerializer, request.data)
        account = services.account_create(actor=request.user, **data)
        return Response(s.AccountSerializer(account).data, status=status.HTTP_201_CREATED)


class AccountDetailView(KeyLookupView):
    required_permissions = {"GET": "wallet.view_account"}

    @extend_schema(tags=["accounts"], summary="An account and its balance",
                   responses={200: s.AccountSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, external_id):
        account = get_or_404(selectors.account_get, using=self.read_db, external_id=external_id)
        return Response(s.AccountSerializer(account).data)


class AccountLedgerView(ApiView):
    required_permissions = {"GET": ("wallet.view_account", "wallet.view_ledgerentry")}

    @extend_schema(tags=["accounts"], summary="The account's ledger, newest first",
                   responses={200: s.LedgerEntrySerializer(many=True), **READ_ERRORS, **NOT_FOUND})
    def get(self, request, external_id):
        account = get_or_404(selectors.account_get, using=self.read_db, external_id=external_id)
        return self.paginate(selectors.account_ledger(using=self.read_db, account=account), s.LedgerEntrySerializer)


class AccountAdjustView(ApiView):
    required_permissions = {"POST": "wallet.adjust_account"}
    permission_classes = [RolePermission, FreshSecondFactor]

    @extend_schema(tags=["accounts"], summary="Credit or debit an account by hand, with a reason",
                   request=s.AccountAdjustSerializer,
                   responses={201: s.AdjustmentSerializer, **HELD, **ERRORS, **NOT_FOUND})
    def post(self, request, external_id):
        account = get_or_404(selectors.account_get, external_id=external_id)
        data = validated(s.AccountAdjustSerializer, request.data)
        outcome = submit(services.account_adjust, external_id=account.external_id, actor=request.user,
                         amount=data["amount"], reason=data["reason"])
        if isinstance(outcome, Held):
            return held_response(outcome)
        entry = outcome.result
        return Response({"account": s.AccountSerializer(entry.account).data,
                         "entry": s.LedgerEntrySerializer(entry).data}, status=status.HTTP_201_CREATED)
