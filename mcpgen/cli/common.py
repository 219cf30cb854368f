"""What every ``mcpgen`` command shares: printing (every line escaped), writing a
user's file safely, the ``--format`` option, ``[tool.mcpgen]`` and the default specs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..printable import escape_lines

if TYPE_CHECKING:
    from ..config import ProjectConfig

# Every line the CLI prints goes through echo: text from a spec or a server (names,
# keys, paths, messages) has its control, line-break and bidi characters escaped, so
# it cannot move the cursor, retitle the terminal or fake another line of output.


def echo(text: str, *, nl: bool = True, err: bool = False, fg: str | None = None) -> None:
    from ..report import color_choice

    # NO_COLOR wins, then FORCE_COLOR, else colour only on a terminal
    click.secho(escape_lines(text), nl=nl, err=err, fg=fg, color=color_choice())


def echo_error(text: str) -> None:
    echo(text, err=True, fg="red")


def echo_warning(text: str) -> None:
    echo(text, err=True, fg="yellow")


def write_user_file(target: Path, text: str, *, force: bool, base: Path | None = None) -> None:
    """Write a file the user named (``init``, ``import -o``, ``config --write``), or exit.

    A symlink at ``target`` is refused (exit 2), even with --force, and never
    followed: a dangling one planted in a shared folder would otherwise make the
    write create its target wherever it points. So is a symlinked folder on the way
    from ``base`` (default: the working folder) to ``target``: ``.vscode ->
    ../elsewhere`` must not carry ``config vscode --write`` out of the project.
    Folders above ``base`` (a home folder that is a link) are the user's business.
    The bytes go through a temporary file beside ``target`` and a rename
    (safeio.replace_file), so a link planted between this check and the write is
    replaced, not followed, either way.
    """
    from ..safeio import replace_file

    check_user_target(target, force=force, base=base)
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_file(target, text.encode("utf-8"))


def check_user_target(target: Path, *, force: bool, base: Path | None = None) -> None:
    """Exit 2 when ``target`` or a folder between ``base`` and it is a symlink, 1
    when it exists and --force is not given."""
    for path in (*_folders_below(target, base or Path.cwd()), target):
        if path.is_symlink():
            echo_error(
                f"{path} is a symbolic link; mcpgen does not write through one "
                "(remove it or choose another path)"
            )
            sys.exit(2)
    if target.exists() and not force:
        echo_error(f"{target} exists; pass --force to overwrite it")
        sys.exit(1)


def _folders_below(target: Path, base: Path) -> list[Path]:
    """The folders from ``base`` (excluded) down to ``target``'s parent, when
    ``target`` lies under ``base`` (compared without resolving links); else none."""
    absolute, root = target.absolute(), base.absolute()
    try:
        parts = absolute.relative_to(root).parts[:-1]
    except ValueError:
        return []
    folders = []
    for part in parts:
        root = root / part
        folders.append(root)
    return folders


ALLOW_OUTSIDE_REFS = click.option(
    "--allow-outside-refs",
    is_flag=True,
    default=None,
    help="Follow $ref files outside the spec's tree.",
)

FORMAT = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github"]),
    default=None,
    help="text (default, or [tool.mcpgen] format): for people; json: one document; "
    "github: workflow annotations.",
)

HEADER = click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="'NAME: VALUE'",
    help="With --url: send this HTTP header with every request (repeat), "
    "e.g. --header 'Authorization: Bearer TOKEN'.",
)


AUTH_TOKEN = click.option(
    "--auth-token",
    envvar="MCPGEN_AUTH_TOKEN",
    metavar="TOKEN",
    help="With --url: an OAuth access token, sent as 'Authorization: Bearer TOKEN' "
    "(default: $MCPGEN_AUTH_TOKEN; never printed).",
)


def with_token(
    pairs: tuple[tuple[str, str], ...], token: str | None, url: str | None
) -> tuple[tuple[str, str], ...]:
    """The ``--header`` pairs plus the ``Authorization`` of ``--auth-token``."""
    if token is None:
        return pairs
    if url is None:
        raise click.UsageError("--auth-token needs --url")
    if any(name.lower() == "authorization" for name, _ in pairs):
        raise click.UsageError("give --auth-token or an Authorization --header, not both")
    if not token.strip() or any(c in token for c in "\r\n "):
        raise click.BadParameter("a token is one word", param_hint="--auth-token")
    return (*pairs, ("Authorization", f"Bearer {token}"))


def request_headers(values: tuple[str, ...], url: str | None) -> tuple[tuple[str, str], ...]:
    """``--header 'Name: value'`` options as (name, value) pairs; they need ``--url``
    (an http:// or https:// one)."""
    if values and url is None:
        raise click.UsageError("--header needs --url")
    if url is not None and not url.startswith(("http://", "https://")):
        raise click.BadParameter(f"not an http:// or https:// URL: {url!r}", param_hint="--url")
    pairs = []
    for value in values:
        name, colon, text = value.partition(":")
        if not colon or not name.strip() or any(c in value for c in "\r\n"):
            raise click.BadParameter(
                f"expected 'Name: value', got {value!r}", param_hint="--header"
            )
        pairs.append((name.strip(), text.strip()))
    return tuple(pairs)


def project_config() -> ProjectConfig | None:
    """[tool.mcpgen] of the nearest pyproject.toml, or exit 2 when it is malformed."""
    from ..config import ConfigError, find_config

    try:
        config = find_config()
    except ConfigError as exc:
        echo_error(f"mcpgen: {exc}")
        sys.exit(2)
    if config is not None and config.root.resolve() != Path.cwd().resolve():
        # settings from a folder above this one: say which file they came from
        echo(f"mcpgen: using [tool.mcpgen] of {config.file}", err=True)
    return config


def specs_or_config(specs: tuple[Path, ...], config: ProjectConfig | None) -> tuple[Path, ...]:
    """The SPECs typed, else [tool.mcpgen] specs, else ./tools.yaml when it exists."""
    if specs:
        return specs
    if config is not None and config.specs:
        return tuple(entry.path for entry in config.specs)
    if Path("tools.yaml").is_file():
        return (Path("tools.yaml"),)
    raise click.UsageError(
        "no SPEC given, no [tool.mcpgen] specs in a pyproject.toml here or above, "
        "and no ./tools.yaml (mcpgen init writes a project)"
    )


def unreadable(spec: Path) -> bool:
    """Exit-code 2 material: the spec path names no file at all (an I/O problem, not a
    finding about a spec)."""
    return not spec.is_file()


def setting(given: bool | None, config: ProjectConfig | None, name: str) -> bool:
    """A flag as typed, else its ``[tool.mcpgen]`` value, else off."""
    if given is not None:
        return given
    return bool(config and getattr(config, name))


def chosen_format(given: str | None, config: ProjectConfig | None) -> str:
    """``--format`` as typed, else ``[tool.mcpgen] format``, else text."""
    return given or (config.format if config and config.format else "text")
