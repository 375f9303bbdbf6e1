"""``commands._values``: every option value converts as Typer's own (pydantic) conversion
converts it, values and error messages alike, for every parameter of every command."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import typer.main
from checkrun import SAMPLES, invoke

from placelint import cli
from placelint.commands import _values

pytestmark = pytest.mark.skipif(_values.RuntimeParam is None,
                                reason="this Typer converts values without pydantic")

#: values a command line gives (strings), and the defaults commands declare
VALUES = ["", "0", "1", "7", "007", "-1", " 2", "2 ", "1_0", "+3", "1e3", "0.5", ".5", "5.",
          "abc", "CPU:0,GPU:0", "x" * 300, str(SAMPLES), str(SAMPLES / "towers_gpu.pb"),
          "no/such/file.pb", 0, 2, 100, 30.0, 1.5, Path("samples"), None, ("a", "b"),
          (str(SAMPLES), "no/such/dir"), ("1", "2")]


def _params():
    cli._register_commands()
    group = typer.main.get_command(cli.app)
    commands = [group, *group.commands.values()]
    for command in commands:
        ctx = typer.Context(command)
        for param in command.get_params(ctx):
            if getattr(param, "type_descriptor", None) is not None:
                yield ctx, param


def _outcome(convert, value, param, ctx):
    try:
        return "value", convert(value, param=param, ctx=ctx)
    except typer.BadParameter as exc:
        return "error", exc.format_message()


def test_every_parameter_converts_as_typer_does():
    from typer._coercion import build_runtime_param

    checked = 0
    for ctx, param in _params():
        d = param.type_descriptor
        ours = _values._Value(parameter_info=d.parameter_info, annotation=d.annotation,
                              descriptor=d)
        theirs = build_runtime_param(d)
        for value in VALUES:
            expected = _outcome(theirs.coerce, value, param, ctx)
            assert _outcome(ours.coerce, value, param, ctx) == expected, \
                (param.name, d.annotation, value)
            checked += 1
    assert checked > 100 * len(VALUES) // 2


def test_a_bad_value_gets_typers_message():
    r = invoke(["check", "--isolated", "--no-cache", "--jobs", "x",
                str(SAMPLES / "towers_gpu.pb")])
    assert r.exit_code == 2
    assert "Invalid value for '--jobs' / '-j': Input should be a valid integer" in r.stderr
    r = invoke(["check", "--isolated", "--no-cache", "--batch-size", "0",
                str(SAMPLES / "towers_gpu.pb")])
    assert r.exit_code == 2
    assert "Invalid value for '--batch-size': Input should be greater than or equal to 1" \
        in r.stderr
