"""A Content-Security-Policy on every response (Django 5.2 has none of its own).

The policy is the ``CONTENT_SECURITY_POLICY`` setting: scripts and style sheets only from the site's
own files, so no inline script runs, whatever a page's text holds. Every page keeps to it: no
template has an inline script or event handler (a test reads them all), the API documentation is
drf-spectacular's split view (its script is a file of its own), and the browser tests fail on any
violation a page reports. A response that already carries the header keeps its own.
"""

from django.conf import settings

HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and HEADER not in response:
            response[HEADER] = policy
        return response
