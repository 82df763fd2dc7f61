"""The Typer app every command registers on and the options the commands share (the output helpers are
``cli.output``).

Command modules import from here (light: no command, no catalog); ``servebound.cli.app`` is the same
app with every command registered, and ``servebound.cli`` runs it importing only the invoked command.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Annotated, Any, ClassVar, TypeVar, get_type_hints

from servebound.cli import COMMANDS, declare
from servebound.cli import declare as typer  # the declarations alone: Typer is imported when it builds
from servebound.inputs.workload import BY_NAME, Group, Input, WorkloadInputs, inputs_of


def _root_app() -> Any:
    from servebound.cli.launcher import root_app

    return root_app()


#: The app every command registers on: its Typer app is built when Typer first parses (``typer()``);
#: the fast path reads a command's function from it without Typer (``registered_callback``). Each
#: command's help is its entry in ``COMMANDS``, where it is declared.
app = declare.App(_root_app, listed=COMMANDS)


#: --hardware's help, where a command requires it (HardwareOpt) and where it is one choice of several.
HARDWARE_HELP = "Hardware file (TOML/JSON), catalog id, NxID, or auto (this machine, detected)."
HardwareOpt = Annotated[str, typer.Option("--hardware", "-H", help=HARDWARE_HELP)]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="Model file (TOML/JSON), a .gguf or .safetensors checkpoint, or a catalog id."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (the contract's fields).")]


def option_info(spec: Input, group: str = "") -> Any:
    """A declared input's typer option: its flags, its help (in ``group``'s words), its default shown
    where it is not None."""
    number = spec.kind in (int, float)  # text the declaration parses: its metavar says what it reads
    kind = "tokens" if spec.tokens else "int" if spec.kind is int else "float"
    return typer.Option(
        *spec.flags,
        help=spec.help_for(group),
        show_default=spec.default not in (None, False),
        **({"metavar": f"<{kind}>"} if number and not spec.words else {}),
    )


def typer_option(spec: Input, group: str = "") -> Any:
    """A declared input as a typer parameter type. Numbers, words (batch's 'max') and choices are text,
    parsed and checked by the declaration (``Input.parse``: ``32k``, ``32,000``) as on every surface."""
    if spec.kind is bool:
        kind: Any = bool
    else:
        kind = str if spec.default is not None else str | None
    return Annotated[kind, option_info(spec, group)]


def _opt(name: str) -> Any:
    return option_info(BY_NAME[name])


#: Single declared inputs as options, for commands that take one or two of them (plan, economics).
OverheadOpt = Annotated[float | None, _opt("overhead_gb")]
AllocOpt = Annotated[str | None, _opt("alloc_context")]  # text: the declaration parses it (32k)
ReadOpt = Annotated[str | None, _opt("read_context")]
FloorOpt = Annotated[float, _opt("floor")]
KVPrecisionOpt = Annotated[str | None, _opt("kv_precision")]
EngineOpt = Annotated[str | None, _opt("engine")]

DEFAULT_OVERHEAD_GB: float | None = BY_NAME["overhead_gb"].default
DEFAULT_ALLOC: str | None = BY_NAME["alloc_context"].default
DEFAULT_READ: str | None = BY_NAME["read_context"].default
DEFAULT_FLOOR: float = BY_NAME["floor"].default


class ContextFlags(WorkloadInputs):
    """The memory and floor flags (``--overhead-gb`` .. ``--floor``) and the engine's: the whole workload
    of ``rank``."""

    GROUPS: ClassVar[tuple[Group, ...]] = ("context", "serving")


class WorkloadFlags(WorkloadInputs):
    """The workload flags of the decode-side commands (cost, layout): ``--overhead-gb`` ..
    ``--kv-precision`` and ``--memory-only``."""

    GROUPS: ClassVar[tuple[Group, ...]] = ("context", "serving", "workload", "roof")


_Command = TypeVar("_Command", bound=Callable[..., Any])


def with_flags(record: type, param: str) -> Callable[[_Command], _Command]:
    """Declare the fields of the frozen dataclass ``record`` as options of a command, where its
    ``param`` parameter stands (so its help lists them in that place), and hand them to it as that one
    argument. Typer reads the rewritten signature, so the flags, their help and defaults are exactly the
    record's. Stacks: each use replaces one parameter. A ``WorkloadInputs`` record (``GROUPS``) gives
    the declared inputs of its groups (``with_inputs``)."""
    if issubclass(record, WorkloadInputs):
        return with_inputs(*getattr(record, "GROUPS", ()), param=param, record=record)
    hints = get_type_hints(record, include_extras=True)  # a base record's fields too
    shared = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=inspect.Parameter.empty if f.default is MISSING else f.default,
            annotation=hints[f.name],
        )
        for f in fields(record)  # type: ignore[arg-type]
    ]
    return _replacing(param, shared, record)


def with_inputs(
    *groups: Group, param: str = "flags", record: type[WorkloadInputs] = WorkloadInputs
) -> Callable[[_Command], _Command]:
    """The declared workload inputs of ``groups`` as options of a command, in place of its ``param``
    parameter, handed to it as one ``record`` (the inputs of other groups at their defaults)."""
    group = next((g for g in groups if g in ("decode", "prefill")), "")
    shared = [
        inspect.Parameter(
            spec.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=f"{spec.default:g}"
            if spec.kind in (int, float) and spec.default is not None
            else spec.default,
            annotation=typer_option(spec, group),
        )
        for spec in inputs_of(*groups)
    ]

    def build(**values: Any) -> WorkloadInputs:
        for name, value in values.items():  # numbers are text on the command line: the one grammar
            if isinstance(value, str) and (BY_NAME[name].words or BY_NAME[name].kind is not str):
                values[name] = BY_NAME[name].parse(value)
        return record(**values)

    return _replacing(param, shared, build)


def _replacing(
    param: str, shared: list[inspect.Parameter], build: Callable[..., Any]
) -> Callable[[_Command], _Command]:
    names = [p.name for p in shared]

    def decorate(command: _Command) -> _Command:
        signature = inspect.signature(command, eval_str=True)
        own = list(signature.parameters.values())
        at = [p.name for p in own].index(param)
        parameters = own[:at] + shared + own[at + 1 :]

        @functools.wraps(command)
        def run(**kwargs: Any) -> Any:
            flags = build(**{name: kwargs.pop(name) for name in names})
            return command(**{param: flags}, **kwargs)

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters} | {
            "return": signature.return_annotation
        }
        return run  # type: ignore[return-value]

    return decorate


#: ``WorkloadFlags``' options on a command, in place of its ``flags`` parameter.
with_workload_flags = with_flags(WorkloadFlags, "flags")
