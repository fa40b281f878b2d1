"""The 403 page: styled, naming the permission needed and the roles that hold it, with the way back."""

from games.models import GameInstance
from tests.admin.helpers import admin_url
from tests.conftest import verified_login


def test_a_refused_action_names_the_permission_and_the_roles_that_have_it(as_support, play):
    round_ = play(deal=False)

    response = as_support.get(admin_url(round_, "void"), HTTP_REFERER=f"http://testserver{admin_url(round_, 'change')}")

    assert response.status_code == 403
    page = response.content.decode()
    assert "<code>games.void_round</code>" in page
    assert "<strong>Operators</strong>" in page and "<strong>Administrators</strong>" in page
    assert "in the role\n    <strong>Support</strong>" in page
    assert f'href="http://testserver{admin_url(round_, "change")}" id="denied-back"' in page
    assert 'id="site-name"' in page  # the back-office's own header, not a bare "403 Forbidden"


def test_django_s_own_pages_name_the_permission_from_the_url(as_support):
    response = as_support.get(admin_url(GameInstance, "add"))
    assert response.status_code == 403
    assert "<code>games.add_gameinstance</code>" in response.content.decode()


def test_a_page_of_the_site_names_its_permission(client, django_user_model):
    user = django_user_model.objects.create_user("staff-only", password="x", is_staff=True)
    verified_login(client, user)
    response = client.get("/admin/dashboard/")
    assert response.status_code == 403
    assert "<code>settlement.view_dashboard</code>" in response.content.decode()
    assert "in no role" in response.content.decode()
