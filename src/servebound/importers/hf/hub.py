"""The Hugging Face Hub as a model source, through huggingface_hub's own endpoint, proxy, token, offline
and error handling: config.json of ``org/name`` (at a revision), and ``org/name:QUANT`` (llama.cpp's
``-hf`` form) resolved to the GGUF file of that quantization in the repo, of which only the header is
read, by HTTP range requests.

A range-read header is written into a sparse local file of the remote file's full size (its data
section a hole that is never read), so the one GGUF reader (``importers.gguf_reader``) checks it exactly
as it checks a local file. Ranges grow from :data:`FIRST_RANGE_BYTES` until the header parses inside
the bytes fetched, up to :data:`MAX_HEADER_BYTES`.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from servebound.errors import InputError
from servebound.importers.gguf_file import import_gguf
from servebound.importers.gguf_reader import read_gguf_header

if TYPE_CHECKING:
    from servebound.importers.audit import ImportedModel


FIRST_RANGE_BYTES = 1 << 20
#: No GGUF header (tokenizer included) comes near this; a bigger one is refused.
MAX_HEADER_BYTES = 1 << 28
#: Seconds to wait for the Hub (or the proxy in front of it) before calling it unreachable.
HUB_CONNECT_TIMEOUT_S = 3.0
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")


def no_hub_hint(file: str = "the file") -> str:
    """What to do without the Hub."""
    return (
        f"without network access, download {file} elsewhere and pass its path (or a folder holding it); "
        "`servebound models list` shows the models whose config.json ships with servebound"
    )


def offline() -> bool:
    """HF_HUB_OFFLINE, as huggingface_hub reads it."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _endpoint_host() -> tuple[str, int]:
    """The host and port a request to the Hub opens first: the proxy huggingface_hub's HTTP client
    takes from the environment for the endpoint (HTTPS_PROXY, ALL_PROXY; NO_PROXY honoured), else the
    endpoint itself."""
    import urllib.request  # the network stack (ssl, http.client): only where the Hub is reached

    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass(url.hostname or ""):
        url = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return url.hostname or "", url.port or (443 if url.scheme == "https" else 80)


def hub_reachable() -> bool:
    """One bounded TCP connection to the endpoint (or its proxy): huggingface_hub alone retries a refused
    connection for some 24 s, logging each retry, before its own error."""
    host, port = _endpoint_host()
    try:
        with socket.create_connection((host, port), timeout=HUB_CONNECT_TIMEOUT_S):
            return True
    except (OSError, UnicodeError):
        return False


def hub_error(
    exc: BaseException, what: str, *, local_only: bool = False, file: str = "the file"
) -> InputError:
    """A huggingface_hub error as one line naming what failed and the fix."""
    from huggingface_hub import errors

    no_hub = no_hub_hint(file)

    name = type(exc).__name__
    if isinstance(exc, errors.RevisionNotFoundError):
        return InputError("revision", f"{what}: the Hub has no such revision; give a branch, tag or commit")
    if isinstance(exc, errors.GatedRepoError):
        return InputError(
            "source", f"{what}: a gated repository; accept its terms and log in (`hf auth login`)"
        )
    if isinstance(exc, errors.RepositoryNotFoundError):
        return InputError("source", f"{what}: no such repository on the Hub (or it is private: log in)")
    if isinstance(exc, errors.LocalEntryNotFoundError):
        if local_only:
            where = "HF_HUB_OFFLINE is set and" if offline() else "offline, and"
            return InputError("source", f"{what}: {where} the file is not in the local cache; {no_hub}")
        return InputError("source", f"{what}: the Hub could not be reached; {no_hub}")
    if isinstance(exc, errors.EntryNotFoundError | errors.RemoteEntryNotFoundError):
        return InputError("source", f"{what}: the repository has no such file")
    if isinstance(exc, errors.HFValidationError):
        return InputError("source", f"{what}: not a valid repository id ({exc})")
    return InputError("source", f"{what}: the Hub answered with an error ({name}); {no_hub}")


def fetch_config(repo_id: str, *, revision: str | None = None, local_only: bool = False) -> Path:
    """config.json of a Hub repository (at ``revision``), quietly, from the local cache when offline."""
    local_only = local_only or offline()
    what = f"config.json of {repo_id!r}" + (f" at {revision}" if revision else "")
    if not local_only and not hub_reachable():
        raise InputError(
            "source", f"cannot reach the Hugging Face Hub to fetch {what}; {no_hub_hint('config.json')}"
        )
    hub_log = logging.getLogger("huggingface_hub")
    level = hub_log.level
    hub_log.setLevel(logging.ERROR)  # no retry chatter before our one-line error
    try:
        from huggingface_hub import hf_hub_download

        return Path(
            hf_hub_download(
                repo_id=repo_id, filename="config.json", revision=revision, local_files_only=local_only
            )
        )
    except (OSError, ValueError) as exc:
        raise hub_error(exc, what, local_only=local_only, file="config.json") from None
    finally:
        hub_log.setLevel(level)


def _part(name: str) -> int | None:
    match = _SPLIT.search(name)
    return None if match is None else int(match.group(1))


def _gguf_files(repo_id: str, quant: str, revision: str | None) -> list[str]:
    """The GGUF files of ``quant`` in the repo: one file, or every part of a split one (first first)."""
    from huggingface_hub import HfApi

    try:
        names = HfApi().list_repo_files(repo_id, revision=revision)
    except (OSError, ValueError) as exc:
        raise hub_error(exc, f"{repo_id}:{quant}") from None
    tag = quant.casefold()
    if tag.endswith(".gguf"):
        exact = [n for n in names if n.casefold() == tag or Path(n).name.casefold() == tag]
        return _parts(exact[0], names) if exact else _none_for(repo_id, quant, names)
    wanted = [
        n
        for n in names
        if n.lower().endswith(".gguf")
        and "mmproj" not in n.lower()
        and tag in re.split(r"[-./]", n[:-5].casefold())
    ]
    if not wanted:
        return _none_for(repo_id, quant, names)
    firsts = sorted(n for n in wanted if _part(n) in (None, 1))
    if len({Path(n).stem for n in firsts}) > 1:
        raise InputError(
            "source",
            f"{repo_id}:{quant} names several GGUF files ({', '.join(firsts)}); give the full file name",
        )
    return _parts(firsts[0], names)


def _none_for(repo_id: str, quant: str, names: list[str]) -> list[str]:
    ggufs = sorted(Path(n).name for n in names if n.lower().endswith(".gguf"))
    listed = ", ".join(ggufs[:8]) + (" ..." if len(ggufs) > 8 else "") if ggufs else "none"
    raise InputError("source", f"{repo_id} has no GGUF file for {quant!r} (its GGUF files: {listed})")


def _parts(first: str, names: list[str]) -> list[str]:
    """A GGUF file, or every part of the split file it starts (each must be in the repo)."""
    match = _SPLIT.search(first)
    if match is None:
        return [first]
    stem = first[: match.start()]
    parts = [f"{stem}-{i:05d}-of-{match.group(2)}.gguf" for i in range(1, int(match.group(2)) + 1)]
    missing = [p for p in parts if p not in names]
    if missing:
        raise InputError("source", f"{first} is split, but the repository lacks {', '.join(missing)}")
    return parts


def _ranged(session: Any, url: str, headers: dict[str, str], end: int) -> tuple[bytes, int]:
    """Bytes 0..end of a remote file and its total size (from Content-Range)."""
    response = session.get(url, headers={**headers, "Range": f"bytes=0-{end - 1}"}, follow_redirects=True)
    if response.status_code != 206:
        raise InputError(
            "source", f"{url}: the server answered {response.status_code} to a range request (206 expected)"
        )
    total = response.headers.get("Content-Range", "").rpartition("/")[2]
    if not total.isdigit():
        raise InputError("source", f"{url}: no file size in the range answer (Content-Range)")
    return response.content, int(total)


def _header_copy(session: Any, url: str, headers: dict[str, str], target: Path) -> None:
    """A sparse local copy of a remote GGUF: its header bytes, its size, nothing else."""
    want = FIRST_RANGE_BYTES
    while True:
        data, total = _ranged(session, url, headers, want)
        with target.open("wb") as handle:
            handle.write(data)
            handle.truncate(total)
        if len(data) >= total:
            return
        try:
            header = read_gguf_header(target)
        except InputError:
            header = None  # possibly read into the hole: fetch more before judging
        if header is not None and header.data_offset <= len(data):
            return
        if want >= MAX_HEADER_BYTES:
            read_gguf_header(target)  # the reader's own error, if it has one
            raise InputError("source", f"{url}: the GGUF header is larger than {MAX_HEADER_BYTES} bytes")
        want = min(max(want * 4, header.data_offset + 1 if header else 0), MAX_HEADER_BYTES)


def fetch_gguf_header(repo_id: str, quant: str, *, revision: str | None = None) -> Path:
    """A local sparse copy (header bytes only) of the repo's GGUF for ``quant``, split parts included;
    the path of its first file. InputError when offline, unreachable or the file is not there."""
    from huggingface_hub import get_session, hf_hub_url
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # re-exported lazily

    what = f"{repo_id}:{quant}"
    if offline():
        raise InputError(
            "source",
            f"{what}: HF_HUB_OFFLINE is set, and a GGUF header is read from the Hub; {no_hub_hint()}",
        )
    if not hub_reachable():
        raise InputError("source", f"cannot reach the Hugging Face Hub for {what}; {no_hub_hint()}")
    files = _gguf_files(repo_id, quant, revision)
    folder = Path(tempfile.mkdtemp(prefix="servebound-gguf-"))
    session, headers = get_session(), build_hf_headers()
    for name in files:
        try:
            _header_copy(
                session, hf_hub_url(repo_id, name, revision=revision), headers, folder / Path(name).name
            )
        except OSError as exc:
            raise hub_error(exc, f"{what} ({name})") from None
    return folder / Path(files[0]).name


def import_hub_gguf(
    repo_id: str, quant: str, *, revision: str | None = None, kv_precision: str = "fp16"
) -> ImportedModel:
    """``org/name:QUANT`` imported from its header alone (:func:`fetch_gguf_header`); the source names
    the repository file, and the sparse local copy is removed afterwards."""
    first = fetch_gguf_header(repo_id, quant, revision=revision)
    try:
        imported = import_gguf(first, kv_precision=kv_precision)
    finally:
        shutil.rmtree(first.parent, ignore_errors=True)
    where = f"{repo_id}/{first.name}" + (f"@{revision}" if revision else "")
    return dataclasses.replace(imported, source=f"Hugging Face Hub {where} (header read by range requests)")
