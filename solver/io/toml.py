"""A small TOML writer for case files (the standard library reads TOML but does not write it).

:func:`dumps` writes plain data (dicts, lists, tuples, str, int, float, bool) so that
``tomllib.loads(dumps(d)) == d`` up to tuples becoming lists: scalars and lists of scalars
as ``key = value``, dicts as ``[table]`` sections, lists of dicts as ``[[array]]`` tables.
"""

from __future__ import annotations

import json
import math
from typing import Any


def _is_table(value: Any) -> bool:
    return isinstance(value, dict)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(map(_is_table, value))


def _key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "-_" for c in key)
    return key if bare else json.dumps(key)


def value_text(value: Any) -> str:
    """One TOML value: bool, int, float (inf and nan included), string, list or inline table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {value_text(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _section(data: dict, path: list[str], lines: list[str]) -> None:
    for key, value in data.items():
        if not (_is_table(value) or _is_table_array(value)):
            lines.append(f"{_key(key)} = {value_text(value)}")
    for key, value in data.items():
        dotted = ".".join(_key(k) for k in [*path, key])
        if _is_table(value):
            lines += ["", f"[{dotted}]"]
            _section(value, [*path, key], lines)
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{dotted}]]"]
                _section(item, [*path, key], lines)


def dumps(data: dict, header: str = "") -> str:
    """TOML text of ``data``; ``header`` lines become leading ``#`` comments."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    _section(data, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"
