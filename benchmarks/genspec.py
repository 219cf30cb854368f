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


REGIONS = [f"region-{i:03d}" for i in range(200)]

# Six more shapes for the realistic spec: nested objects, arrays of objects, unions,
# a free-form map, a task tool, and one taking the 200-value region enum inline.
MORE_SHAPES = (
    """\
  - name: profile_{i}
    description: Update a user profile (tool {i}).
    parameters:
      - name: user
        type: object
        properties:
          id: {{type: string}}
          name: {{type: string, maxLength: 80}}
          address:
            type: object
            properties:
              street: {{type: string}}
              city: {{type: string}}
              zip: {{type: string, pattern: "^[0-9]{{5}}$"}}
            required: [street, city]
        required: [id]
      - {{name: notify, type: boolean, default: true}}
    returns: object
""",
    """\
  - name: batch_{i}
    description: Run a batch of jobs (tool {i}).
    parameters:
      - name: jobs
        type: array
        items:
          type: object
          properties:
            kind: {{enum: [copy, move, delete]}}
            path: {{type: string}}
          required: [kind, path]
    output_schema:
      type: object
      properties:
        done: {{type: integer}}
        failed: {{type: array, items: {{type: string}}}}
      required: [done, failed]
""",
    """\
  - name: lookup_{i}
    description: Look something up by id or name (tool {i}).
    parameters:
      - name: key
        anyOf:
          - {{type: integer, minimum: 1}}
          - {{type: string, minLength: 1}}
    returns: string
""",
    """\
  - name: tag_{i}
    description: Set tags on an item (tool {i}).
    parameters:
      - {{name: item, type: string}}
      - name: tags
        type: object
        additionalProperties: {{type: string}}
    returns: object
""",
    """\
  - name: export_{i}
    description: Export a report (tool {i}); long-running.
    parameters:
      - {{name: report, type: string}}
      - {{name: format, enum: [csv, json, parquet], default: csv}}
    returns: string
    task_support: optional
""",
    """\
  - name: regional_{i}
    description: Sales figures for a region (tool {i}).
    parameters:
      - {{name: region, enum: {regions}}}
      - {{name: year, type: integer, minimum: 2000}}
    output_schema:
      type: object
      properties:
        region: {{enum: {regions}}}
        total: {{type: number}}
      required: [region, total]
""",
)


def realistic_spec_text(n: int = 300, *, enum: bool = True) -> str:
    """A spec of ``n`` tools in ten shapes; one in ten (30 of 300) takes and returns a
    200-value region enum written out inline (``enum=False``: a plain string instead,
    the same contract without that repetition)."""
    regions = "[" + ", ".join(REGIONS) + "]" if enum else "null"
    shapes = SHAPES + MORE_SHAPES
    parts = [HEADER.format(n=n).replace(f"gen{n}", f"real{n}")]
    for i in range(n):
        text = shapes[i % len(shapes)].format(i=i, regions=regions)
        if not enum:
            text = text.replace("enum: null", "type: string")
        parts.append(text)
    return "".join(parts)


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
