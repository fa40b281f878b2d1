"""Browser tests: Playwright drives Debian's chromium (headless) against pytest-django's live server.

- The browser is /usr/bin/chromium (or $CHROMIUM), never one Playwright downloads: without it the
  tests are skipped, or fail under REQUIRE_SERVICES=1 (CI installs chromium).
- ``live_server`` uses a transactional database: data made here is committed, and the server thread
  sees it. Static files (the admin's, games/rtp_preview.js) are served by the live server itself.
- Each flow keeps screenshots in artifacts/screenshots/<test>-<step>.png (``shot``).
- No page may break its Content-Security-Policy: every page reports each violation on the console
  (``CSP_LISTENER``), and a test whose pages reported any fails (``context``).
"""

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from games import services as game_services
from tests.conftest import service_missing, totp_code, totp_device

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"))
PASSWORD = "correct-horse-battery"  # tests.conftest.make_user's
TIMEOUT_MS = 10_000

expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch options, with Debian's chromium and the flags of a closed network."""
    executable = shutil.which(CHROMIUM)
    if executable is None:
        service_missing(f"needs chromium at {CHROMIUM} (apt-get install chromium); no browser is downloaded")
    return {**browser_type_launch_args, "executable_path": executable, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}, "locale": "en-US",
            "timezone_id": "UTC"}


@pytest.fixture(scope="session", autouse=True)
def _django_orm_beside_playwright():
    """Playwright's sync API keeps an asyncio loop in the main thread from its first use to the end of
    the session, and Django refuses ORM calls (the test's own, the test database's set-up and flush,
    later tests' too) where it sees a running loop. They are synchronous all the same: allow them,
    before the first browser fixture starts and until the session ends (Playwright's own advice)."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


# Added to every page before its own scripts (Playwright's init scripts are not subject to the page's
# policy): each violation the page reports is written to the console, where ``context`` collects it.
CSP_VIOLATION = "CSP violation:"
CSP_LISTENER = """document.addEventListener("securitypolicyviolation", (event) => console.error(
  "CSP violation: " + event.violatedDirective + " blocked " + (event.blockedURI || "inline")
  + " in " + event.documentURI + " (" + event.sourceFile + ":" + event.lineNumber + ") " + (event.sample || "")));"""


def csp_violations_of(context) -> list:
    """Console messages of the context's pages that report a Content-Security-Policy violation."""
    violations = []
    context.add_init_script(CSP_LISTENER)
    context.on("console", lambda message: violations.append(message.text)
               if CSP_VIOLATION in message.text or "Content Security Policy" in message.text else None)
    return violations


@pytest.fixture
def context(context):
    """pytest-playwright's context; the test fails if any of its pages broke its Content-Security-Policy."""
    context.csp_violations = csp_violations_of(context)
    yield context
    assert context.csp_violations == [], "pages broke their Content-Security-Policy"


@pytest.fixture
def page(page: Page) -> Page:
    page.set_default_timeout(TIMEOUT_MS)
    page.set_default_navigation_timeout(TIMEOUT_MS)
    return page


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.browser_test_failed = report.failed
    return report


@pytest.fixture
def shot(request, page):
    """shot("step") saves a full-page screenshot as artifacts/screenshots/<test name>-<step>.png.

    A test that fails leaves one more, <test name>-failed.png, of the page as the failure left it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    test_name = re.sub(r"[^\w.-]+", "_", request.node.originalname)
    for stale in SCREENSHOTS.glob(f"{test_name}-*.png"):  # of an earlier run
        stale.unlink()

    def take(step: str) -> Path:
        path = SCREENSHOTS / f"{test_name}-{step}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    yield take
    if getattr(request.node, "browser_test_failed", False) and not page.is_closed():
        take("failed")


# DOCS_SCREENSHOTS=1: the operator guide's tests save its pictures into docs/guide/images/ (at
# GUIDE_WIDTH × GUIDE_HEIGHT, the browser window of a laptop), and the same views on a desktop's and a
# phone's screen (GUIDE_OTHER_SIZES) into artifacts/screenshots/guide/, to look at; a view the guide
# shows as a phone has it (``phone=True``) goes into the docs too, as <name>-phone.png.
GUIDE_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "guide" / "images"
GUIDE_WIDTH, GUIDE_HEIGHT = 1366, 768
GUIDE_OTHER_SIZES = {"1920": (1920, 1080), "phone": (390, 844)}


def fits_its_window(page) -> bool:
    """Nothing makes the document wider than the window (no sideways scroll, nothing cut off at the right),
    once the page has laid itself out again for the new window size (its charts resize a moment later)."""
    # Polled from here: wait_for_function would evaluate a string, which the pages' CSP refuses.
    for _ in range(30):
        if page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"):
            return True
        page.wait_for_timeout(100)
    return False


@pytest.fixture
def guide_shot(page):
    """guide_shot("name", locator=None, phone=False) checks that the page fits a phone's and a desktop's
    window as well as the laptop's, and saves each view (docs/guide/images/<name>.png and the others, as
    above) when DOCS_SCREENSHOTS=1, scrolled so that ``locator`` (when given) is in the middle."""
    page.set_viewport_size({"width": GUIDE_WIDTH, "height": GUIDE_HEIGHT})
    wanted = os.environ.get("DOCS_SCREENSHOTS") == "1"

    def save(path: Path, locator, full_page=False):
        if locator is not None:
            locator.evaluate("element => element.scrollIntoView({block: 'center'})")
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), animations="disabled", caret="initial", full_page=full_page)

    def take(name: str, locator=None, phone: bool = False):
        for size, (width, height) in GUIDE_OTHER_SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            if wanted:
                if phone and size == "phone":
                    save(GUIDE_IMAGES / f"{name}-phone.png", locator)
                save(SCREENSHOTS / "guide" / f"{name}-{size}.png", locator, full_page=True)  # the whole page
            assert fits_its_window(page), f"{name} is wider than a {width} px window"
        page.set_viewport_size({"width": GUIDE_WIDTH, "height": GUIDE_HEIGHT})
        assert fits_its_window(page), f"{name} is wider than a {GUIDE_WIDTH} px window"
        if wanted:
            save(GUIDE_IMAGES / f"{name}.png", locator)

    return take


@pytest.fixture
def sign_in(live_server):
    """sign_in(page, user) signs in through the admin's login form and then its second factor's, with
    the code the person's authenticator app shows (computed from their TOTP device's secret)."""

    def run(page: Page, user, next_path: str = "/admin/"):
        device = totp_device(user)
        page.goto(f"{live_server.url}/admin/login/?next={next_path}")
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_label("Code").fill(totp_code(device))
        page.get_by_role("button", name="Verify").click()
        expect(page.locator("#user-tools")).to_contain_text(user.get_username())

    return run


@pytest.fixture
def play(integration):
    """play(game, bets=[(account, "BANKER", "10.00"), ...]) opens a round, takes the bets and deals it.

    The settlement task runs in-process when the deal commits (no broker in the tests)."""

    def run(game, bets=()):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        for number, (account, bet_type, stake) in enumerate(bets):
            game_services.bet_place(round_id=round_.pk, account_external_id=account.external_id, bet_type=bet_type,
                                    stake=stake, idempotency_key=f"r{round_.pk}-{number}", client=integration)
        game_services.round_deal(round_id=round_.pk, actor=integration)
        round_.refresh_from_db()
        return round_

    return run
