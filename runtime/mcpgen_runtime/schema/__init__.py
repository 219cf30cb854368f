"""JSON Schema 2020-12: the validator, ECMA-262 regular expressions and the ``format`` checkers."""
