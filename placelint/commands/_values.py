"""The commands' option values, converted without importing pydantic.

Typer 0.29 converts every option and argument value (a missing one too, and ``--help``,
unless a flag's value is already a bool) through a pydantic ``TypeAdapter`` that it builds
on first use; the first one imports pydantic, which costs about as much as analysing a
small model (``placelint check`` on a sample). No declaration avoids it: ``str``, ``int``,
``Path``, ``list[...]`` and a ``--x/--no-x`` flag left out all go through it. ``Command``,
the class of every placelint command, and ``Group``, the app's, give each of their
parameters a conversion that does Typer's own work for the values the commands take in
practice (a missing value; a ``str``; a ``Path``, checked by Typer's ``coerce_cli_path``; a
plain decimal ``int`` or ``float``, or a default of that type, within the option's
``min``/``max``; a list of those) and hands any other value to the conversion Typer would
have used, so that what is accepted, and every error message, stays Typer's. With a Typer
that has no such conversion (before 0.2x), they change nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from typer.core import TyperCommand, TyperGroup

try:    # Typer's conversion of values (0.29): private names, so looked up defensively
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
except ImportError:     # pragma: no cover - another Typer: it converts values itself
    RuntimeParam = None

_INT = re.compile(r"[0-9]+")
_FLOAT = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


class _Other(Exception):
    """A value the plain conversion leaves to Typer's."""


def _plain(annotation: Any, value: Any, info: Any, param: Any, ctx: Any) -> Any:
    """``value`` converted as Typer converts it, or ``_Other``."""
    if get_origin(annotation) is list and isinstance(value, (list, tuple)):
        (item,) = get_args(annotation)
        return [_plain(item, v, info, param, ctx) for v in value]
    if info.parser is not None:
        raise _Other
    if annotation is int or annotation is float:
        if type(value) is annotation:   # a default
            number = value
        elif isinstance(value, str) and (_INT if annotation is int else _FLOAT).fullmatch(value):
            number = annotation(value)
        else:
            raise _Other
        if info.clamp or info.min is not None and number < info.min \
                or info.max is not None and number > info.max:
            raise _Other    # Typer's clamping or message
        return number
    if annotation is Path and info.path_type is None and (isinstance(value, Path) or value
                                                          and isinstance(value, str)):
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    if annotation is str and isinstance(value, str):
        return value
    raise _Other


if RuntimeParam is not None:
    @dataclass(frozen=True)
    class _Value(RuntimeParam):
        """One parameter's conversion: ``_plain``, else Typer's (built on first need)."""

        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                return _plain(self.annotation, value, self.parameter_info, param, ctx)
            except _Other:
                typer_own = build_runtime_param(self.descriptor)
                return typer_own._coerce_value(value, param=param, ctx=ctx)


def _plainly(params: list) -> None:
    """Give each Typer parameter of ``params`` the ``_Value`` conversion."""
    if RuntimeParam is None:
        return      # pragma: no cover
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is not None and getattr(param, "_runtime_param", 0) is None \
                and getattr(descriptor, "file_annotation", 0) is None:
            try:
                param._runtime_param = _Value(parameter_info=descriptor.parameter_info,
                                              annotation=descriptor.annotation,
                                              descriptor=descriptor)
            except (TypeError, AttributeError):     # pragma: no cover - another Typer
                return                              # whose conversion stays its own


class Command(TyperCommand):
    """A placelint command: a Typer command whose values ``_plain`` converts."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plainly(self.get_params(ctx))
        return super().parse_args(ctx, args)


class Group(TyperGroup):
    """The ``placelint`` app: a Typer group whose own options (``--version``, and Typer's
    ``--install-completion``, added after the group is made) ``_plain`` converts."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plainly(self.get_params(ctx))
        return super().parse_args(ctx, args)
