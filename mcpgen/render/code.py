"""Python source as a sequence of parts: what the type mapping builds instead of strings.

An annotation, and a models.py declaration, name two kinds of things that each
generated module may print under a name of its own: models.py's types (server.py and
client.py import a type called ``Literal`` as ``Literal_``) and typing's and pydantic's
names (models.py imports ``Field`` as ``_Field`` where a type is called ``Field``).
A ``Code`` keeps them apart from the text around them, as ``Ref`` and ``Helper`` parts,
and keeps the literals it quotes (``Literal["Any"]``'s values, a docstring) as
``Value`` parts, read as nothing but text. So what a piece of code prints (under a
given renaming), which models.py types it names and which helpers it uses are read
off its parts, never found again in printed text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Code", "Helper", "Part", "Ref", "Value", "code", "join"]


@dataclass(frozen=True, slots=True)
class Ref:
    """A models.py type, by its name there."""

    name: str


@dataclass(frozen=True, slots=True)
class Helper:
    """A name models.py, server.py or client.py imports from typing or pydantic."""

    name: str


@dataclass(frozen=True, slots=True)
class Value:
    """A literal as written (``'a|b'``, ``True``, a docstring): printed as it is."""

    text: str


Part = str | Ref | Helper | Value  # a ``str`` is Python text: brackets, ``|``, builtins

_NO_NAMES: Mapping[str, str] = {}


class Code(tuple[Part, ...]):
    """Immutable parts, adjacent text merged (so equal code has equal parts); make
    one with ``code``."""

    __slots__ = ()

    def text(
        self, renames: Mapping[str, str] = _NO_NAMES, helpers: Mapping[str, str] = _NO_NAMES
    ) -> str:
        """The source: models.py types by ``renames``, helpers by ``helpers`` (each
        under its own name when not there)."""
        out = []
        for part in self:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Ref):
                out.append(renames.get(part.name, part.name))
            elif isinstance(part, Helper):
                out.append(helpers.get(part.name, part.name))
            else:
                out.append(part.text)
        return "".join(out)

    @property
    def refs(self) -> frozenset[str]:
        """The models.py types this code names."""
        return frozenset(p.name for p in self if isinstance(p, Ref))

    @property
    def helpers(self) -> frozenset[str]:
        """The typing and pydantic names this code uses."""
        return frozenset(p.name for p in self if isinstance(p, Helper))

    def ref_name(self) -> str | None:
        """The type's name when this code is one models.py type and nothing else."""
        only = self[0] if len(self) == 1 else None
        return only.name if isinstance(only, Ref) else None

    def endswith(self, suffix: str) -> bool:
        last = self[-1] if self else None
        return isinstance(last, str) and last.endswith(suffix)

    def removesuffix(self, suffix: str) -> Code:
        if not self.endswith(suffix):
            return self
        last = self[-1]
        assert isinstance(last, str)
        return code(*self[:-1], last.removesuffix(suffix))

    def says(self, text: str) -> bool:
        """Does the Python text between names and values hold ``text``?"""
        return any(isinstance(p, str) and text in p for p in self)

    def union_members(self) -> list[Code]:
        """Top-level ``|`` members of an annotation (a value's ``|`` or ``]`` is text)."""
        members: list[Code] = []
        current: list[Part] = []
        depth = 0
        for part in self:
            if not isinstance(part, str):
                current.append(part)
                continue
            start = 0
            for index, char in enumerate(part):
                if char == "[":
                    depth += 1
                elif char == "]":
                    depth -= 1
                elif char == "|" and depth == 0:
                    members.append(_stripped([*current, part[start:index]]))
                    current, start = [], index + 1
            current.append(part[start:])
        members.append(_stripped(current))
        return members


def code(*pieces: Code | Part) -> Code:
    """The parts of ``pieces`` in order, as one ``Code``."""
    parts: list[Part] = []
    text = ""  # text not yet added: the text of adjacent pieces is one part
    for piece in pieces:
        if type(piece) is str:
            text += piece
            continue
        for part in piece if isinstance(piece, Code) else (piece,):
            if type(part) is str:
                text += part
            else:
                if text:
                    parts.append(text)
                    text = ""
                parts.append(part)
    if text:
        parts.append(text)
    return Code(parts)


def join(separator: str, pieces: Iterable[Code | Part]) -> Code:
    """``separator.join`` for code."""
    joined: list[Code | Part] = []
    for piece in pieces:
        joined += (separator, piece)
    return code(*joined[1:])


def _stripped(parts: list[Part]) -> Code:
    """``parts`` without the blanks around them (``str.strip`` of the text)."""
    whole: tuple[Part, ...] = code(*parts)
    if whole and isinstance(whole[0], str):
        whole = (whole[0].lstrip(), *whole[1:])
    if whole and isinstance(whole[-1], str):
        whole = (*whole[:-1], whole[-1].rstrip())
    return code(*whole)
