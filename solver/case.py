"""Case files: TOML -> validated dataclasses.

A case file names its module and holds that module's tables::

    module = "cdem"          # which physics module runs the case
    name = "cube_rotation"   # optional, defaults to the file stem

    [mesh]
    path = "../meshes/cube.msh"

Each module declares its schema as (nested) dataclasses whose fields are built with
:func:`param`, which records the unit and a one-line description; its
:class:`solver.modules.ModuleSpec` names the root (``config``). :func:`load_case`
reads the file, applies ``--set a.b=value`` overrides (the value is parsed as TOML; a value
that is not valid TOML is taken as a plain string), and converts the tables into the schema.
Any unknown key, wrong type, missing required field or out-of-range value raises
:class:`solver.errors.InputError` naming the file and the dotted field. Every number must be
finite: NaN never passes, and +-inf only in a field declared with ``allow_inf=True`` whose
description says what infinity means there (an unbreakable strength, an open-ended stage).

Relative paths (fields declared with ``path=True``) are resolved against the case file's
folder first and the working directory second.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import tomllib
import types
import typing
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from solver.errors import InputError
from solver.io.toml import dumps, value_text
from solver.modules import spec_for

COORDINATE_LIMIT = 1e8
"""Largest coordinate magnitude a case may give [m] (beyond any geographic coordinate)."""


def param(default: Any = MISSING, *, unit: str, doc: str, ge: float | None = None,
          gt: float | None = None, le: float | None = None, lt: float | None = None,
          path: bool = False, allow_inf: bool = False, default_factory: Any = MISSING) -> Any:
    """A case field with its unit (``"m"``, ``"Pa"``, ``"-"`` for dimensionless) and bounds.

    Its numbers must be finite unless ``allow_inf`` (then +-inf pass; NaN never does)."""
    meta = {"unit": unit, "doc": doc, "ge": ge, "gt": gt, "le": le, "lt": lt, "path": path,
            "allow_inf": allow_inf}
    if default_factory is not MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def section(cls: type, doc: str, required: bool = False) -> Any:
    """A nested table ``[name]`` of schema ``cls``; when not required, an absent table takes
    the defaults of ``cls``."""
    if required:
        return param(unit="-", doc=doc)
    return param(unit="-", doc=doc, default_factory=cls)


def exactly_one(obj: Any, names: tuple[str, ...], where: str, required: bool = True) -> None:
    """Of the fields ``names`` of ``obj``, exactly one is given (set to a non-empty, non-zero
    value); with ``required=False``, at most one."""
    given = [n for n in names if getattr(obj, n)]
    if len(given) > 1 or (required and not given):
        listed = f"{', '.join(names[:-1])} or {names[-1]}"
        got = f"got {' and '.join(given)}" if given else "got none"
        raise InputError(where, f"give {'exactly' if required else 'at most'} one of {listed} "
                                f"({got})")


@dataclass
class Case:
    """A loaded case: which module runs it, its name, the file it came from, its schema."""

    module: str
    name: str
    path: Path
    config: Any


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``a.b.c=value`` into ``(["a", "b", "c"], parsed value)``."""
    if "=" not in text:
        raise InputError("--set", f"'{text}' is not of the form key.sub=value")
    key, raw = text.split("=", 1)
    keys = [k.strip() for k in key.split(".")]
    if not all(keys):
        raise InputError("--set", f"'{key}' is not a dotted key")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return keys, value


def _step_into(table: Any, key: str, dotted: str, where: str) -> Any:
    """``table[key]`` for a table key ``name`` (created if missing) or ``name[i]``."""
    name, _, index = key.partition("[")
    if not isinstance(table, dict):
        raise InputError(where, f"'{dotted}': '{name}' is not inside a table")
    if not index:
        return table.setdefault(name, {})
    items = table.get(name)
    i = index.rstrip("]")
    if not isinstance(items, list) or not i.isdigit() or int(i) >= len(items):
        raise InputError(where, f"'{dotted}': no item {key} in the case")
    return items[int(i)]


def set_field(data: dict, dotted: str, value: Any, where: str) -> None:
    """Write ``value`` into the raw TOML tables ``data`` at the dotted key: ``a.b`` a table
    field, ``stages[1].duration`` a field of the second ``[[stages]]`` entry (the syntax of
    ``--set`` and of ``[sweep]``); a key that leads nowhere raises InputError at ``where``."""
    keys = dotted.split(".")
    table = data
    for k in keys[:-1]:
        table = _step_into(table, k, dotted, where)
    last = keys[-1]
    if "[" in last or not isinstance(table, dict):
        raise InputError(where, f"'{dotted}': the last key must name a field")
    table[last] = value


def apply_overrides(data: dict, overrides: list[str]) -> None:
    """Write each ``--set`` override into the raw TOML tables ``data`` (:func:`set_field`)."""
    for text in overrides:
        keys, value = parse_override(text)
        set_field(data, ".".join(keys), value, "--set")


def load_case(path: str | Path, overrides: list[str] = ()) -> Case:
    """Read and validate a case file (its module's schema: :func:`solver.modules.spec_for`)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "case file not found")
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"not valid TOML ({exc})") from None
    return case_from_data(data, path, overrides)


def case_from_data(data: dict, path: Path, overrides: list[str] = ()) -> Case:
    """Validate a case given as its tables (``data``, as TOML reads them; left unchanged).
    ``path`` names the case in error lines, its stem is the default name and its folder is
    where relative paths resolve first."""
    if not isinstance(data, dict):
        raise InputError(str(path), f"expected the case's tables as a dict, got "
                                    f"{type(data).__name__}")
    data = copy.deepcopy(data)
    apply_overrides(data, list(overrides))
    module = data.pop("module", None)
    if module is None:
        raise InputError(f"{path}: module", "missing required field (which module runs it)")
    name = data.pop("name", path.stem)
    check_name(name, f"{path}: name")
    schema = spec_for(module, f"{path}: module").config
    config = from_dict(schema, data, str(path), "", path.parent)
    return Case(module=module, name=name, path=path, config=config)


def check_name(name: Any, where: str) -> None:
    """A case name names files inside the output folder: a plain, visible file name."""
    if not isinstance(name, str):
        raise InputError(where, f"expected a string, got {type(name).__name__} {name!r}")
    if not name or name.startswith(".") or not name.isprintable() \
            or any(c in name for c in "/\\:"):
        raise InputError(where, f"{name!r} is not a plain file name (no path separators, "
                                "no leading dot)")


def from_dict(cls: type, data: Any, file: str, prefix: str, base: Path) -> Any:
    """Build dataclass ``cls`` from TOML table ``data`` with full validation."""
    where = f"{file}: {prefix or '(top level)'}"
    if not isinstance(data, dict):
        raise InputError(where, f"expected a table, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    rest = next((name for name, f in known.items() if f.metadata.get("rest")), None)
    values, extra = {}, {}
    for key in data:
        if key not in known and rest is None:
            allowed = ", ".join(sorted(known))
            raise InputError(f"{file}: {prefix}{'.' if prefix else ''}{key}",
                             f"unknown key (allowed here: {allowed})")
        if key not in known:
            extra.update(_flatten({key: data[key]}))
    if rest is not None:
        values[rest] = _rest_lists({**_flatten(data.get(rest, {})), **extra}, file, prefix)
    for name, f in known.items():
        if name == rest:
            continue
        dotted = f"{prefix}{'.' if prefix else ''}{name}"
        if name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise InputError(f"{file}: {dotted}", "missing required field")
            continue
        value = _convert(hints[name], data[name], file, dotted, base,
                         f.metadata.get("allow_inf", False))
        _check_bounds(f, value, f"{file}: {dotted}")
        if f.metadata.get("path"):
            value = resolve_path(value, base)
        values[name] = value
    obj = cls(**values)
    check = getattr(obj, "validate", None)
    if check is not None:
        check(f"{file}: {prefix}" if prefix else file)
    return obj


def swept_fields(doc: str) -> Any:
    """The field of a ``[sweep]`` table that takes every key the table does not declare: a
    dotted case field (``"grid.nx"``, or unquoted ``grid.nx``, a nested table in TOML) with its
    list of values, one per run."""
    return dataclasses.field(default_factory=dict, metadata={"unit": "-", "doc": doc,
                                                            "rest": True})


def _flatten(table: Any, prefix: str = "") -> dict[str, Any]:
    """``{"grid": {"nx": [3, 4]}}`` -> ``{"grid.nx": [3, 4]}``."""
    if not isinstance(table, dict):
        return {prefix: table}
    out = {}
    for key, value in table.items():
        out.update(_flatten(value, f"{prefix}.{key}" if prefix else key))
    return out


def _rest_lists(values: dict[str, Any], file: str, prefix: str) -> dict[str, list]:
    """Every swept field holds a non-empty list of values."""
    for key, value in values.items():
        if not isinstance(value, list) or not value:
            raise InputError(f"{file}: {prefix}{'.' if prefix else ''}{key}",
                             "expected a non-empty list of values (one per run)")
    return values


def resolve_path(value: str, base: Path) -> str:
    """Resolve a relative path against the case folder, then the working directory (an empty
    path stays empty: it means "none")."""
    if not value:
        return value
    p = Path(value)
    if not value or p.is_absolute():
        return value
    candidate = base / p
    if candidate.exists() or not p.exists():
        return str(candidate)
    return str(p)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _convert(tp: Any, value: Any, file: str, dotted: str, base: Path,
             allow_inf: bool = False) -> Any:
    """``value`` as type ``tp``; floats must be finite (``allow_inf``: or +-inf)."""
    where = f"{file}: {dotted}"
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, file, dotted, base)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        errors = []
        for option in options:
            try:
                return _convert(option, value, file, dotted, base, allow_inf)
            except InputError as exc:
                errors.append(exc.message)
        raise InputError(where, " or ".join(errors))
    if origin is Literal:
        choices = get_args(tp)
        if value not in choices:
            raise InputError(where, f"expected one of {', '.join(map(repr, choices))}, "
                                    f"got {value!r}")
        return value
    if origin is list:
        (item,) = get_args(tp) or (Any,)
        if not isinstance(value, list):
            raise InputError(where, f"expected a list, got {type(value).__name__}")
        return [_convert(item, v, file, f"{dotted}[{i}]", base, allow_inf)
                for i, v in enumerate(value)]
    if origin is tuple:
        items = get_args(tp)
        if not isinstance(value, list):
            raise InputError(where, f"expected a list of {len(items)} values")
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(_convert(items[0], v, file, f"{dotted}[{i}]", base, allow_inf)
                         for i, v in enumerate(value))
        if len(value) != len(items):
            raise InputError(where, f"expected a list of {len(items)} values, got {len(value)}")
        return tuple(_convert(t, v, file, f"{dotted}[{i}]", base, allow_inf)
                     for i, (t, v) in enumerate(zip(items, value)))
    if origin is dict:
        key_t, val_t = get_args(tp)
        if not isinstance(value, dict):
            raise InputError(where, f"expected a table, got {type(value).__name__}")
        return {k: _convert(val_t, v, file, f"{dotted}.{k}", base, allow_inf)
                for k, v in value.items()}
    if tp is Any:
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(where, f"expected a number, got {type(value).__name__} {value!r}")
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise InputError(where, f"must be a finite number, got {value}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(where, f"expected an integer, got {type(value).__name__} {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise InputError(where, f"expected true or false, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise InputError(where, f"expected a string, got {type(value).__name__} {value!r}")
        return value
    raise TypeError(f"case schema type {_type_name(tp)} at {dotted} is not supported")


def _check_bounds(f: dataclasses.Field, value: Any, where: str) -> None:
    meta = f.metadata
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        if meta.get("ge") is not None and not v >= meta["ge"]:
            raise InputError(where, f"must be >= {meta['ge']:g}, got {v:g}")
        if meta.get("gt") is not None and not v > meta["gt"]:
            raise InputError(where, f"must be > {meta['gt']:g}, got {v:g}")
        if meta.get("le") is not None and not v <= meta["le"]:
            raise InputError(where, f"must be <= {meta['le']:g}, got {v:g}")
        if meta.get("lt") is not None and not v < meta["lt"]:
            raise InputError(where, f"must be < {meta['lt']:g}, got {v:g}")


def resolved_data(case: Case) -> dict:
    """The case as plain TOML data with every default filled in and paths made absolute:
    ``tomllib.loads(solver.io.toml.dumps(resolved_data(case)))`` loads back to the same case
    from any folder."""
    return {"module": case.module, "name": case.name, **plain_data(case.config)}


#: The file of a run folder that holds the case as run (:func:`write_resolved`).
RESOLVED_CASE = "case.resolved.toml"


def write_resolved(case: Case, folder: Path, started: str, overrides: list[str] = ()) -> None:
    """``folder/case.resolved.toml``: the case as run (:func:`resolved_data`), headed by the
    file it came from, the start time and the ``--set`` overrides."""
    given = "".join(f"\n  --set {o}" for o in overrides)
    (Path(folder) / RESOLVED_CASE).write_text(dumps(resolved_data(case), header=(
        f"{case.path} as run on {started}{given}\n"
        "every field with its value (defaults filled in, paths absolute)")))


def plain_data(obj: Any) -> Any:
    """A dataclass tree as TOML-like tables (tuples -> lists, path fields made absolute)."""
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            if f.init:
                value = getattr(obj, f.name)
                out[f.name] = (os.path.abspath(value) if f.metadata.get("path") and value
                               else plain_data(value))
        return out
    if isinstance(obj, dict):
        return {str(k): plain_data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain_data(v) for v in obj]
    return obj


_BOUNDS = (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))


def _choices(tp: Any) -> str:
    """The allowed values of a Literal field, or of the items of a list of Literals."""
    if get_origin(tp) is Literal:
        return f"one of {', '.join(map(value_text, get_args(tp)))}"
    if get_origin(tp) is list and get_args(tp) and get_origin(get_args(tp)[0]) is Literal:
        return f"items from {', '.join(map(value_text, get_args(get_args(tp)[0])))}"
    return ""


def _table_of(tp: Any) -> tuple[type | None, str]:
    """``(dataclass, suffix)`` when the field is a table (``""``) or a list of tables
    (``"[]"``), else ``(None, "")``."""
    if dataclasses.is_dataclass(tp):
        return tp, ""
    if get_origin(tp) is list and get_args(tp) and dataclasses.is_dataclass(get_args(tp)[0]):
        return get_args(tp)[0], "[]"
    return None, ""


def describe(cls: type, prefix: str = "") -> list[str]:
    """One line per field: dotted name (``stages[].tilt_rate`` inside a list of tables), unit,
    default (or ``required``), the allowed values of a choice, and the description. A table
    or list of tables gets a heading line and its fields below it."""
    lines = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints[f.name]
        required = f.default is MISSING and f.default_factory is MISSING
        doc = f.metadata.get("doc", "")
        table, suffix = _table_of(tp)
        if table is not None:
            kind = "list of tables" if suffix else "table"
            need = "required" if required else "optional"
            lines.append(f"{prefix}{f.name}{suffix}: {kind}, {need}: {doc}")
            lines.extend(describe(table, f"{prefix}{f.name}{suffix}."))
            continue
        default = ("required" if required else value_text(
            plain_data(f.default if f.default is not MISSING else f.default_factory())))
        choices = _choices(tp)
        notes = [choices] if choices else []
        notes += [f"{op} {f.metadata[key]:g}" for key, op in _BOUNDS
                  if f.metadata.get(key) is not None]
        note = f" ({', '.join(notes)})" if notes else ""
        lines.append(f"{prefix}{f.name} [{f.metadata.get('unit', '?')}] = {default}{note}: "
                     f"{doc}")
    return lines
