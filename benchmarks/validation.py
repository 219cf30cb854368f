"""Micro-benchmark of the runtime's JSON Schema validator: the hot path of every tool call.

Runs the compiled validator of a few realistic tool schemas (an object of scalars,
an array of nested objects, coercion of string arguments, anyOf, and
unevaluatedProperties over allOf) and prints the best CPU time per call of several
repeats, in microseconds (CPU time of this process: on a busy machine wall time
mostly measures the neighbours). Compare two checkouts by running this file under each:

    .venv/bin/python benchmarks/validation.py            # or --repeat 9 --number 20000
"""

from __future__ import annotations

import argparse
import functools
import time
import timeit
from typing import Any

from mcpgen_runtime.schema.validator import compile_schema

_ITEM = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "minLength": 1, "maxLength": 40},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
        "price": {"type": "number", "exclusiveMinimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
    "required": ["sku", "quantity"],
    "additionalProperties": False,
}

CASES: dict[str, tuple[dict[str, Any], bool, Any]] = {
    "flat object": (
        {
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": {"enum": ["metric", "imperial"]},
                "hourly": {"type": "boolean"},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
        False,
        {"city": "Lisbon", "days": 3, "units": "metric", "hourly": False},
    ),
    "array of 50 objects": (
        {
            "type": "object",
            "properties": {"order": {"type": "string"}, "items": {"type": "array", "items": _ITEM}},
            "required": ["items"],
        },
        False,
        {
            "order": "A-17",
            "items": [
                {"sku": f"S{i}", "quantity": i + 1, "price": 2.5, "tags": ["a", "b"]}
                for i in range(50)
            ],
        },
    ),
    "coercion of 20 items": (
        {"type": "object", "properties": {"items": {"type": "array", "items": _ITEM}}},
        True,
        {"items": [{"sku": f"S{i}", "quantity": str(i + 1), "price": "2.5"} for i in range(20)]},
    ),
    "anyOf": (
        {
            "type": "object",
            "properties": {
                "target": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}},
                            "required": ["id"],
                        },
                        {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    ]
                }
            },
        },
        False,
        {"target": {"name": "x"}},
    ),
    "unevaluatedProperties": (
        {
            "allOf": [
                {"properties": {"a": {"type": "integer"}}},
                {"properties": {"b": {"type": "string"}}},
            ],
            "if": {"properties": {"a": {"const": 1}}},
            "then": {"properties": {"c": {"type": "boolean"}}},
            "unevaluatedProperties": False,
        },
        False,
        {"a": 1, "b": "x", "c": True},
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=5000)
    args = parser.parse_args()
    total = 0.0
    for name, (schema, coerce, value) in CASES.items():
        validate = compile_schema(schema, coerce=coerce)
        validate(value)  # a failing case would raise here, not be timed
        run = functools.partial(validate, value)
        best = min(timeit.Timer(run, timer=time.process_time).repeat(args.repeat, args.number))
        micros = best / args.number * 1e6
        total += micros
        print(f"{name:24} {micros:8.2f} µs")
    print(f"{'sum':24} {total:8.2f} µs")


if __name__ == "__main__":
    main()
