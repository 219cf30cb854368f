"""The JSON Schema 2020-12 vocabulary, for checking keywords and walking schemas."""

from __future__ import annotations

__all__ = [
    "JSON_TYPES",
    "KNOWN_KEYWORDS",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "SCHEMA_VALUE_KEYWORDS",
]

JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")

# Keywords whose value is one subschema / a list of them / a map of them.
SCHEMA_VALUE_KEYWORDS = frozenset(
    {
        "additionalProperties", "contains", "contentSchema", "else", "if", "items", "not",
        "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties",
    }
)  # fmt: skip
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAP_KEYWORDS = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)

KNOWN_KEYWORDS = (
    SCHEMA_VALUE_KEYWORDS
    | SCHEMA_LIST_KEYWORDS
    | SCHEMA_MAP_KEYWORDS
    | frozenset(
        {
            # core
            "$anchor", "$comment", "$dynamicAnchor", "$dynamicRef", "$id", "$ref", "$schema",
            "$vocabulary",
            # validation
            "const", "dependentRequired", "enum", "exclusiveMaximum", "exclusiveMinimum",
            "maxContains", "maxItems", "maxLength", "maxProperties", "maximum", "minContains",
            "minItems", "minLength", "minProperties", "minimum", "multipleOf", "pattern",
            "required", "type", "uniqueItems",
            # meta-data, format, content
            "default", "deprecated", "description", "examples", "readOnly", "title", "writeOnly",
            "format", "contentEncoding", "contentMediaType",
            # draft-07 spellings still met in the wild
            "dependencies",
        }
    )
)  # fmt: skip
