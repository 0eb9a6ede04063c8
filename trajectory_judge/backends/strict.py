"""The JSON-schema subset that hosted strict structured-output modes accept, and a fallback into it.

The subset follows OpenAI's documented rules for ``response_format`` with ``strict: true``
(platform.openai.com/docs/guides/structured-outputs, "Supported schemas"):

- the root is an object (not ``anyOf``); every object sets ``additionalProperties: false`` and
  lists every property in ``required``;
- types: string, number, integer, boolean, object, array, null, plus ``enum``, ``const``,
  ``anyOf``, ``$defs`` / ``$ref``; ``description`` and ``title`` annotate;
- strings take only ``pattern`` and ``format``; numbers ``multipleOf``, ``maximum``,
  ``exclusiveMaximum``, ``minimum``, ``exclusiveMinimum``; arrays ``minItems`` and ``maxItems``.
  Any other keyword (``maxLength``, ``minLength``, ``allOf``, ``not``, ``if``, ``default``, ...)
  is refused;
- at most 5000 properties, 10 levels of nesting and 1000 enum values.

:func:`strict_subset` turns a schema into that subset: an unsupported bound such as the
reasoning's ``maxLength`` becomes words in the property's ``description``. llama-server gets
the full schema (its grammar enforces ``maxLength``, which keeps small models from looping).
"""

from __future__ import annotations

import copy
from typing import Any

ANNOTATIONS = {"description", "title"}
BY_TYPE: dict[str, set[str]] = {
    "string": {"pattern", "format"},
    "number": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "integer": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties", "$defs"},
    "boolean": set(),
    "null": set(),
}
COMMON = {"type", "enum", "const", "anyOf", "$ref", "$defs"} | ANNOTATIONS
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
WORDED = {"maxLength": "at most {} characters", "minLength": "at least {} characters"}
"""Refused bounds that :func:`strict_subset` keeps as words in the description."""


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    return [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []


def strict_subset(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` rewritten into the strict subset: refused keywords dropped (bounds kept as words),
    every object closed and fully required. The input is not changed."""
    return _subset(copy.deepcopy(schema))


def _subset(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    types = _types(node)
    allowed = COMMON.union(*(BY_TYPE.get(t, set()) for t in types))
    words = [WORDED[k].format(node[k]) for k in WORDED if k in node]
    out = {k: v for k, v in node.items() if k in allowed}
    if out.get("format") is not None and out["format"] not in FORMATS:
        del out["format"]
    if words:
        out["description"] = "; ".join([*filter(None, [out.get("description")]), *words])
    if "object" in types:
        out["properties"] = {k: _subset(v) for k, v in (out.get("properties") or {}).items()}
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    if "items" in out:
        out["items"] = _subset(out["items"])
    if "anyOf" in out:
        out["anyOf"] = [_subset(s) for s in out["anyOf"]]
    if "$defs" in out:
        out["$defs"] = {k: _subset(v) for k, v in out["$defs"].items()}
    return out
