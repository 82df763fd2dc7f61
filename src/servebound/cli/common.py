"""The command line's one parser: click commands generated from declared inputs.

Every option and argument is an ``Input`` (servebound.inputs.workload): the workload inputs of
``WorkloadInputs``, and each command's own, declared the same way as fields of a record (``given``)
or as single ``option(...)``\\ s. ``command`` turns the declarations into a click command whose
every typed value is parsed by ``Input.parse`` (one grammar on every surface), hands a record's
fields to the function as that record, refuses an option given twice (as the API refuses a repeated
parameter) and ends its help with the command's examples. Command modules import from here (light:
no command, no catalog); ``servebound.cli`` runs them, ``servebound.cli.app`` holds them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import MISSING, is_dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click

from servebound.catalog import snapshot
from servebound.cli.commands import COMMANDS, REGISTERED, help_option
from servebound.errors import InputError
from servebound.inputs.declare import record_inputs as declared_fields
from servebound.inputs.workload import BY_NAME, Group, Input, WorkloadInputs, given, inputs_of

#: A declared option with no default: the command needs it.
REQUIRED: Any = MISSING


def option(name: str, kind: type, default: Any, help: str, *flags: str, **meta: Any) -> Input:
    """A command's own input, declared as the workload's are: ``name`` is the function's keyword,
    ``flags`` its names on the command line (none: a positional argument)."""
    return Input(name=name, kind=kind, default=default, help=help, groups=frozenset(), flags=flags, **meta)


def argument(name: str, help: str, **meta: Any) -> Input:
    """A required positional argument, as text (checked by ``Input.parse``)."""
    return option(name, str, REQUIRED, help, **meta)


#: Positional arguments that take every remaining word (``servebound search qwen3 30b``), by name.
_ALL_WORDS: set[str] = set()


def words_argument(name: str, help: str, **meta: Any) -> Input:
    """A required positional argument of one or more words, passed as one text (joined by spaces)."""
    _ALL_WORDS.add(name)
    return argument(name, help, **meta)


def record_inputs(record: type) -> tuple[Input, ...]:
    """The inputs a record declares: a ``WorkloadInputs`` subclass's groups, or each field of a frozen
    dataclass declared as the workload's are, ``given(default, help, flags=(...), ...)`` (``REQUIRED``:
    no default), its type the value's once parsed (``inputs.workload.record_inputs``)."""
    if issubclass(record, WorkloadInputs):
        return inputs_of(*getattr(record, "GROUPS", ()))
    if not is_dataclass(record):
        raise TypeError(f"{record.__name__} is not a dataclass of declared inputs")
    return declared_fields(record)


class Flags:
    """A record's inputs as a command's options, handed to the function as one ``record`` under the
    keyword ``param`` (``help_in``: the group whose own help texts they show)."""

    __slots__ = ("help_in", "inputs", "param", "record")

    def __init__(
        self, param: str, record: Callable[..., Any], inputs: tuple[Input, ...], help_in: str = ""
    ) -> None:
        self.param, self.record, self.inputs, self.help_in = param, record, inputs, help_in


def flags(param: str, record: type) -> Flags:
    """The fields of ``record`` (a dataclass of declared inputs, or a ``WorkloadInputs`` subclass with
    its ``GROUPS``) as options, passed to the command as one ``record`` named ``param``."""
    return Flags(param, record, record_inputs(record))


def workload(*groups: Group, param: str = "flags") -> Flags:
    """The declared workload inputs of ``groups`` as options, passed as one ``WorkloadInputs`` (the
    inputs of other groups at their defaults)."""
    group = next((g for g in groups if g in ("decode", "prefill")), "")
    return Flags(param, WorkloadInputs, inputs_of(*groups), group)


#: --hardware's help, where a command requires it (HARDWARE) and where it is one choice of several.
HARDWARE_HELP = "Hardware file (TOML/JSON), catalog id, NxID, or auto (this machine, detected)."
HARDWARE = option("hardware", str, REQUIRED, HARDWARE_HELP, "--hardware", "-H")
MODEL = option(
    "model",
    str,
    REQUIRED,
    "Model file (TOML/JSON), a .gguf or .safetensors checkpoint, or a catalog id.",
    "--model",
    "-m",
)
JSON = option("json_out", bool, False, "Print one JSON object (the contract's fields).", "--json")


def declared(name: str) -> Input:
    """A workload input by name, for a command that takes one or two of them alone."""
    return BY_NAME[name]


class ContextFlags(WorkloadInputs):
    """The memory and floor flags (``--overhead-gb`` .. ``--floor``) and the engine's: the whole workload
    of ``rank``."""

    GROUPS: ClassVar[tuple[Group, ...]] = ("context", "serving")


class WorkloadFlags(WorkloadInputs):
    """The workload flags of the decode-side commands (cost, layout): ``--overhead-gb`` ..
    ``--kv-precision`` and ``--memory-only``."""

    GROUPS: ClassVar[tuple[Group, ...]] = ("context", "serving", "workload", "roof")


# The click side ------------------------------------------------------------------------------------

#: The catalog each completed input's values come from (looked up only when a shell asks).
_COMPLETED = {
    "hardware": "hardware",
    "hardware_id": "hardware",
    "fits": "hardware",
    "model": "models",
    "draft": "models",
    "model_id": "models",
}


if TYPE_CHECKING:
    _ParamType = click.ParamType[Any, Any]  # (generic in recent click, a plain class in older ones)
else:
    _ParamType = click.ParamType


class Declared(_ParamType):
    """A declared input's text as its value: ``Input.parse`` and nothing else."""

    def __init__(self, spec: Input) -> None:
        self.spec = spec
        self.name = spec.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default, already typed
            return value
        return self.spec.parse(value)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        spec = self.spec
        if isinstance(param, click.Argument):
            return spec.name.upper()
        if spec.choices:
            return f"[{'|'.join(spec.choices)}]"
        kind = "TOKENS" if spec.tokens else {int: "INTEGER", float: "FLOAT"}.get(spec.kind, "TEXT")
        return "|".join((kind, *spec.words))

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        values: Iterable[str] = self.spec.choices
        catalog = _COMPLETED.get(self.spec.name)
        if catalog is not None:
            values = catalog_ids(catalog)
        return [CompletionItem(v) for v in values if v.startswith(incomplete)]


def catalog_ids(catalog: str) -> list[str]:
    """The catalog's ids (hardware rows or model profiles, in catalog order), for shell completion:
    the snapshot's, with no catalog module loaded."""
    return snapshot.ids(snapshot.HARDWARE) if catalog == "hardware" else list(snapshot.places())


def click_param(spec: Input, group: str = "") -> click.Parameter:
    """One declared input as a click option (or, with no flags, a positional argument)."""
    required = spec.default is REQUIRED
    # A required input states no default at all: click counts only an absent value as missing.
    default: dict[str, Any] = {} if required else {"default": spec.default}
    if not spec.flags:
        if spec.name in _ALL_WORDS:
            return click.Argument(
                [spec.name],
                type=Declared(spec),
                required=required,
                nargs=-1,
                callback=lambda _ctx, _param, value: " ".join(value),
            )
        return click.Argument([spec.name], type=Declared(spec), required=required, **default)
    if spec.kind is bool:
        return click.Option([spec.name, *spec.flags], is_flag=True, help=spec.help_for(group), **default)
    return click.Option(
        [spec.name, *spec.flags],
        type=Declared(spec),
        required=required,
        help=spec.help_for(group),
        show_default=spec.default not in (None, False, REQUIRED),
        **default,
    )


class Command(click.Command):
    """A command built from declarations: its help ends with its examples, and an option given more
    than once is refused (no silent last-wins)."""

    def __init__(
        self,
        *args: Any,
        examples: Sequence[str] = (),
        function: Callable[..., Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)
        self.function = function  # what the command runs (its callback builds the records first)

    def make_parser(self, ctx: click.Context) -> Any:
        return _once_parser(super().make_parser(ctx), ctx)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return help_option(self, ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The positional arguments with their declared help (click lists only options), then the options."""
        rows = [
            (p.human_readable_name, p.type.spec.help)
            for p in self.get_params(ctx)
            if isinstance(p, click.Argument) and isinstance(p.type, Declared)
        ]
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        super().format_options(ctx, formatter)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_examples(self.examples, formatter)


class CommandGroup(click.Group):
    """A group of commands (hardware, models ...), with examples like every command."""

    command_class = Command

    def __init__(self, *args: Any, examples: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return help_option(self, ctx)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_examples(self.examples, formatter)


def _format_examples(examples: Sequence[str], formatter: click.HelpFormatter) -> None:
    if examples:
        with formatter.section("Examples"):
            for example in examples:  # whole lines: a command wrapped is no longer one to copy
                formatter.write(f"{'':>{formatter.current_indent}}$ {example}\n")


def _once_parser(parser: Any, ctx: click.Context) -> Any:
    """``parser`` refusing an option given twice: the first repeated one is named. Its short options
    (-H, -m) are matched where click matches long ones first: otherwise each is a failed long match
    first, whose error (built and dropped) searches for message catalogs and imports difflib."""
    short, long_ = getattr(parser, "_short_opt", None), getattr(parser, "_long_opt", None)
    if isinstance(short, dict) and isinstance(long_, dict):
        long_.update({name: opt for name, opt in short.items() if name not in long_})
    parse = parser.parse_args

    def parse_args(args: list[str]) -> Any:
        opts, rest, order = parse(args)
        seen: set[str] = set()
        for param in order:
            if not isinstance(param, click.Option) or ctx.resilient_parsing:
                continue
            if param.name in seen and not (param.multiple or param.count):
                named = "/".join(param.opts + param.secondary_opts)
                raise InputError(param.name or named, f"{named} given more than once; give it once")
            seen.add(param.name or "")
        return opts, rest, order

    parser.parse_args = parse_args
    return parser


_Function = TypeVar("_Function", bound=Callable[..., Any])


def _help_of(name: str, parent: click.Group | None, help: str | None) -> str:
    if parent is not None:
        if not help:
            raise ValueError(f"subcommand {name!r} needs its help")
        return help
    if name not in COMMANDS:
        raise ValueError(f"command {name!r} is not declared in servebound.cli.COMMANDS: add it there")
    return COMMANDS[name][1]


def _examples(name: str, examples: Sequence[str]) -> tuple[str, ...]:
    if len(examples) < 2:
        raise ValueError(f"command {name!r} needs two examples in its help")
    return tuple(examples)


def command(
    name: str,
    *declarations: Input | Flags,
    examples: Sequence[str],
    parent: click.Group | None = None,
    help: str | None = None,
) -> Callable[[_Function], _Function]:
    """Register the function as command ``name`` (on ``parent``, else the root): its options and
    arguments are ``declarations`` in order, each ``Input`` passed by its name, each ``Flags`` as one
    record. A root command's help is its line in ``servebound.cli.COMMANDS``."""
    text = _help_of(name, parent, help)
    shown = _examples(name, examples)

    def register(function: _Function) -> _Function:
        params: list[click.Parameter] = []
        records: list[tuple[Flags, list[str]]] = []
        for item in declarations:
            if isinstance(item, Flags):
                params += [click_param(spec, item.help_in) for spec in item.inputs]
                records.append((item, [spec.name for spec in item.inputs]))
            else:
                params.append(click_param(item))
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"command {name!r} declares an input twice: {names}")

        def callback(**values: Any) -> Any:
            for item, keys in records:
                values[item.param] = item.record(**{key: values.pop(key) for key in keys})
            return function(**values)

        cmd = Command(
            name,
            callback=callback,
            params=params,
            help=text,
            short_help=text,  # a group's list shows it whole, not cut at 45 characters
            examples=shown,
            function=function,
        )
        _attach(cmd, parent)
        return function

    return register


def group(
    name: str, *, examples: Sequence[str], parent: click.Group | None = None, help: str | None = None
) -> CommandGroup:
    """A group of subcommands registered as ``name`` (its help as ``command``'s)."""
    made = CommandGroup(
        name, help=_help_of(name, parent, help), examples=_examples(name, examples), no_args_is_help=True
    )
    _attach(made, parent)
    return made


def _attach(cmd: click.Command, parent: click.Group | None) -> None:
    if parent is not None:
        parent.add_command(cmd)
    else:
        REGISTERED[cmd.name or ""] = cmd


__all__ = [
    "HARDWARE",
    "HARDWARE_HELP",
    "JSON",
    "MODEL",
    "REQUIRED",
    "ContextFlags",
    "Flags",
    "WorkloadFlags",
    "argument",
    "command",
    "declared",
    "flags",
    "given",
    "group",
    "option",
    "workload",
]
