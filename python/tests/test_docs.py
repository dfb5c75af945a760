"""The example of docs/python.md runs and its assertion holds (on every rank count the
suites run on)."""

import pathlib
import re


def test_mpi4py_fft_style_example_runs():
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
    text = doc.read_text()
    section = text.split("## An mpi4py-fft-style example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 15, "the example is meant to stay 15 lines"
    exec(compile(code, str(doc), "exec"), {"__name__": "docs_example"})
