"""Configuration files: ``[tool.placelint]`` in ``pyproject.toml``, or ``placelint.toml``.

The file is found by walking up from the current directory: in each directory
``placelint.toml`` wins over ``pyproject.toml``, and a ``pyproject.toml`` without a
``[tool.placelint]`` table is passed over. ``placelint.toml`` holds the keys at top level.
Keys are kebab-case (``fail-on``; ``fail_on`` is accepted too). An unknown key or a bad
value is a ``ConfigError`` (the command line turns it into a usage error, exit 2).

Paths in the file (``baseline``, ``cache-dir``, ``exclude`` patterns with a ``/``) are
relative to the file's directory.
Command-line flags override the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .formats import DETAILS, FORMATS

CONFIG_NAMES = ("placelint.toml", "pyproject.toml")


class ConfigError(ValueError):
    """A configuration file (or flag) that cannot be used; the message names the key."""


@dataclass
class Config:
    """Values read from one file, keyed by snake_case name, before they meet ``Settings``."""

    path: Path | None = None              #: the file read, None when no file applies
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """Directory that relative paths in the file are resolved against."""
        return self.path.parent if self.path is not None else Path.cwd()

    def get(self, key: str, default=None):
        return self.values.get(key, default)

    def path_value(self, key: str) -> Path | None:
        value = self.values.get(key)
        return None if value is None else (self.root / value)

    def walk_options(self, *, exclude=None, extend_exclude=None, pre_commit=False,
                     force_exclude=False):
        """``loaders.WalkOptions`` from the file, with the flags' lists on top (``--exclude``
        replaces ``exclude``; ``--extend-exclude`` adds to ``extend-exclude``)."""
        from .loaders import WalkOptions
        opts = WalkOptions(root=self.root, pre_commit=pre_commit,
                           force_exclude=force_exclude or pre_commit,
                           respect_gitignore=self.values.get("respect_gitignore", True))
        if exclude is not None:
            opts.exclude = list(exclude)
        elif "exclude" in self.values:
            opts.exclude = list(self.values["exclude"])
        opts.extend_exclude = [*self.values.get("extend_exclude", ()), *(extend_exclude or ())]
        return opts

    def apply(self, settings) -> None:
        """Fill ``settings`` (a ``placelint.settings.Settings``) from the file."""
        for key, setter in _SETTINGS_SETTERS.items():
            if key in self.values:
                setter(settings, self.values[key])
        cluster = self.values.get("cluster")
        if isinstance(cluster, str):
            from .model.cluster import Cluster, ClusterError
            try:
                cluster = Cluster.read(self.root / cluster)
            except ClusterError as exc:
                raise ConfigError(f"{self.path}: cluster: {exc}") from None
            cluster = Cluster(cluster.jobs, cluster.session_task, self.values["cluster"])
        if cluster is not None:
            settings.cluster = cluster


# -- value checkers: each returns the converted value or raises ConfigError ----------

def _str(key, v):
    if not isinstance(v, str):
        raise ConfigError(f"{key} must be a string, not {_tname(v)}")
    return v


def _bool(key, v):
    if not isinstance(v, bool):
        raise ConfigError(f"{key} must be true or false, not {_tname(v)}")
    return v


def _int(minimum: int) -> Callable:
    def check(key, v):
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ConfigError(f"{key} must be an integer >= {minimum}, not {v!r}")
        return v
    return check


def _str_list(key, v):
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{key} must be a list of strings")
    return list(v)


def _devices(key, v):
    from .model.devices import DeviceSet, DeviceSetError
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        text = ",".join(v)
    elif isinstance(v, dict) and all(isinstance(n, int) and not isinstance(n, bool)
                                     for n in v.values()):
        text = ",".join(f"{t}={n}" for t, n in v.items())
    elif isinstance(v, str):
        text = v
    else:
        raise ConfigError(f"{key} must be a string (\"CPU:0,GPU:0\"), a list of device names, "
                          "or a table of counts ({CPU = 1, GPU = 2})")
    try:
        return DeviceSet.parse(text, source="config")
    except DeviceSetError as exc:
        raise ConfigError(f"{key}: {exc}") from None


def _cluster(key, v):
    """A ClusterSpec file (relative to the config file) or an inline table of jobs."""
    from .model.cluster import Cluster, ClusterError
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        try:
            return Cluster.from_dict(v, source="config")
        except ClusterError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    raise ConfigError(f"{key} must be a ClusterSpec JSON file name or a table of job -> "
                      "task addresses ({ps = [\"host:2222\"], worker = [...]})")


def _severity(key, v):
    from .diagnostics import Severity
    try:
        return Severity.parse(_str(key, v))
    except ValueError as exc:
        raise ConfigError(f"{key}: {exc}") from None


def _selectors(key, v):
    items = _str_list(key, v)
    for item in items:
        check_selector(item, key)
    return items


def _severity_overrides(key, v):
    """``{"PL2" = "info", "unknown-device" = "warning"}`` -> ``{code: Severity}``."""
    if not isinstance(v, dict):
        raise ConfigError(f"{key} must be a table of rule -> severity")
    out = {}
    for selector, sev in v.items():
        severity = _severity(f"{key}.{selector}", sev)
        for code in check_selector(selector, key):
            out[code] = severity
    return out


def _per_node_ignores(key, v):
    """``{"tower_*/save/*" = ["PL102"]}``: node-name glob -> rule selectors."""
    if not isinstance(v, dict):
        raise ConfigError(f"{key} must be a table of node-name glob -> list of rules")
    return {glob: _selectors(f"{key}.\"{glob}\"", sel) for glob, sel in v.items()}


def _size(key, v):
    """Bytes: an integer, or a string with a unit as ``--max-text-size`` takes (``128M``)."""
    from .humanize import parse_size
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return v
    if isinstance(v, str):
        try:
            return parse_size(v)
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    raise ConfigError(f"{key} must be a size such as \"128M\" or a number of bytes")


def _memory(key, v):
    """``"GPU=16GiB,CPU=64GiB"`` or a table ``{GPU = "16GiB", "GPU:1" = "8GiB"}``."""
    from .analyses.memory_budget import BudgetError, budget_size, parse_budget
    try:
        if isinstance(v, str):
            return parse_budget(v)
        if isinstance(v, dict) and v:
            return {str(d): budget_size(size) for d, size in v.items()}
    except BudgetError as exc:
        raise ConfigError(f"{key}: {exc}") from None
    raise ConfigError(f"{key} must be a string (\"GPU=16GiB,CPU=64GiB\") or a table of "
                      "device -> size ({GPU = \"16GiB\"})")


def _fraction(key, v):
    from .analyses.memory_budget import BudgetError, check_fraction
    try:
        return check_fraction(v)
    except BudgetError as exc:
        raise ConfigError(f"{key} {exc}") from None


def _format(key, v):
    v = _str(key, v)
    if v not in FORMATS and v not in DETAILS:
        raise ConfigError(f"{key} must be one of {', '.join(DETAILS + FORMATS)}, not {v!r}")
    return v


#: key -> checker. Every key a file may hold; anything else is an error.
KEYS: dict[str, Callable] = {
    # what to analyse against
    "devices": _devices,
    "cluster": _cluster,
    "allow_soft_placement": _bool,
    "tag": _str,
    "signature": _str,
    "whole_graph": _bool,
    "fetch": _str_list,
    "feed": _str_list,
    "step": _str,
    "place_pruned_graph": _bool,
    "max_text_size": _size,
    # which rules, how loud
    "select": _selectors,
    "ignore": _selectors,
    "severity_overrides": _severity_overrides,
    "per_node_ignores": _per_node_ignores,
    "fail_on": _severity,
    # thresholds
    "copy_warning_bytes": _int(1),
    "copy_info_bytes": _int(1),
    "cores": _int(1),
    "batch_size": _int(1),
    "memory": _memory,
    "gpu_memory_fraction": _fraction,
    "memory_high_share": _fraction,
    # which files (directory walks; patterns as ruff's)
    "exclude": _str_list,
    "extend_exclude": _str_list,
    "respect_gitignore": _bool,
    # how `check` runs and reports
    "baseline": _str,
    "jobs": _int(0),
    "cache": _bool,
    "cache_dir": _str,
    "output_format": _format,
    "project_root": _str,
}


def _set_load(attr):
    def setter(s, v):
        setattr(s.load, attr, v)
    return setter


def _set(attr):
    def setter(s, v):
        setattr(s, attr, v)
    return setter


_SETTINGS_SETTERS: dict[str, Callable] = {
    "devices": _set("devices"),
    "allow_soft_placement": _set("allow_soft_placement"),
    "tag": _set_load("tag"),
    "signature": _set_load("signature"),
    "whole_graph": _set_load("whole_graph"),
    "fetch": _set_load("fetch"),
    "feed": _set_load("feed"),
    "step": _set_load("step"),
    "place_pruned_graph": _set_load("place_pruned_graph"),
    "max_text_size": _set_load("max_text_bytes"),
    "select": _set("select"),
    "ignore": _set("ignore"),
    "severity_overrides": _set("severity_overrides"),
    "per_node_ignores": _set("per_node_ignores"),
    "fail_on": _set("fail_on"),
    "copy_warning_bytes": _set("copy_warning_bytes"),
    "copy_info_bytes": _set("copy_info_bytes"),
    "cores": _set("cores"),
    "batch_size": _set("batch_size"),
    "memory": _set("memory"),
    "gpu_memory_fraction": _set("gpu_memory_fraction"),
    "memory_high_share": _set("memory_high_share"),
}


def check_selector(selector: str, where: str = "select") -> list[str]:
    """Codes a selector names: a code prefix (``PL1``, ``PL102``) or a rule name
    (``malformed-device``). A selector that names no rule is a ``ConfigError``."""
    from .checks import all_rules
    from .checks.selector import RuleSelector
    s = RuleSelector(selector)
    codes = [r.code for r in all_rules() if s.matches(r.code, r.name)]
    if not codes:
        raise ConfigError(f"{where}: {selector!r} is neither a rule code prefix nor a rule name "
                          "(see `placelint rules`)")
    return codes


def parse_selectors(text: str, where: str) -> list[str]:
    """A comma-separated command-line list of selectors, each checked."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    for item in items:
        check_selector(item, where)
    return items


def _tname(v) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def validate(raw: dict, source: str) -> dict[str, Any]:
    """Check every key and value of a ``[tool.placelint]`` table; return snake_case values."""
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name not in KEYS:
            known = ", ".join(k.replace("_", "-") for k in KEYS)
            raise ConfigError(f"{source}: unknown key {key!r} (known keys: {known})")
        if name in values:
            raise ConfigError(f"{source}: key {key!r} is given twice")
        try:
            values[name] = KEYS[name](key, value)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    return values


def _read_toml(path: Path) -> dict:
    import tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def table_of(path: Path) -> dict | None:
    """The placelint table of a config file, or None for a pyproject.toml without one."""
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("placelint")
        if table is not None and not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.placelint] must be a table")
        return table
    return data


def find_config(start: Path | None = None) -> Path | None:
    """The nearest config file at or above ``start`` (default: the current directory)."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file() and table_of(candidate) is not None:
                return candidate
    return None


def load_config(path: Path | None = None, *, isolated: bool = False) -> Config:
    """Read ``path`` (``--config``), else the discovered file; ``isolated``: no file."""
    if isolated:
        return Config()
    if path is None:
        path = find_config()
        if path is None:
            return Config()
    elif not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    table = table_of(path)
    if table is None:
        raise ConfigError(f"{path} has no [tool.placelint] table")
    return Config(path=path.resolve(), values=validate(table, str(path)))
