"""A validator of the JSON-schema subset that hosted strict structured-output modes accept (the rules of
:mod:`trajectory_judge.backends.strict`): what the tests hold the package's schemas to."""

from __future__ import annotations

from typing import Any

from trajectory_judge.backends.strict import BY_TYPE, COMMON, FORMATS

MAX_PROPERTIES, MAX_DEPTH, MAX_ENUM_VALUES = 5000, 10, 1000


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    return [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """What in ``schema`` a strict structured-output mode refuses, one entry per problem (empty: accepted)."""
    problems: list[str] = []
    counts = {"properties": 0, "enum": 0}
    if _types(schema) != ["object"] or "anyOf" in schema:
        problems.append("$: the root must be an object, not anyOf")
    _check(schema, "$", 1, problems, counts)
    if counts["properties"] > MAX_PROPERTIES:
        problems.append(f"$: {counts['properties']} properties, more than {MAX_PROPERTIES}")
    if counts["enum"] > MAX_ENUM_VALUES:
        problems.append(f"$: {counts['enum']} enum values, more than {MAX_ENUM_VALUES}")
    return problems


def _check(node: Any, where: str, depth: int, problems: list[str], counts: dict[str, int]) -> None:
    if not isinstance(node, dict):
        problems.append(f"{where}: a schema must be an object")
        return
    types = _types(node)
    _check_keywords(node, where, types, problems)
    if "enum" in node:
        counts["enum"] += len(node["enum"])
    if "object" in types:
        _check_object(node, where, depth, problems, counts)
    if "items" in node:
        _check(node["items"], f"{where}[]", depth + 1, problems, counts)
    for i, sub in enumerate(node.get("anyOf", [])):
        _check(sub, f"{where}.anyOf[{i}]", depth, problems, counts)
    for k, sub in (node.get("$defs") or {}).items():
        _check(sub, f"{where}.$defs.{k}", depth, problems, counts)


def _check_keywords(node: dict[str, Any], where: str, types: list[str], problems: list[str]) -> None:
    """Only the keywords, types and formats the strict subset supports."""
    allowed = COMMON.union(*(BY_TYPE.get(t, set()) for t in types))
    for key in node:
        if key not in allowed:
            problems.append(
                f"{where}: keyword {key!r} is not supported" + (f" for type {'/'.join(types)}" if types else "")
            )
    for t in types:
        if t not in BY_TYPE:
            problems.append(f"{where}: type {t!r} is not supported")
    if node.get("format") is not None and node["format"] not in FORMATS:
        problems.append(f"{where}: format {node['format']!r} is not supported")


def _check_object(node: dict[str, Any], where: str, depth: int, problems: list[str], counts: dict[str, int]) -> None:
    """The rules an object adds: not too deep, closed, every property required; then each property's schema."""
    props = node.get("properties", {})
    counts["properties"] += len(props)
    if depth > MAX_DEPTH:
        problems.append(f"{where}: nested deeper than {MAX_DEPTH} levels")
    if node.get("additionalProperties") is not False:
        problems.append(f"{where}: additionalProperties must be false")
    missing = [k for k in props if k not in (node.get("required") or [])]
    if missing:
        problems.append(f"{where}: every property must be required; not required: {', '.join(missing)}")
    for k, sub in props.items():
        _check(sub, f"{where}.{k}", depth + 1, problems, counts)
