"""Synthetic specs with N tools for the generator benchmark (``mcpgen build``).

Tools cycle through four shapes so the build exercises every part of the
pipeline: positional and named callbacks, structured output with a shared
``$ref`` type, enums, defaults, constraints, hints and titles.
"""

from __future__ import annotations

from pathlib import Path

HEADER = """\
mcpgen: 1
package: gen{n}_mcp
output: build/gen{n}_mcp
server:
  name: gen{n}
  version: 1.0.0
types:
  Day:
    type: object
    properties:
      date: {{type: string, format: date}}
      high_c: {{type: number}}
      low_c: {{type: number}}
    required: [date, high_c, low_c]
tools:
"""

SHAPES = (
    """\
  - name: add_{i}
    description: Add two integers (tool {i}).
    parameters:
      - {{name: a, type: integer}}
      - {{name: b, type: integer, minimum: 0}}
    returns: integer
""",
    """\
  - name: search_{i}
    description: Search the catalogue (tool {i}).
    parameters:
      - {{name: query, type: string, minLength: 1, maxLength: 200}}
      - {{name: limit, type: integer, minimum: 1, maximum: 100, default: 10}}
      - name: tags
        type: array
        items: {{type: string}}
        required: false
    returns: array
    hints: {{read_only: true}}
""",
    """\
  - name: forecast_{i}
    title: Forecast {i}
    description: Forecast for a city (tool {i}).
    parameters:
      - {{name: city, type: string, minLength: 1}}
      - {{name: days, type: integer, minimum: 1, maximum: 14, default: 3}}
      - {{name: units, enum: [metric, imperial], required: false}}
    output_schema:
      type: object
      properties:
        city: {{type: string}}
        days: {{type: array, items: {{$ref: "#/types/Day"}}}}
      required: [city, days]
""",
    """\
  - name: order.create-{i}
    description: Create an order (tool {i}).
    parameters:
      - {{name: sku, type: string, pattern: "^[A-Z]{{3}}-[0-9]{{4}}$"}}
      - {{name: quantity, type: integer, minimum: 1}}
      - {{name: price, type: number, exclusiveMinimum: 0}}
      - {{name: express, type: boolean, default: false}}
      - {{name: note, type: string, maxLength: 500, required: false}}
    output_schema:
      type: object
      properties:
        order_id: {{type: string}}
        total: {{type: number}}
        status: {{enum: [pending, paid, shipped]}}
      required: [order_id, total, status]
    hints: {{destructive: false, idempotent: false}}
""",
)


def spec_text(n: int) -> str:
    parts = [HEADER.format(n=n)]
    parts.extend(SHAPES[i % len(SHAPES)].format(i=i) for i in range(n))
    return "".join(parts)


def write_spec(directory: Path, n: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"gen{n}.yaml"
    path.write_text(spec_text(n), encoding="utf-8")
    return path


if __name__ == "__main__":
    import sys

    print(spec_text(int(sys.argv[1]) if len(sys.argv) > 1 else 4), end="")
