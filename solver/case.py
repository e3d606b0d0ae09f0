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
description says what infinity means there (an unbreakable strength, an open-ended stage);
the bounds of such a field hold for its finite values. An integer must fit in 64 bits (TOML's
integers).

Reading cannot run away: a case file holds at most MAX_CASE_BYTES, its tables and arrays
(and the parts of a dotted key) nest at most MAX_DEPTH deep, a string holds at most
MAX_STRING characters, a ``--set`` text at most MAX_OVERRIDE; a path must be one the
operating system can open (:func:`check_path`).

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

ANGLE_LIMIT = 360.0
"""Largest magnitude of a free angle (a rotation, an azimuth) [deg]: one turn either way; a
larger angle is the same direction with its digits lost to rounding."""

SPEED_LIMIT = 1e3
"""Largest speed a case may give [m/s]: three times the speed of sound in air, beyond any
rockfall, landslide or loading rate."""

TIME_LIMIT = 1e7
"""Longest simulated time, interval or duration a case may give [s]: four months, beyond any
landslide, rockfall or relaxation."""

MAX_CASE_BYTES = 16 << 20
"""Largest case file [bytes]: a case is text written by hand or by a script; meshes, rasters
and long series go in files of their own (mesh.path, surface.path, thickness_path)."""

MAX_DEPTH = 32
"""Deepest nesting of tables and arrays in a case, and most parts of a dotted key (the deepest
field of a schema, a pair in a list inside a table of tables, is 5 levels down)."""

MAX_STRING = 4096
"""Longest string value [characters]: PATH_MAX, the longest path Linux opens; a longer name,
group or expression is a generated mistake."""

MAX_OVERRIDE = 1 << 20
"""Longest ``--set`` text [characters] (a list of a few ten thousand numbers)."""

MAX_NAME = 100
"""Longest case name [characters]: it names files (``<name>.pvd``, ``<name>_sweep.csv``),
and a file name has at most 255 bytes."""

INT64 = (-(1 << 63), (1 << 63) - 1)
"""The range of a TOML integer."""


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
    if len(text) > MAX_OVERRIDE:
        raise InputError("--set", f"{len(text)} characters, more than {MAX_OVERRIDE}")
    if "=" not in text:
        raise InputError("--set", f"'{text}' is not of the form key.sub=value")
    key, raw = text.split("=", 1)
    keys = [k.strip() for k in key.split(".")]
    if not all(keys):
        raise InputError("--set", f"'{key}' is not a dotted key")
    if len(keys) > MAX_DEPTH:
        raise InputError("--set", f"'{key}' has {len(keys)} parts, more than {MAX_DEPTH}")
    try:
        value = toml_loads(f"v = {raw}", f"--set {key}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    check_depth(value, f"--set {key}")
    return keys, value


def toml_loads(text: str, where: str) -> dict:
    """``tomllib.loads(text)``; nesting too deep for the parser's recursion, or an integer of
    thousands of digits, raises InputError at ``where`` (a syntax error stays a
    TOMLDecodeError)."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputError(where, f"arrays or tables nested too deep to read (at most "
                                f"{MAX_DEPTH} levels)") from None
    except ValueError as exc:
        if isinstance(exc, tomllib.TOMLDecodeError):
            raise
        raise InputError(where, f"not valid TOML ({exc})") from None


def check_depth(value: Any, where: str) -> None:
    """Tables and arrays in ``value`` nest at most MAX_DEPTH deep (the schema's fields and
    the copies and walks of the case need no deeper)."""
    pending = [(value, 0, "")]
    while pending:
        item, depth, at = pending.pop()
        if depth > MAX_DEPTH:
            raise InputError(where, f"tables and arrays nested more than {MAX_DEPTH} deep "
                                    f"(at {at})")
        if isinstance(item, dict):
            pending.extend((v, depth + 1, f"{at}.{k}" if at else str(k))
                           for k, v in item.items())
        elif isinstance(item, list):
            pending.extend((v, depth + 1, f"{at}[{i}]") for i, v in enumerate(item))


def _step_into(table: Any, key: str, dotted: str, where: str) -> Any:
    """``table[key]`` for a table key ``name`` (created if missing) or ``name[i]``."""
    name, _, index = key.partition("[")
    if not isinstance(table, dict):
        raise InputError(where, f"'{dotted}': '{name}' is not inside a table")
    if not index:
        return table.setdefault(name, {})
    items = table.get(name)
    i = index.rstrip("]")
    if not isinstance(items, list) or not is_index(i) or int(i) >= len(items):
        raise InputError(where, f"'{dotted}': no item {key} in the case")
    return items[int(i)]


def is_index(text: str) -> bool:
    """Whether ``text`` is a list index: ASCII digits only."""
    return text.isascii() and text.isdigit()


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
    check_path(str(path), str(path))
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "case file not found")
    try:
        if path.stat().st_size > MAX_CASE_BYTES:
            raise InputError(str(path), f"{path.stat().st_size} bytes, more than a case file "
                                        f"holds ({MAX_CASE_BYTES}); meshes and rasters go "
                                        "in files of their own")
        data = toml_loads(path.read_text(), str(path))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"not valid TOML ({exc})") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return case_from_data(data, path, overrides)


def check_path(text: str, where: str) -> None:
    """A path the operating system can take: no NUL character, each part at most NAME_MAX
    (255) bytes and the whole at most PATH_MAX (4096) bytes."""
    if "\0" in text:
        raise InputError(where, "a path cannot hold a NUL character")
    encoded = os.fsencode(text)
    if len(encoded) >= 4096:
        raise InputError(where, f"a path of {len(encoded)} bytes, more than the 4095 a "
                                "path may have")
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > 255:
        raise InputError(where, f"a file or folder name of {len(longest)} bytes, more than "
                                "the 255 a name may have")


def case_from_data(data: dict, path: Path, overrides: list[str] = ()) -> Case:
    """Validate a case given as its tables (``data``, as TOML reads them; left unchanged).
    ``path`` names the case in error lines, its stem is the default name and its folder is
    where relative paths resolve first."""
    if not isinstance(data, dict):
        raise InputError(str(path), f"expected the case's tables as a dict, got "
                                    f"{type(data).__name__}")
    check_depth(data, str(path))
    data = copy.deepcopy(data)
    apply_overrides(data, list(overrides))
    module = data.pop("module", None)
    if module is None:
        raise InputError(f"{path}: module", "missing required field (which module runs it)")
    if not isinstance(module, str):
        raise InputError(f"{path}: module", f"expected a string, got {type(module).__name__}")
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
    if len(os.fsencode(name)) > MAX_NAME:
        raise InputError(where, f"a name of {len(os.fsencode(name))} bytes, more than "
                                f"{MAX_NAME} (it names the run's files)")


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
            check_path(value, f"{file}: {dotted}")
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
        if not INT64[0] <= value <= INT64[1]:
            raise InputError(where, "beyond the range of a 64-bit integer")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise InputError(where, f"expected true or false, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise InputError(where, f"expected a string, got {type(value).__name__} {value!r}")
        if len(value) > MAX_STRING:
            raise InputError(where, f"a string of {len(value)} characters, more than "
                                    f"{MAX_STRING}")
        return value
    raise TypeError(f"case schema type {_type_name(tp)} at {dotted} is not supported")


def check_field_value(cls: type, name: str, value: Any, where: str) -> None:
    """``value`` within the bounds of the field ``name`` of the schema ``cls`` (a value set
    after loading, such as a drawn ensemble value)."""
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    _check_bounds(field, value, where)


def _check_bounds(f: dataclasses.Field, value: Any, where: str) -> None:
    """Each number of ``value`` within the field's bounds (:func:`_numbers`; an item out of
    bounds is named by its index); in an ``allow_inf`` field an infinity of a sign the
    bounds let the field take stands for "unbounded" and passes."""
    meta = f.metadata
    for at, v in _numbers(value):
        if meta.get("allow_inf") and math.isinf(v):
            _check_infinity(meta, v, f"{where}{at}")
            continue
        for key, op, holds in _BOUND_TESTS:
            if meta.get(key) is not None and not holds(v, meta[key]):
                raise InputError(f"{where}{at}", f"must be {op} {meta[key]:g}, got {v:g}")


_BOUND_TESTS = (("ge", ">=", lambda v, b: v >= b), ("gt", ">", lambda v, b: v > b),
                ("le", "<=", lambda v, b: v <= b), ("lt", "<", lambda v, b: v < b))


def _numbers(value: Any):
    """``(index, number)`` for the numbers of a field's value: ``("", value)`` for a number,
    ``("[1][0]", ...)`` inside lists and tuples, ``(".key", ...)`` inside tables (booleans
    and strings are not numbers)."""
    pending = [("", value)]
    while pending:
        at, item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend((f"{at}[{i}]", v) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            pending.extend((f"{at}.{k}", v) for k, v in reversed(list(item.items())))
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            yield at, item


def _check_infinity(meta, v: float, where: str) -> None:
    """An infinity in an ``allow_inf`` field: -inf fails a lower bound of 0 or more, +inf an
    upper bound of 0 or less (the field takes no values of that sign)."""
    low = meta.get("ge") if meta.get("ge") is not None else meta.get("gt")
    high = meta.get("le") if meta.get("le") is not None else meta.get("lt")
    if v < 0 and low is not None and low >= 0:
        raise InputError(where, f"must be >= {low:g}, got {v:g}")
    if v > 0 and high is not None and high <= 0:
        raise InputError(where, f"must be <= {high:g}, got {v:g}")


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
