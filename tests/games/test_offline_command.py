"""The public page's "verify offline" command runs the verifier with the round's values and nothing else,
whatever the client seed holds: every argument is quoted for a POSIX shell, and a seed with characters
that do not show goes as hexadecimal. Pasted into sh or bash, a hostile seed runs nothing."""

import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from games.engine import Dealer, server_seed_hash

SCRIPT = Path(__file__).resolve().parents[2] / "games" / "static" / "games" / "pf1_verify.py"
SERVER_SEED = "0" * 63 + "1"
HOSTILE = [
    "';touch pwned;'", "$(touch pwned)", "`touch pwned`", "a\";touch pwned;\"b", "x && touch pwned", "x|touch pwned",
    "-h", "--hash=0", "a  b", "\\", "$HOME", "!!", "Ünïcödé ♠", "🂡", "x>pwned", "*", "'",
]
INVISIBLE = ["line\nbreak;touch pwned", "cr\rtouch pwned", "bidi\u202e';touch pwned;'", "nbsp\u00a0x", "zw\u200bj",
             "tab\t;touch pwned"]
SHELLS = [shell for shell in ("sh", "bash", "dash") if shutil.which(shell)]


def command_for(client_seed: str, nonce: int = 3, decks: int = 8) -> str:
    from games.views import offline_command

    return offline_command(server_seed=SERVER_SEED, client_seed=client_seed, nonce=nonce, decks=decks,
                           server_seed_hash=server_seed_hash(SERVER_SEED))


def run_pasted(command: str, shell: str, workdir: Path) -> subprocess.CompletedProcess:
    """Run the line as a player would paste it, in a directory holding only the verifier, with
    python3 this interpreter."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "python3").exists():
        (bin_dir / "python3").symlink_to(sys.executable)
    shutil.copy(SCRIPT, workdir / "pf1_verify.py")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([shell, "-c", command], cwd=workdir, env=env, capture_output=True, encoding="utf-8",
                          timeout=60, check=False)


def dealt(client_seed: str) -> dict:
    """The round by the engine (Dealer: PF-1 with no input checks, as the verifier script has none)."""
    return Dealer(SERVER_SEED, client_seed).play(3, 8).as_dict()


@pytest.mark.parametrize("client_seed", HOSTILE + INVISIBLE, ids=repr)
def test_the_command_is_the_verifier_with_these_values_and_nothing_else(client_seed):
    command = command_for(client_seed)

    argv = shlex.split(command)
    seed_argument = (f"--client-seed={client_seed}" if client_seed.isprintable()
                     else f"--client-seed-hex={client_seed.encode().hex()}")
    assert argv == ["python3", "pf1_verify.py", f"--server-seed={SERVER_SEED}", seed_argument, "--nonce=3",
                    "--decks=8", f"--hash={server_seed_hash(SERVER_SEED)}"]
    assert command.isprintable(), "no line break, control or invisible character in what is copied"


@pytest.mark.skipif(not SHELLS, reason="no POSIX shell")
@pytest.mark.parametrize("client_seed", HOSTILE + INVISIBLE, ids=repr)
def test_pasted_into_a_shell_it_runs_nothing_but_the_verifier(tmp_path, client_seed):
    expected = dealt(client_seed)
    for shell in SHELLS:
        done = run_pasted(command_for(client_seed), shell, tmp_path)

        assert done.returncode == 0, (shell, done.stderr)
        assert sorted(path.name for path in tmp_path.iterdir()) == ["bin", "pf1_verify.py"], shell
        printed = json.loads(done.stdout.splitlines()[0])
        assert printed["cards"] == expected["cards"] and printed["outcome"] == expected["outcome"], shell
        assert "hash matches" in done.stderr


@pytest.mark.django_db
def test_the_public_page_shows_the_quoted_command(client, tmp_path):
    client_seed = "';touch pwned;'"

    response = client.get("/", {"server_seed": SERVER_SEED, "client_seed": client_seed, "nonce": "3", "decks": "8"})

    assert response.status_code == 200
    shown = re.search(r'<code class="command"[^>]*>(.*?)</code>', response.content.decode(), re.S)
    command = html.unescape(shown.group(1))  # what the player sees and copies
    assert shlex.split(command) == ["python3", "pf1_verify.py", f"--server-seed={SERVER_SEED}",
                                    f"--client-seed={client_seed}", "--nonce=3", "--decks=8",
                                    f"--hash={server_seed_hash(SERVER_SEED)}"]
    if SHELLS:
        done = run_pasted(command, SHELLS[0], tmp_path)
        assert done.returncode == 0, done.stderr
        assert not (tmp_path / "pwned").exists()


def test_the_verifier_takes_a_seed_as_hex_and_refuses_both_forms(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("pf1_verify_hex", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seed = "bidi\u202eseed"

    assert module.main([f"--server-seed={SERVER_SEED}", f"--client-seed-hex={seed.encode().hex()}", "--nonce=3"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == dealt(seed)["cards"]
    for argv in (["--client-seed=a", "--client-seed-hex=61"], ["--client-seed-hex=zz"], ["--client-seed-hex=ff"]):
        with pytest.raises(SystemExit):
            module.main([f"--server-seed={SERVER_SEED}", "--nonce=3", *argv])
