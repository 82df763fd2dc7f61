"""Notes and remedies are records (``servebound.core.advice``), rendered per surface: the terminal spells
an input as a flag, the JSON answer as a query parameter, the pair page as words with a link that sets
the form. Tested on what each surface puts out, for pairs where something does not fit."""

from __future__ import annotations

import json
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from servebound.api import decode, make_workload
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.cli import main
from servebound.core.advice import Note, Setting, flag, parameter
from servebound.errors import InputError
from servebound.inputs.workload import BY_NAME
from servebound.views.notes import decode_notes
from servebound.web.app.server import create_app
from servebound.web.pages.words import linked_md, page_note, setting_words

#: (hardware, model, query): pairs where a gate fails, each remedy kind among them.
NO_FIT = [
    ("nvidia-rtx-4090", "gemma-3-27b-it-q4_k_m", {}),  # no session: reservation, overhead, KV format
    ("nvidia-h100-sxm", "llama-3.3-70b-instruct-fp8", {}),  # no session: the reservation lowers the read too
    ("nvidia-rtx-4090", "gpt-oss-120b", {}),  # the weights do not fit: experts to host RAM
    ("nvidia-rtx-4090", "gemma-3-27b-it-q4_k_m", {"alloc_context": "8000", "floor": "59"}),  # no floor
]
#: The verdicts past the gate that failed.
PASSED = {
    "no_resident_fit": ("no_floor", "floor_fit"),
    "no_session_fit": ("no_floor", "floor_fit"),
    "no_floor": ("floor_fit",),
}
#: An input spelt as a query parameter (``alloc_context=``) where a person reads a terminal.
PARAMETER = re.compile(rf"\b({'|'.join(BY_NAME)})=")


@pytest.fixture(scope="module")
def client() -> TestClient:
    hardware = [get_hardware(h) for h in {h for h, _, _ in NO_FIT}]
    models = [get_model(m) for m in {m for _, m, _ in NO_FIT}]
    return TestClient(create_app(hardware=hardware, models=models, base_url="http://testserver"))


def flags_of(query: dict[str, str]) -> list[str]:
    return [part for k, v in query.items() for part in (f"--{k.replace('_', '-')}", v)]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def notes_of(hw: str, model: str, query: dict[str, str]) -> list[Note]:
    return decode_notes(decode(hw, model, **_values(query)))


def test_each_remedy_kind_is_a_record_on_the_failing_pairs() -> None:
    kinds = {
        (s.input, tuple(o.input for o in s.also))
        for hw, model, query in NO_FIT
        for note in notes_of(hw, model, query)
        for s in note.settings
    }
    assert kinds == {
        ("alloc_context", ()),
        ("alloc_context", ("read_context",)),
        ("overhead_gb", ()),
        ("kv_precision", ()),
        ("cpu_moe", ("host",)),
        ("read_context", ()),
        ("floor", ()),
    }


@pytest.mark.parametrize(("hw", "model", "query"), NO_FIT)
def test_a_remedy_does_what_its_note_says(hw: str, model: str, query: dict[str, str]) -> None:
    """Each setting with a value, applied, passes the gate that failed (values are rounded toward it)."""
    before = decode(hw, model, **_values(query))
    for note in decode_notes(before):
        for setting in note.settings:
            changed = {s.input: s.value for s in setting.each()}
            if None in changed.values() or setting.input == "cpu_moe":  # a host left to the reader
                continue
            kv = changed.pop("kv_precision", None)
            after = decode(hw, model, kv_precision=kv, **{**_values(query), **_keywords(changed)})
            passed = {"no_session_fit": after.fits, "no_floor": after.verdict.value == "floor_fit"}
            assert passed[before.verdict.value], (setting, after.verdict)


def _values(query: dict[str, str]) -> dict[str, object]:
    return _keywords({k: BY_NAME[k].parse(v) for k, v in query.items()})


def _keywords(values: dict[str, object]) -> dict[str, object]:
    return {BY_NAME[k].python: v for k, v in values.items()}


@pytest.mark.parametrize(("hw", "model", "query"), NO_FIT)
def test_the_same_record_is_a_flag_a_parameter_and_a_link(
    client: TestClient, capsys: pytest.CaptureFixture[str], hw: str, model: str, query: dict[str, str]
) -> None:
    notes = notes_of(hw, model, query)
    settings = [s for n in notes for s in n.settings]
    assert settings
    terminal = cli(capsys, "decode", "-H", hw, "-m", model, *flags_of(query))
    answer = client.get("/api/decode", params={"hardware": hw, "model": model, **query}).json()
    page = unescape(client.get(f"/pair/{hw}/{model}", params=query).text)
    for setting in settings:
        assert flag(setting) in terminal and flag(setting).startswith("--")
        assert any(parameter(setting) in note for note in answer["notes"])
        assert setting_words(setting) in page
    assert answer["note_settings"] == [
        {**s.json(), "effect": n.effect or None, "note": i} for i, n in enumerate(notes) for s in n.settings
    ]
    # the mirror: one note a line, its settings linked to the linked page's mirror
    lines = client.get(f"/pair/{hw}/{model}.md", params=query).text.splitlines()
    for note in notes:
        assert f"- {linked_md(page_note(note, hw, model, query))}" in lines
    # the page's links go to the same pair with the form's fields set to the setting's values
    for note in notes:
        for said, part in zip(page_note(note, hw, model, query), note.parts, strict=True):
            if isinstance(part, Setting) and said.href is not None:
                assert f'href="{said.href}"' in page.replace("&amp;", "&")
                asked = {k: v[0] for k, v in parse_qs(urlsplit(said.href).query).items()}
                assert asked == {**query, **dict(kv.split("=") for kv in parameter(part).split("&"))}
                assert urlsplit(said.href).path == f"/pair/{hw}/{model}"
                if note.effect:  # followed, the link's page passes the gate that failed
                    verdict = re.search(r'class="verdict v (\w+)"', client.get(said.href).text)
                    assert verdict is not None and verdict.group(1) in PASSED[answer["verdict"]], said.href


#: The failing pairs, and one that fits with experts in host RAM (whose note says where they sit).
SPOKEN = [*NO_FIT, ("nvidia-rtx-4090", "gpt-oss-120b", {"n_cpu_moe": "20", "host": "desktop-ddr5-6000-2ch"})]


@pytest.mark.parametrize(("hw", "model", "query"), SPOKEN)
def test_no_flag_in_the_api_and_no_parameter_on_the_terminal(
    client: TestClient, capsys: pytest.CaptureFixture[str], hw: str, model: str, query: dict[str, str]
) -> None:
    """The output, not the code: a JSON note never says ``--``, a terminal never says ``name=``."""
    for path in ("/api/decode", "/api/cost"):
        answer = client.get(path, params={"hardware": hw, "model": model, **query})
        assert answer.status_code == 200, answer.text
        for note in answer.json()["notes"]:
            assert "--" not in note, note
    flags = flags_of(query)
    for command in ("decode", "cost"):
        said = cli(capsys, command, "-H", hw, "-m", model, *flags)
        assert not PARAMETER.search(said), PARAMETER.search(said)
    as_json = json.loads(cli(capsys, "decode", "-H", hw, "-m", model, "--json", *flags))
    assert (
        as_json["notes"]
        == client.get("/api/decode", params={"hardware": hw, "model": model, **query}).json()["notes"]
    )


def test_an_error_names_the_flag_on_the_terminal_and_the_parameter_elsewhere(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    query = {"cpu_moe": "true"}
    with pytest.raises(InputError) as caught:
        make_workload(cpu_moe=True)
    assert caught.value.problem == "offload needs the host's RAM: give --host-memory-gb G or --host HOST"
    assert caught.value.note.api == "offload needs the host's RAM: give host_memory_gb=G or host=HOST"
    capsys.readouterr()
    assert main(["decode", "-H", "nvidia-rtx-4090", "-m", "gpt-oss-120b", "--cpu-moe"]) == 2
    err = capsys.readouterr().err
    assert "--host-memory-gb G or --host HOST" in err and not PARAMETER.search(err)
    api = client.get("/api/decode", params={"hardware": "nvidia-rtx-4090", "model": "gpt-oss-120b", **query})
    page = client.get("/pair/nvidia-rtx-4090/gpt-oss-120b", params=query)
    assert api.status_code == page.status_code == 400
    assert "--" not in api.json()["error"]["message"] and "--host" not in page.text


def test_each_surface_spells_a_setting_its_own_way() -> None:
    reserve = Setting("alloc_context", 94978)
    lower = Setting("alloc_context", 5000, also=(Setting("read_context", 5000),))
    host = Setting("host_memory_gb", placeholder="G")
    assert [flag(s) for s in (reserve, lower, host)] == [
        "--alloc-context 94,978",
        "--alloc-context 5,000 --read-context 5,000",
        "--host-memory-gb G",
    ]
    assert [parameter(s) for s in (reserve, lower, host)] == [
        "alloc_context=94978",
        "alloc_context=5000&read_context=5000",
        "host_memory_gb=G",
    ]
    assert (
        setting_words(lower)
        == "set the reserved context to 5,000 tokens and the read context to 5,000 tokens"
    )
    note = Note.of("Fits at up to 94,978 reserved tokens (", reserve, ").", effect="one session fits")
    parts = page_note(note, "nvidia-rtx-4090", "m", {"floor": "10"})
    assert [p.text for p in parts] == [
        "Fits at up to 94,978 reserved tokens (",
        "set the reserved context to 94,978 tokens",
        ").",
    ]
    assert parts[1].href == "/pair/nvidia-rtx-4090/m?floor=10&alloc_context=94978"
    assert page_note(Note.of("give ", host), "h", "m", {})[1].href is None  # no value: words, no link


#: Bad queries whose errors name other inputs: (path, query, the parameter the message names).
BAD = [
    ("/api/decode", {"read_context": "200000"}, "alloc_context=200000"),
    ("/api/decode", {"engine": "vllm", "kv_allocation": "reserved"}, "engine=vllm"),
    ("/api/decode", {"gpu_layers": "4", "cpu_moe": "true"}, "n_cpu_moe"),
    ("/api/decode", {"host": "desktop-ddr5-6000-2ch"}, "cpu_moe=true, n_cpu_moe=N or gpu_layers=N"),
    ("/api/prefill", {}, "prompt=L (or range=true"),
]


@pytest.mark.parametrize(("path", "query", "named"), BAD)
def test_an_api_error_names_parameters_never_flags(
    client: TestClient, capsys: pytest.CaptureFixture[str], path: str, query: dict[str, str], named: str
) -> None:
    pair = {"hardware": "nvidia-rtx-4090", "model": "gemma-3-27b-it-q4_k_m"}
    answer = client.get(path, params={**pair, **query})
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert named in message and "--" not in message
    capsys.readouterr()  # the same question on the command line: flags, and no parameter spelling
    command = path.removeprefix("/api/")
    flags = [
        f
        for k, v in query.items()
        for f in ((f"--{k.replace('_', '-')}",) if v == "true" else (f"--{k.replace('_', '-')}", v))
    ]
    assert main([command, "-H", pair["hardware"], "-m", pair["model"], *flags]) == 2
    err = capsys.readouterr().err
    assert "--" in err and not PARAMETER.search(err), err
