"""The public API: imported explicitly in `shardc/__init__.py` and typed for users' checkers,
while `import shardc` and `shardc --help` start no JAX."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import shardc

PACKAGE_DIR = Path(shardc.__file__).parent
ROOT = PACKAGE_DIR.parent


def _fresh(code: str) -> str:
    """Run `code` in a fresh interpreter; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_import_shardc_and_help_load_no_jax() -> None:
    out = _fresh(textwrap.dedent("""
        import contextlib, io, sys
        import shardc
        loaded = [m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")]
        print("import", len(loaded), sorted(loaded)[:5])
        from shardc.tools.cli import main
        for argv in (["--help"], ["propagate", "--help"], ["plan", "--help"]):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
                main(argv)
        loaded = [m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")]
        print("help", len(loaded), sorted(loaded)[:5])
        print("jit", shardc.jit.__module__)
    """))
    assert "import 0 []" in out and "help 0 []" in out, out
    assert "jit shardc.api.jitted" in out


def test_every_public_name_is_bound_by_an_import() -> None:
    assert "__getattr__" not in vars(shardc)  # no lazy table: checkers see what is imported
    for name in shardc.__all__:
        assert name in vars(shardc), name
    assert shardc.jit.__module__ == "shardc.api.jitted"
    assert shardc.Lowered.__module__ == "shardc.api.jitted"
    assert shardc.propagate.__module__ == "shardc.api.propagate"
    assert (PACKAGE_DIR / "py.typed").exists()


def test_a_users_type_checker_sees_the_real_types(tmp_path: Path) -> None:
    from mypy import api

    # the package as an installed copy lays it out (shardc/dialect, shardc/passes, ...): mypy
    # does not follow setuptools' editable-install finder
    pkg = tmp_path / "shardc"
    pkg.mkdir()
    for entry in PACKAGE_DIR.iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    for sub in ("dialect", "passes", "tools"):
        (pkg / sub).symlink_to(ROOT / sub)
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent("""
        import shardc

        def f(x: int) -> int:
            return x

        reveal_type(shardc.jit(f, mesh="x=4"))
        reveal_type(shardc.jit(mesh="x=4")(f))
        reveal_type(shardc.jit(f, mesh="x=4").lower(1))
        reveal_type(shardc.propagate)
        reveal_type(shardc.ShardcError)
    """))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out, err, _ = api.run(["--cache-dir", str(tmp_path / "cache"), "--no-error-summary",
                               "--follow-imports=silent", "user.py"])
    finally:
        os.chdir(cwd)
    revealed = [line.split("Revealed type is ", 1)[1] for line in out.splitlines()
                if "Revealed type is" in line]
    assert len(revealed) == 5, out + err
    assert revealed[0] == '"shardc.api.jitted.Jitted"', out
    assert revealed[1] == '"shardc.api.jitted.Jitted"', out
    assert revealed[2] == '"shardc.api.jitted.Lowered"', out
    assert revealed[3].startswith('"def (text: str, *, options: shardc.passes.propagation'), out
    assert revealed[3].endswith('-> str"'), out
    assert revealed[4].endswith('-> shardc.dialect.errors.ShardcError"'), out
