"""Run ``manage.py`` of another source tree (the previous release) with that tree's code only.

    python run_tree.py <tree> <manage.py arguments...>

Run as a script by tests/upgrade (never imported). The virtualenv has the current checkout installed
in editable mode, and setuptools' editable finder sits on ``sys.meta_path``: the old tree first on
``sys.path`` wins for the top-level packages, but a submodule the old tree lacks (``games.x``) would
quietly be found in the current checkout. So this runner drops the editable finder and its path hook,
puts the tree first on ``sys.path``, runs the tree's ``manage.py`` from the tree, and then fails
(exit status 97, naming the modules) if any module was loaded from $RUN_TREE_FORBIDDEN_ROOT (the
current checkout) outside the virtualenv.
"""

import os
import runpy
import sys
from pathlib import Path

LEAK_STATUS = 97


def is_editable_hook(item) -> bool:
    module = getattr(item, "__module__", "") or ""
    return module.startswith("__editable__") or "_Editable" in getattr(item, "__qualname__", "")


def leaked_modules(forbidden_root: Path, tree: Path) -> list:
    allowed = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), tree]
    this_file = Path(__file__).resolve()
    leaks = []
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        path = Path(file).resolve()
        if path == this_file:
            continue
        if path.is_relative_to(forbidden_root) and not any(path.is_relative_to(root) for root in allowed):
            leaks.append(f"{name} ({path})")
    return leaks


def main() -> int:
    tree = Path(sys.argv[1]).resolve()
    forbidden = os.environ.get("RUN_TREE_FORBIDDEN_ROOT")
    sys.meta_path[:] = [finder for finder in sys.meta_path if not is_editable_hook(finder)]
    sys.path_hooks[:] = [hook for hook in sys.path_hooks if not is_editable_hook(hook)]
    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [str(tree)] + [entry for entry in sys.path
                                 if entry not in (here, str(tree)) and not entry.startswith("__editable__")]
    sys.path_importer_cache.clear()
    os.chdir(tree)
    sys.argv = [str(tree / "manage.py"), *sys.argv[2:]]
    status = 0
    try:
        runpy.run_path(str(tree / "manage.py"), run_name="__main__")
    except SystemExit as exit_:
        if isinstance(exit_.code, str):
            print(exit_.code, file=sys.stderr)
            status = 1
        else:
            status = exit_.code or 0
    if forbidden:
        leaks = leaked_modules(Path(forbidden).resolve(), tree)
        if leaks:
            print(f"run_tree: modules of {forbidden} were loaded while running {tree}:\n  " + "\n  ".join(leaks),
                  file=sys.stderr)
            return LEAK_STATUS
    return status


if __name__ == "__main__":
    sys.exit(main())
