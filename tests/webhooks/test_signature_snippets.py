"""The signature verification code that docs/integration/webhooks.md gives receivers, in Python and in
JavaScript, run as printed there against the product's own signatures (webhooks.signing)."""

import base64
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from webhooks.signing import signature_header

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integration" / "webhooks.md"
BODY = json.dumps({"id": "evt-1", "type": "round.voided", "data": {"round": 7}}).encode()


def snippet(language: str) -> str:
    [code] = re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)
    return code


def cases() -> list:
    now = int(time.time())
    return [
        (signature_header(["old-secret", "new-secret"], now, BODY), "new-secret", BODY, True),
        (signature_header(["old-secret", "new-secret"], now, BODY), "old-secret", BODY, True),
        (signature_header(["new-secret"], now, BODY), "wrong-secret", BODY, False),
        (signature_header(["new-secret"], now, BODY), "new-secret", BODY + b" ", False),
        (signature_header(["new-secret"], now - 3600, BODY), "new-secret", BODY, False),
    ]


def test_the_python_snippet():
    namespace = {}
    exec(snippet("python"), namespace)  # the documentation's own code
    for header, secret, body, expected in cases():
        assert namespace["verify"](header, body, secret) is expected


def test_the_javascript_snippet(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "verify.js"
    script.write_text(snippet("javascript") + """
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map(([h, s, b]) => verify(h, Buffer.from(b, "base64"), s))));
""")
    given = [[header, secret, base64.b64encode(body).decode()] for header, secret, body, _ in cases()]
    result = subprocess.run([node, str(script)], input=json.dumps(given), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [expected for *_, expected in cases()]
