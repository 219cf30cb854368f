"""Pydantic-typed signatures of ``add`` and ``profile`` for the decorator-style
servers (the SDK's ``MCPServer`` and FastMCP), mirroring benchmarks/specs/bench.yaml:
the same constraints, so those servers validate what the generated one validates."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

import _profile
from pydantic import BaseModel, ConfigDict, Field


class AddOutput(BaseModel):
    sum: int


class Address(BaseModel):
    model_config = ConfigDict(extra="forbid")
    street: str | None = None
    city: Annotated[str, Field(min_length=1)]
    zip: Annotated[str, Field(pattern=r"^[0-9]{5}$")]


Role = Literal["admin", "editor", "viewer"]


class User(BaseModel):
    name: str
    email: str
    age: Annotated[int, Field(ge=0)]
    role: Role
    tags: list[str]
    nickname: str | None = None


class OutAddress(BaseModel):
    street: str | None = None
    city: str
    zip: str


class Stats(BaseModel):
    score: float
    priority: Annotated[int, Field(ge=1, le=5)]
    ratio: float | None = None


class ProfileOutput(BaseModel):
    id: str
    active: bool
    user: User
    address: OutAddress
    stats: Stats
    joined: str


def add(a: int, b: int) -> AddOutput:
    """Add two integers."""
    return AddOutput(sum=a + b)


def profile(
    name: Annotated[str, Field(min_length=1, max_length=64)],
    email: Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")],
    age: Annotated[int, Field(ge=0, le=150)],
    score: Annotated[float, Field(ge=0, le=100)],
    active: bool,
    role: Role,
    tags: Annotated[list[Annotated[str, Field(min_length=1, max_length=20)]], Field(max_length=10)],
    address: Address,
    joined: dt.date,
    priority: Annotated[int, Field(ge=1, le=5)] = 3,
    ratio: Annotated[float | None, Field(gt=0, le=1)] = None,
    nickname: Annotated[str | None, Field(max_length=32)] = None,
) -> ProfileOutput:
    """Normalise a user profile (a mid-size tool for the validation benchmark)."""
    if len(set(tags)) != len(tags):
        raise ValueError("tags must be unique")
    args: dict[str, Any] = {
        "name": name,
        "email": email,
        "age": age,
        "score": score,
        "active": active,
        "role": role,
        "tags": tags,
        "address": address.model_dump(exclude_none=True),
        "joined": joined.isoformat(),
        "priority": priority,
        "ratio": ratio,
        "nickname": nickname,
    }
    return ProfileOutput.model_validate(_profile.profile(args))
