"""Typer's declarations without importing Typer: what a command module states at import time.

A command module declares its options (``Option``, ``Argument``) and registers its commands on an
``App`` exactly as it would with Typer, but nothing here imports Typer (a few tens of milliseconds of
start-up). The fast path (``cli.fast``) reads the registered function from ``App.registered_callback``
and calls it; Typer's path calls ``App.typer()``, which builds the real ``typer.Typer``, turns every
declaration in the registered functions' signatures into Typer's own ``OptionInfo``/``ArgumentInfo``
(in place: Typer registers the very same function objects) and replays the registrations in order.
So the options, their help and the values passed are Typer's, whichever path runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, get_origin

_EMPTY = inspect.Parameter.empty


class Declared:
    """A ``typer.Option(...)`` or ``typer.Argument(...)`` call, made when Typer is first needed."""

    __slots__ = ("_args", "_built", "_kind", "_kwargs")

    def __init__(self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._kind, self._args, self._kwargs = kind, args, kwargs
        self._built: Any = None

    def build(self) -> Any:
        """Typer's parameter info for this declaration (made once)."""
        if self._built is None:
            import typer

            self._built = getattr(typer, self._kind)(*self._args, **self._kwargs)
        return self._built


def Option(*args: Any, **kwargs: Any) -> Any:
    """``typer.Option`` with the same arguments, made when Typer builds the command."""
    return Declared("Option", args, kwargs)


def Argument(*args: Any, **kwargs: Any) -> Any:
    """``typer.Argument`` with the same arguments, made when Typer builds the command."""
    return Declared("Argument", args, kwargs)


def _built(value: Any) -> Any:
    """``value`` with every declaration in it (itself, or an Annotated's metadata) made Typer's."""
    if isinstance(value, Declared):
        return value.build()
    if get_origin(value) is Annotated and any(isinstance(m, Declared) for m in value.__metadata__):
        return Annotated[(value.__origin__, *(_built(m) for m in value.__metadata__))]
    return value


def to_typer(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` itself, its signature and annotations with Typer's parameter infos in place of
    the declarations (what Typer reads: ``inspect.signature`` and ``get_type_hints``)."""
    if getattr(function, "_declarations_built", False):
        return function
    signature = inspect.signature(function, eval_str=True)
    parameters = [
        p.replace(annotation=_built(p.annotation), default=_built(p.default))
        for p in signature.parameters.values()
    ]
    function.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    annotations = {p.name: p.annotation for p in parameters if p.annotation is not _EMPTY}
    if signature.return_annotation is not _EMPTY:
        annotations["return"] = signature.return_annotation
    function.__annotations__ = annotations
    function._declarations_built = True  # type: ignore[attr-defined]
    return function


def _build_tree(app: Any) -> None:
    """Every function registered on a Typer app and its sub-apps (a module's own ``typer.Typer``, whose
    commands may use the shared declarations) turned to Typer's parameter infos."""
    infos = [*app.registered_commands, app.registered_callback, *app.registered_groups]
    for info in infos:  # (an unset callback is Typer's placeholder, not a function)
        if info is not None and inspect.isfunction(info.callback):
            to_typer(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            _build_tree(group.typer_instance)


class App:
    """Stands for a ``typer.Typer``: records ``command``, ``callback`` and ``add_typer`` calls; the
    Typer app is built from them on first use (``typer()``, or any other attribute).

    ``listed`` (the root app's: ``servebound.cli.COMMANDS``) is where each command is declared, by name:
    a command or sub-app registered here takes its help from it, and a name it lacks is an error."""

    def __init__(
        self,
        factory: Callable[[], Any] | None = None,
        *,
        listed: Mapping[str, tuple[str, str]] | None = None,
        **settings: Any,
    ) -> None:
        self._factory = factory
        self._listed = listed
        self._settings = settings
        self._calls: list[tuple[str, tuple[Any, ...], dict[str, Any], Any]] = []
        self._typer: Any = None

    def _record(self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any], target: Any) -> None:
        self._calls.append((kind, args, kwargs, target))
        if self._typer is not None:
            self._replay(kind, args, kwargs, target)

    def _help(self, name: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the listed help of command ``name`` (as declared in ``listed``)."""
        if self._listed is None:
            return kwargs
        if name is None or name not in self._listed:
            raise ValueError(f"command {name!r} is not declared in servebound.cli.COMMANDS: add it there")
        return {**kwargs, "help": self._listed[name][1]}

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        def register(function: Any) -> Any:
            name = kwargs.get("name") or (args[0] if args else function.__name__)
            self._record("command", args, self._help(name, kwargs), function)
            return function

        return register

    def callback(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        def register(function: Any) -> Any:
            self._record("callback", args, kwargs, function)
            return function

        return register

    def add_typer(self, app: Any, **kwargs: Any) -> None:
        self._record("add_typer", (), self._help(kwargs.get("name"), kwargs), app)

    def registered_callback(self, name: str) -> Any:
        """The function registered as command ``name`` (None when there is none), Typer not built."""
        for kind, args, kwargs, function in self._calls:
            if (
                kind == "command"
                and (kwargs.get("name") or (args[0] if args else None) or function.__name__) == name
            ):
                return function
        return None

    def _replay(self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any], target: Any) -> None:
        if kind == "add_typer":
            self._typer.add_typer(target.typer() if isinstance(target, App) else target, **kwargs)
        else:
            getattr(self._typer, kind)(*args, **kwargs)(to_typer(target))

    def typer(self) -> Any:
        """The Typer app, built (once) with every registration so far; every function registered on it
        or on a sub-app so far has Typer's parameter infos (so call it again after registering more)."""
        if self._typer is None:
            _typer_settings()
            if self._factory is not None:
                self._typer = self._factory()
            else:
                import typer

                self._typer = typer.Typer(**self._settings)
            for call in self._calls:
                self._replay(*call)
        _build_tree(self._typer)
        return self._typer

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.typer(), name)


_settings_done: list[bool] = []


def _typer_settings() -> None:
    """The one change to Typer's rendering the tool makes (once): a flag's help row shows no type."""
    if _settings_done:
        return
    _settings_done.append(True)
    from typer.core import TyperOption

    option_type = TyperOption.display_type_rich

    def flag_shows_no_type(self: TyperOption, ctx: Any) -> str | None:
        """A flag (--json, --help) takes no value, so its help row shows no type (it read `<bool>`)."""
        return None if getattr(self, "is_flag", False) else option_type(self, ctx)

    TyperOption.display_type_rich = flag_shows_no_type  # type: ignore[method-assign]
