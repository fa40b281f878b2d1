"""manage.py verify_round: one round per line of JSON, in the form of pf1-vectors.json."""

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from games.engine import verify_round

PROJECT = Path(__file__).resolve().parents[3]
VECTORS = json.loads((PROJECT / "tests" / "data" / "pf1-vectors.json").read_text())
INPUTS = ("server_seed", "client_seed", "nonce", "decks")
SEED = "ab" * 32


def manage(*args, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SECRET_KEY": "insecure-test-only-key",
           "DJANGO_SETTINGS_MODULE": "baccarat_site.settings"}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=PROJECT, env=env, input=stdin,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def command(*args) -> str:
    out = StringIO()
    call_command("verify_round", *args, stdout=out)
    return out.getvalue()


def command_error(*args) -> CommandError:
    with pytest.raises(CommandError) as raised:
        command(*args)
    assert raised.value.returncode == 2
    assert "\n" not in str(raised.value)
    return raised.value


def as_line(vector) -> str:
    return json.dumps({key: vector[key] for key in INPUTS}, ensure_ascii=False)


def single_args(server_seed=SEED, client_seed="client", nonce="0", decks=None):
    args = ["--server-seed", server_seed, "--client-seed", client_seed, "--nonce", nonce]
    return args + (["--decks", decks] if decks is not None else [])


# ---- One round -------------------------------------------------------------------------------------

@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['decks']}d-{v['nonce']}")
def test_one_round_prints_the_vector_as_one_line_of_json(vector):
    output = command(*single_args(vector["server_seed"], vector["client_seed"], str(vector["nonce"]),
                                  str(vector["decks"])))
    assert output.endswith("\n") and output.count("\n") == 1
    printed = json.loads(output)
    assert printed == vector["expected"]
    assert list(printed) == list(vector["expected"])


def test_decks_default_to_eight():
    output = command(*single_args(nonce="7"))
    assert json.loads(output) == verify_round(SEED, "client", 7, 8)
    assert json.loads(output) != verify_round(SEED, "client", 7, 1)


def test_output_is_json_dumps_with_ensure_ascii_false():
    output = command(*single_args(nonce="3"))
    assert output == json.dumps(verify_round(SEED, "client", 3, 8), ensure_ascii=False) + "\n"


@pytest.mark.parametrize(("args", "field"), [
    (single_args(server_seed="AB" * 32), "server_seed"),
    (single_args(server_seed="ab" * 31), "server_seed"),
    (single_args(server_seed="xyz"), "server_seed"),
    (single_args(client_seed=""), "client_seed"),
    (single_args(client_seed="x" * 65), "client_seed"),
    (single_args(client_seed="bell\a"), "client_seed"),
    (single_args(nonce="-1"), "nonce"),
    (single_args(nonce="1.5"), "nonce"),
    (single_args(nonce="abc"), "nonce"),
    (single_args(nonce="+1"), "nonce"),
    (single_args(nonce="9223372036854775808"), "nonce"),
    (single_args(decks="0"), "decks"),
    (single_args(decks="9"), "decks"),
    (single_args(decks="eight"), "decks"),
    (["--client-seed", "c", "--nonce", "1"], "server_seed"),
    (["--server-seed", SEED, "--nonce", "1"], "client_seed"),
    (["--server-seed", SEED, "--client-seed", "c"], "nonce"),
])
def test_bad_input_is_an_error_naming_the_field(args, field):
    error = command_error(*args)
    assert str(error).startswith(f"{field}: ")


def test_error_never_shows_the_server_seed():
    secret = "0123456789abcdef" * 4
    error = command_error(*single_args(server_seed=secret, nonce="-5"))
    assert secret not in str(error)


def test_bad_nonce_exits_2_with_one_line_on_stderr():
    completed = manage("verify_round", *single_args(nonce="-1"))
    assert completed.returncode == 2
    assert completed.stdout == ""
    lines = completed.stderr.splitlines()
    assert len(lines) == 1
    assert "nonce" in lines[0]


def test_argparse_errors_exit_2():
    completed = manage("verify_round", "--no-such-option")
    assert completed.returncode == 2
    assert "--no-such-option" in completed.stderr


# ---- --input ---------------------------------------------------------------------------------------

def test_input_file_reproduces_every_vector_in_order(tmp_path):
    path = tmp_path / "rounds.jsonl"
    path.write_text("".join(as_line(v) + "\n" for v in VECTORS), encoding="utf-8")
    lines = command("--input", str(path)).splitlines()
    assert [json.loads(line) for line in lines] == [v["expected"] for v in VECTORS]


def test_input_from_stdin_reproduces_every_vector_in_order():
    completed = manage("verify_round", "--input", "-", stdin="".join(as_line(v) + "\n" for v in VECTORS))
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    lines = completed.stdout.splitlines()
    assert [json.loads(line) for line in lines] == [v["expected"] for v in VECTORS]


def test_input_over_many_lines_and_seed_pairs_matches_verify_round(tmp_path):
    pairs = [("%064x" % (i * 7919), f"client-{i}") for i in range(5)]
    rounds = [(*pairs[(i // 3) % 5], i, i % 8 + 1) for i in range(5000)]  # pairs repeat and interleave
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(json.dumps(dict(zip(INPUTS, r, strict=True))) for r in rounds) + "\n\n", encoding="utf-8")
    lines = command("--input", str(path)).splitlines()
    assert len(lines) == len(rounds)
    for index in (0, 1, 2, 3, 1234, 4096, 4999):
        assert json.loads(lines[index]) == verify_round(*rounds[index])


def write_lines(tmp_path, *lines) -> str:
    path = tmp_path / "input.jsonl"
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return str(path)


GOOD_LINE = json.dumps({"server_seed": SEED, "client_seed": "c", "nonce": 1, "decks": 8})


def line_with(**changes) -> str:
    item = {"server_seed": SEED, "client_seed": "c", "nonce": 1, "decks": 8, **changes}
    return json.dumps({k: v for k, v in item.items() if v is not ...})


@pytest.mark.parametrize(("bad_line", "message"), [
    (line_with(server_seed="AB" * 32), "server_seed: "),
    (line_with(server_seed=123), "server_seed: "),
    (line_with(client_seed=""), "client_seed: "),
    (line_with(client_seed="y" * 65), "client_seed: "),
    (line_with(client_seed="esc\u001b"), "client_seed: "),
    (line_with(client_seed=["c"]), "client_seed: "),
    (line_with(nonce=-1), "nonce: "),
    (line_with(nonce=1.5), "nonce: "),
    (line_with(nonce="1"), "nonce: "),
    (line_with(nonce=True), "nonce: "),
    (line_with(decks=0), "decks: "),
    (line_with(decks=9), "decks: "),
    (line_with(decks=True), "decks: "),
    (line_with(decks=8.0), "decks: "),
    (line_with(decks=...), "decks: missing"),
    (line_with(server_seed=...), "server_seed: missing"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (b"\xff\xfe", "not valid UTF-8"),
])
def test_bad_line_is_an_error_naming_the_line_and_the_field(tmp_path, bad_line, message):
    path = write_lines(tmp_path, GOOD_LINE, GOOD_LINE, bad_line, GOOD_LINE)
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("verify_round", "--input", path, stdout=out)
    assert raised.value.returncode == 2
    assert str(raised.value).startswith(f"line 3: {message}")
    assert "\n" not in str(raised.value)
    # The rounds of the lines before the bad one were printed, and none after.
    assert out.getvalue().splitlines() == [json.dumps(verify_round(SEED, "c", 1, 8))] * 2


def test_blank_lines_are_skipped_but_counted(tmp_path):
    path = write_lines(tmp_path, GOOD_LINE, "", "   ", line_with(nonce=-3))
    with pytest.raises(CommandError, match=r"^line 4: nonce: "):
        call_command("verify_round", "--input", path, stdout=StringIO())


def test_bad_input_line_exits_2_with_one_stderr_line_naming_line_and_field():
    stdin = "\n".join([GOOD_LINE, GOOD_LINE, line_with(decks=12)])
    completed = manage("verify_round", "--input", "-", stdin=stdin)
    assert completed.returncode == 2
    lines = completed.stderr.splitlines()
    assert len(lines) == 1
    assert "line 3: decks: " in lines[0]
    assert len(completed.stdout.splitlines()) == 2


def test_input_and_single_round_options_do_not_mix(tmp_path):
    error = command_error("--input", write_lines(tmp_path, GOOD_LINE), "--nonce", "1")
    assert str(error).startswith("nonce: ")


def test_missing_input_file_is_an_error():
    error = command_error("--input", "/nonexistent/rounds.jsonl")
    assert str(error).startswith("input: ")
