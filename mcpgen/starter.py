"""The commented starter spec written by ``mcpgen init``."""

STARTER_SPEC = """\
# A tool contract for mcpgen. Build it with:  mcpgen build tools.yaml
# Editor completion: point yaml-language-server at the path `mcpgen schema --path` prints.
mcpgen: 1                      # format version
package: hello_mcp             # import name of the generated package
output: build/hello_mcp        # where the package is written, relative to this file
server:
  name: hello                  # serverInfo.name; also names the classes (HelloServer, HelloClient)
  version: 0.1.0
  instructions: Greets people and adds numbers.
  # implementation: hello_impl:Hello   # default class for `python -m hello_mcp`

types: {}                      # shared JSON Schemas, referenced as {$ref: "#/types/Name"}

tools:
  - name: greet                # wire name: 1-128 characters of A-Z a-z 0-9 _ - .
    description: Say hello to someone.
    parameters:                # declaration order is the positional order
      - name: who
        type: string
        description: Who to greet
      - name: excited
        type: boolean
        default: false         # a default makes a parameter optional
    returns: string            # string | integer | number | boolean | object | array | content
    hints: {read_only: true}

  - name: add
    description: Add two integers.
    parameters:
      - {name: a, type: integer}
      - {name: b, type: integer}
    output_schema:             # a structured result, validated before it is sent
      type: object
      properties: {sum: {type: integer}}
      required: [sum]
"""
