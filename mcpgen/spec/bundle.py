"""``$ref`` bundling, the spec front end's last step before the IR.

A ``$ref`` in a spec points into ``types`` (``#/types/Name``), at a JSON/YAML
file relative to the spec (``schemas/day.json#/pointer``), or, by JSON pointer or
``$anchor``, into the schema it sits in (``#/definitions/X``, ``#/allOf/0``,
``#name``; the innermost subschema with an ``$id`` is a document of its own); a
hand-written ``input_schema``'s references into its own ``$defs`` (``#/$defs/X``,
as pydantic and FastMCP emit them) stay as written.
Published schemas are self-contained: every other reference is rewritten to
``#/$defs/Name`` and the definitions a schema uses travel with it under ``$defs``.

A tool's ``inputSchema`` and ``outputSchema`` always have ``"type": "object"``
at the root (see ``Bundler.publish_object`` for how a root ``$ref`` is published).
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from mcpgen_runtime.protocol.pointer import MISSING, resolve_pointer

from ..keywords import (
    LOCAL_REF,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    SCHEMA_VALUE_KEYWORDS,
    JsonPath,
    local_ref_names,
    walk_schemas,
)
from ..names import MODELS_PY_NAMES
from ..safeio import MAX_SPEC_BYTES, UnsafeFile, read_regular
from .dialect import upgrade_schema

__all__ = ["Bundler", "JsonPath", "RefProblem"]

# Keywords that only annotate: a root ``$ref`` with nothing else beside it (but
# ``$defs`` and ``x-`` extensions) is replaced by its target, these keys kept.
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "$comment",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "default",
    }
)


@dataclass(frozen=True)
class RefProblem:
    """A ``$ref`` that cannot be followed; ``path`` is where it sits in the spec."""

    path: JsonPath
    message: str


@dataclass
class _Origin:
    """Where a schema came from: the spec itself, or an external file."""

    file: Path | None  # None for the spec
    # what `#…` means: the file, or (in the spec) the schema being bundled, or the
    # innermost subschema with an `$id` (a resource of its own)
    document: Any
    local_defs: bool = False  # a hand-written input_schema: its `#/$defs/…` stay as written


@dataclass
class Bundler:
    """Rewrites references and collects the definitions they use.

    ``defs`` maps a definition name to its bundled schema; ``types`` entries keep
    their names, file references get the file's stem (plus the pointer's tail),
    never one of ``reserved`` (the local ``$defs`` names of hand-written schemas,
    which are published as written).
    """

    spec_dir: Path
    types: Mapping[str, Any]
    allow_outside: bool = False
    reserved: frozenset[str] = frozenset()
    defs: dict[str, Any] = field(default_factory=dict)
    problems: list[RefProblem] = field(default_factory=list)
    _names: dict[tuple[str, str], str] = field(default_factory=dict)  # (file, pointer) → def name
    _files: dict[Path, Any] = field(default_factory=dict)
    _uses: dict[str, frozenset[str]] = field(default_factory=dict)  # def → defs it references
    _keep: list[Any] = field(default_factory=list)  # targets named by their id()
    # def from a file → (file, pointer, where in the spec the first $ref to it sits)
    file_defs: dict[str, tuple[Path, str, JsonPath]] = field(default_factory=dict)

    def bundle_types(self) -> None:
        """Bundle every ``types`` entry (so each becomes a model even if unused)."""
        for name in self.types:
            self._define_type(name)

    def bundle(
        self, schema: Any, path: JsonPath, *, local_defs: bool = False, whole: bool = False
    ) -> tuple[Any, frozenset[str]]:
        """Rewrite ``schema`` (found at ``path`` in the spec); return it with the
        closure of definition names it needs. With ``local_defs`` (a hand-written
        ``input_schema``), ``#/$defs/X`` means the schema's own ``$defs`` entry;
        ``whole``: a tool's whole schema (its root ``$id`` is kept)."""
        used: set[str] = set()
        origin = _Origin(None, schema if isinstance(schema, dict) else None, local_defs)
        rewritten = self._rewrite(schema, origin, path, used)
        if whole and isinstance(schema, dict) and isinstance(schema.get("$id"), str):
            # the $id of a tool schema's root names the published document: it stays
            rewritten = {
                key: schema[key] if key == "$id" else rewritten[key]
                for key in schema
                if key == "$id" or key in rewritten
            }
        return rewritten, self.closure(used)

    def publish_object(self, schema: Any) -> dict[str, Any] | None:
        """The published form of a bundled tool schema: ``"type": "object"`` at the
        root, every reference resolving; None when the schema cannot describe an
        object (its root, or what its root ``$ref`` points to, says another type,
        or says none; ``anyOf``/``oneOf`` count when every branch is an object,
        ``allOf`` when one is).

        A root ``$ref`` (with annotations at most beside it) is replaced by the
        definition it points to: the definition is inlined at the root, its
        annotations overridden by the ones beside the ``$ref``, and ``$defs``
        keeps only what the result still references (the definition itself when
        it is recursive). The alternative, ``{"type": "object", "allOf": [{"$ref":
        …}]}``, validates the same values, and both the official Python SDK client
        and the TypeScript SDK client (Ajv) accept either; inlining was chosen
        because peers that read a tool's ``properties``/``required`` at the root
        (hosts building an LLM's function declaration or a form, mcpgen's own
        positional parameters and contract diff) see the real fields, and because
        it is the form the official Python SDK's own server publishes for a model
        whose schema has a root ``$ref``. ``additionalProperties`` and
        ``unevaluatedProperties`` keep their meaning: the definition moves whole,
        with nothing added beside its keywords but ``type`` and ``$defs``. A root
        ``$ref`` with assertions beside it is not inlined (the assertions would
        then see the definition's ``properties``): it keeps its 2020-12 meaning
        and only ``"type": "object"`` is added.
        """
        if not isinstance(schema, dict):
            return None
        local: dict[str, Any] = schema["$defs"] if isinstance(schema.get("$defs"), dict) else {}
        root: dict[str, Any] = schema
        seen: set[str] = set()
        while isinstance(root.get("$ref"), str) and all(
            key in _ANNOTATIONS or key in ("$ref", "$defs") or key.startswith("x-") for key in root
        ):
            ref = root["$ref"]
            target = self._target(ref, local)
            if not isinstance(target, dict) or ref in seen:
                break
            seen.add(ref)
            beside = {key: value for key, value in root.items() if key not in ("$ref", "$defs")}
            root = {**{key: value for key, value in target.items() if key != "$defs"}, **beside}
        if not self._is_object(root, local, frozenset()):
            return None
        body = {key: value for key, value in root.items() if key != "$defs"}
        if body.get("type") != "object":
            body = {
                "type": "object",
                **{key: value for key, value in body.items() if key != "type"},
            }
        referenced = {
            name
            for name in local_ref_names(body) | local_ref_names(local)
            if name in self.defs and name not in local
        }
        defs = dict(local)
        for name in sorted(self.closure(referenced)):
            defs[name] = self.defs[name]
        if defs:
            body["$defs"] = defs
        return body

    def closure(self, names: set[str] | frozenset[str]) -> frozenset[str]:
        seen: set[str] = set()
        stack = list(names)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(self._uses.get(name, ()))
        return frozenset(seen)

    def with_defs(self, schema: Any, names: frozenset[str]) -> Any:
        """``schema`` carrying the named definitions under ``$defs`` (sorted)."""
        if not names or not isinstance(schema, dict):
            return schema
        own = dict(schema.get("$defs", {}))
        for name in sorted(names):
            own[name] = self.defs[name]
        return {**schema, "$defs": own}

    # -- internals -------------------------------------------------------

    def _target(self, ref: str, local: Mapping[str, Any]) -> Any:
        """What a bundled ``#/$defs/…`` reference points to (None when nothing)."""
        if not ref.startswith(LOCAL_REF):
            return None
        document = {"$defs": {**self.defs, **local}}
        target = resolve_pointer(document, unquote(ref[1:]))
        return None if target is MISSING else target

    def _is_object(self, schema: Any, local: Mapping[str, Any], seen: frozenset[str]) -> bool:
        if not isinstance(schema, dict):
            return False
        kind = schema.get("type")
        if kind is not None:
            return bool(kind == "object" or kind == ["object"])
        ref = schema.get("$ref")
        if (
            isinstance(ref, str)
            and ref not in seen
            and self._is_object(self._target(ref, local), local, seen | {ref})
        ):
            return True
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and any(self._is_object(b, local, seen) for b in all_of):
            return True
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if (
                isinstance(branches, list)
                and branches
                and all(self._is_object(branch, local, seen) for branch in branches)
            ):
                return True
        return False

    def _define_type(self, name: str) -> str:
        key = ("#types", name)
        if key in self._names:
            return self._names[key]
        self._names[key] = name
        used: set[str] = set()
        self.defs[name] = None  # placeholder: recursion through refs stops here
        schema = self.types[name]
        self.defs[name] = self._rewrite(schema, _Origin(None, schema), ("types", name), used)
        self._uses[name] = frozenset(used)
        return name

    def _define_file(self, file: Path, pointer: str, path: JsonPath) -> str | None:
        key = (str(file), pointer)
        if key in self._names:
            return self._names[key]
        document = self._load_file(file, path)
        if document is None:
            return None
        target = resolve_pointer(document, pointer)
        if target is MISSING:
            self.problems.append(RefProblem(path, f"'{pointer}' does not exist in {file.name}"))
            return None
        name = self._fresh_name(
            _pascal(file.stem) + (_pascal(pointer.rsplit("/", 1)[-1]) if pointer else "")
        )
        self._names[key] = name
        self.file_defs[name] = (file, pointer, path)
        used: set[str] = set()
        self.defs[name] = None
        self.defs[name] = self._rewrite(target, _Origin(file, document), path, used)
        self._uses[name] = frozenset(used)
        return name

    def _fresh_name(self, base: str) -> str:
        base = base or "Schema"
        name, counter = base, 2
        while name in self.defs or name in self.types or name in self.reserved:
            name, counter = f"{base}{counter}", counter + 1
        return name

    def _load_file(self, file: Path, path: JsonPath) -> Any:
        if file in self._files:
            return self._files[file]
        try:
            # Regular files only, of bounded size: a FIFO in the tree would block the
            # open or the read forever, a symlink to /dev/zero never end (an in-tree
            # symlink to a regular file is fine: confinement was checked on the target).
            text = read_regular(file, limit=MAX_SPEC_BYTES).decode("utf-8")
            document = json.loads(text) if file.suffix == ".json" else _yaml_document(text)
            upgrade_schema(document, ())  # an earlier draft's file, in 2020-12
        except FileNotFoundError:
            self.problems.append(
                RefProblem(path, f"referenced file '{self.shown(file)}' does not exist")
            )
            document = None
        except UnsafeFile as exc:
            self.problems.append(
                RefProblem(path, f"referenced file '{self.shown(file)}' {exc.reason}")
            )
            document = None
        except (OSError, ValueError, yaml.YAMLError, RecursionError) as exc:
            self.problems.append(
                RefProblem(path, f"cannot read referenced file '{self.shown(file)}': {exc}")
            )
            document = None
        self._files[file] = document
        return document

    def shown(self, file: Path) -> str:
        """``file`` relative to the spec's folder when inside it (messages stay machine-independent)."""
        try:
            return file.relative_to(self.spec_dir.resolve()).as_posix()
        except ValueError:
            return str(file)

    @property
    def files(self) -> list[Path]:
        """Every external file read, in a stable order (for the build manifest)."""
        return sorted(self._files)

    def _rewrite(self, schema: Any, origin: _Origin, path: JsonPath, used: set[str]) -> Any:
        if not isinstance(schema, dict):
            return schema
        if (
            isinstance(schema.get("$id"), str)
            and origin.file is None
            and schema is not origin.document
        ):
            origin = _Origin(None, schema)  # a resource of its own: `#…` inside means it
        result: dict[str, Any] = {}
        for key, value in schema.items():
            sub = path + (key,)
            if key in ("$id", "$anchor") and isinstance(value, str):
                # Published schemas are one document whose references all point at its
                # root's $defs: an $id would make them resolve against itself instead,
                # and the references to an $anchor are rewritten (a copy of its schema
                # under $defs would hold the same anchor twice).
                continue
            if (
                key == "$ref"
                and isinstance(value, str)
                and origin.file is None
                and origin.local_defs
                and value.startswith(LOCAL_REF)
            ):
                self._check_local(value, origin.document, sub)
                result[key] = value  # the schema's own $defs: published as written
            elif key == "$ref" and isinstance(value, str):
                name = self._follow(value, origin, sub)
                if name is not None:
                    used.add(name)
                    result[key] = f"#/$defs/{name}"
                else:
                    result[key] = value
            elif key in SCHEMA_VALUE_KEYWORDS:
                result[key] = self._rewrite(value, origin, sub, used)
            elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                result[key] = [
                    self._rewrite(item, origin, sub + (index,), used)
                    for index, item in enumerate(value)
                ]
            elif key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                result[key] = {
                    name: self._rewrite(item, origin, sub + (name,), used)
                    for name, item in value.items()
                }
            else:
                result[key] = value
        return result

    def _follow_in_spec(
        self, ref: str, pointer: str, origin: _Origin, path: JsonPath
    ) -> str | None:
        """A ``#…`` reference in the spec: ``#/types/Name``, else a JSON pointer or an
        ``$anchor`` inside the schema it sits in (``origin.document``)."""
        match = re.fullmatch(r"/types/([^/]+)(/.*)?", pointer)
        if match and match.group(1) in self.types:
            if match.group(2) is None:
                return self._define_type(match.group(1))
            # into a type's own namespace (`#/types/v2/$defs/User`): its `#…` are the type's
            origin = _Origin(None, self.types[match.group(1)])
            target = resolve_pointer(self.types[match.group(1)], match.group(2))
        elif pointer.startswith("/") or not pointer:
            document = origin.document
            target = resolve_pointer(document, pointer) if document is not None else MISSING
        else:
            origin, target = self._find_anchor(ref, pointer, origin, path)
        if isinstance(target, (dict, bool)):
            return self._define_target(target, pointer, origin, path)
        if match and match.group(1) not in self.types:
            known = ", ".join(sorted(self.types)) or "none defined"
            message = f"no type '{match.group(1)}' (types: {known})"
        elif match:
            message = f"type '{match.group(1)}' has no schema at '{match.group(2)}'"
        elif pointer and not pointer.startswith("/"):
            if target is None:
                return None  # ambiguous: said by _find_anchor
            message = f"no $anchor '{pointer}' in this schema or in any of types"
        else:
            message = "it points to no schema inside this one; use '#/types/Name' or a file path"
        self.problems.append(RefProblem(path, f"'{ref}' does not resolve: {message}"))
        return None

    def _find_anchor(
        self, ref: str, anchor: str, origin: _Origin, path: JsonPath
    ) -> tuple[_Origin, Any]:
        """An ``$anchor`` in the schema the reference sits in, else in one of ``types``
        (the spec's shared definitions: an anchor declared there is spec-wide). MISSING
        when none declares it; None (the problem recorded) when several types do."""
        found = _anchor_pointer(origin.document, anchor)
        if found is not None:
            return origin, resolve_pointer(origin.document, found)
        owners = [
            (name, where)
            for name, schema in self.types.items()
            if (where := _anchor_pointer(schema, anchor)) is not None
        ]
        if len(owners) > 1:
            names = ", ".join(name for name, _ in owners)
            message = f"'{ref}' is ambiguous: $anchor '{anchor}' is declared in types {names}"
            self.problems.append(RefProblem(path, message))
            return origin, None
        if not owners:
            return origin, MISSING
        name, where = owners[0]
        return _Origin(None, self.types[name]), resolve_pointer(self.types[name], where)

    def _define_target(self, target: Any, pointer: str, origin: _Origin, path: JsonPath) -> str:
        """A definition of its own for a subschema a reference points to."""
        for name, schema in self.types.items():
            if schema is target:
                return self._define_type(name)
        key = ("#target", str(id(target)))
        if key in self._names:
            return self._names[key]
        name = self._fresh_name(_def_name(pointer.rsplit("/", 1)[-1]) if pointer else "Schema")
        self._names[key] = name
        self._keep.append(target)  # its id stays its own while it is a key
        used: set[str] = set()
        self.defs[name] = None
        self.defs[name] = self._rewrite(target, origin, path, used)
        self._uses[name] = frozenset(used)
        return name

    def _check_local(self, ref: str, document: Mapping[str, Any], path: JsonPath) -> None:
        if resolve_pointer(document, unquote(ref[1:])) is not MISSING:
            return
        own = document.get("$defs")
        names = sorted(own) if isinstance(own, dict) else []
        first = (
            unquote(ref[len(LOCAL_REF) :].split("/", 1)[0]).replace("~1", "/").replace("~0", "~")
        )
        if first in names:
            self.problems.append(RefProblem(path, f"'{ref}' does not resolve inside this schema"))
        else:
            self.problems.append(
                RefProblem(
                    path,
                    f"'{ref}' does not resolve: this schema's $defs has no '{first}' "
                    f"({'it has: ' + ', '.join(names) if names else 'it has none'})",
                )
            )

    def _follow(self, ref: str, origin: _Origin, path: JsonPath) -> str | None:
        location, _, fragment = ref.partition("#")
        pointer = unquote(fragment)
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", location):
            self.problems.append(
                RefProblem(
                    path, f"'{ref}': only local files are followed, never network references"
                )
            )
            return None
        if not location:
            if origin.file is None:
                return self._follow_in_spec(ref, pointer, origin, path)
            if pointer and not pointer.startswith("/"):
                found = _anchor_pointer(origin.document, pointer)
                if found is None:
                    self.problems.append(
                        RefProblem(
                            path, f"'{ref}': no $anchor '{pointer}' in {self.shown(origin.file)}"
                        )
                    )
                    return None
                pointer = found
            return self._define_file(origin.file, pointer, path)
        base = origin.file.parent if origin.file is not None else self.spec_dir
        target = (base / location).resolve()
        if not self.allow_outside and not target.is_relative_to(self.spec_dir.resolve()):
            self.problems.append(
                RefProblem(
                    path,
                    f"'{ref}' points outside the spec's directory tree "
                    "(pass --allow-outside-refs, or set allow-outside-refs in "
                    "[tool.mcpgen], to follow it)",
                )
            )
            return None
        return self._define_file(target, pointer, path)


def _def_name(segment: str) -> str:
    """A definition name for what a pointer ends in: a class name models.py can use."""
    name = _pascal(segment)
    if not name.isidentifier() or keyword.iskeyword(name) or name in MODELS_PY_NAMES:
        name = f"Schema{name}"
    return name


def _anchor_pointer(document: Any, anchor: str) -> str | None:
    """The JSON pointer of the first subschema of ``document`` whose ``$anchor`` is
    ``anchor`` (None when there is none)."""
    for node, where in walk_schemas(document, ()):
        if isinstance(node, dict) and node.get("$anchor") == anchor:
            return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in where)
    return None


def _yaml_document(text: str) -> Any:
    """A referenced YAML file, read like the spec itself: JSON values only (a date
    stays a string) and a bound on alias expansion. ``yaml.safe_load`` made dates
    of ``2024-01-01`` (which JSON cannot carry) and let a few hundred bytes of
    nested aliases expand without end while the schema was walked."""
    from .yamlpos import load_yaml

    document, problems = load_yaml(text, "")
    if problems:
        first = problems[0]
        raise ValueError(f"line {first.line}, column {first.column}: {first.message}")
    return document.data


def _pascal(text: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(part[:1].upper() + part[1:] for part in parts if part)
