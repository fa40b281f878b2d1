"""GET /api/v1/: where the API's collections, its schema and its docs are.

Open to anyone, like the schema it points to: it names only routes without parameters (no id, account
or game appears) and answers the same to every caller, signed in or not."""

from django.urls import URLPattern, reverse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView


@extend_schema(exclude=True)  # the schema documents the resources themselves
class ApiIndexView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    patterns: tuple[URLPattern, ...] = ()

    def get(self, request):
        base = request.build_absolute_uri(request.path)
        resources = {pattern.name: base + str(pattern.pattern) for pattern in self.patterns
                     if pattern.name and not pattern.pattern.converters}
        return Response({"resources": resources,
                         "schema": request.build_absolute_uri(reverse("api-schema")),
                         "docs": request.build_absolute_uri(reverse("api-docs"))})
