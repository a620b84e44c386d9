"""README.md's Python example prints what the README says it prints: the block after the
`readme-python-example` marker runs in examples/python (a fresh interpreter, as a reader would run it), and
its output is compared with the `text` block that follows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def blocks() -> tuple[str, str]:
    readme = (ROOT / "README.md").read_text()
    after = readme.split("<!-- readme-python-example:", 1)[1]
    code = re.search(r"```python\n(.*?)```", after, re.S)
    shown = re.search(r"```text\n(.*?)```", after, re.S)
    assert code and shown, "the README's Python example or its output is missing"
    return code.group(1), shown.group(1)


def test_the_readme_python_example_prints_what_the_readme_shows() -> None:
    code, shown = blocks()
    assert len(code.strip().splitlines()) <= 10
    done = subprocess.run(
        [sys.executable, "-"], input=code, cwd=ROOT / "examples" / "python", capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown
