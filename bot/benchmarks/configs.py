"""Master configs (``configs/{amd,nvidia}-master.yaml``): loading and located validation.

The files are parsed once (round-trip YAML keeps line numbers); each entry is validated when it
is first used, so one malformed key names its own file:line without hiding every other key.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.errors import InputError, Location
from bot.memo import BoundedMemo
from bot.rules.loader import FieldError
from bot.sources import FileSource, read_text
from bot.yamlio.positions import MarkedMap, MarkedSeq, line_of, parse_untrusted, to_plain

MASTER_FILES = ("amd-master.yaml", "nvidia-master.yaml")
CONFIG_DIRS = ("configs", ".github/configs")  # current layout first, then the older one


class _Lenient(BaseModel):
    # Unknown keys are allowed: the benchmark repository grows fields faster than we do.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class KvBackend(_Lenient):
    name: str = Field(min_length=1)
    version: str | None = None


class SearchEntry(_Lenient):
    tp: int | None = Field(default=None, ge=1)
    pp: int = Field(default=1, ge=1)
    ep: int | None = Field(default=None, ge=1)
    dp_attn: bool | None = Field(default=None, alias="dp-attn")
    dcp_size: int = Field(default=1, ge=1, alias="dcp-size")
    pcp_size: int = Field(default=1, ge=1, alias="pcp-size")
    spec_decoding: str = Field(default="none", alias="spec-decoding")
    conc_start: int | None = Field(default=None, ge=1, alias="conc-start")
    conc_end: int | None = Field(default=None, ge=1, alias="conc-end")
    conc_list: list[int] | None = Field(default=None, alias="conc-list")
    kv_offloading: str | None = Field(default=None, alias="kv-offloading")
    kv_offload_backend: KvBackend | None = Field(default=None, alias="kv-offload-backend")
    prefill: dict[str, Any] | None = None
    decode: dict[str, Any] | None = None

    @field_validator("kv_offload_backend", mode="before")
    @classmethod
    def _backend_name_only(cls, value: Any) -> Any:
        # Until InferenceX #2096 (2026-07-13) the backend was a bare name (`kv-offload-backend:
        # lmcache`); the mapping with name/version replaced it
        return {"name": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _concurrency(self) -> SearchEntry:
        if self.conc_list is not None:
            if not self.conc_list:
                raise FieldError(("conc-list",), "conc-list must not be empty")
            if any(c < 1 for c in self.conc_list):
                raise FieldError(("conc-list",), "concurrencies must be positive")
        elif self.conc_start is None or self.conc_end is None:
            raise FieldError(("conc-start",), "give conc-list, or conc-start and conc-end")
        elif self.conc_start > self.conc_end:
            raise FieldError(("conc-end",), "conc-end is smaller than conc-start")
        if self.kv_offloading not in (None, "none", "dram"):
            raise FieldError(("kv-offloading",), "kv-offloading must be 'none' or 'dram'")
        if self.kv_offloading == "dram" and self.kv_offload_backend is None:
            raise FieldError(
                ("kv-offload-backend",), "kv-offload-backend is required when kv-offloading is dram"
            )
        return self

    def concurrencies(self) -> list[int]:
        """conc-list as given, else conc-start·2ⁿ up to conc-end (last step clamped)."""
        if self.conc_list is not None:
            return list(self.conc_list)
        assert self.conc_start is not None and self.conc_end is not None
        values: list[int] = []
        conc = self.conc_start
        while conc <= self.conc_end:
            values.append(conc)
            if conc == self.conc_end:
                break
            conc = min(conc * 2, self.conc_end)
        return values


class FixedSeqLen(_Lenient):
    isl: int = Field(ge=1)
    osl: int = Field(ge=1)
    search_space: list[SearchEntry] = Field(alias="search-space", min_length=1)


class AgenticCoding(_Lenient):
    dram_utilization: float | None = Field(default=None, gt=0, le=1, alias="dram-utilization")
    search_space: list[SearchEntry] = Field(alias="search-space", min_length=1)


class Scenarios(_Lenient):
    fixed_seq_len: list[FixedSeqLen] = Field(default_factory=list, alias="fixed-seq-len")
    agentic_coding: list[AgenticCoding] = Field(default_factory=list, alias="agentic-coding")


class MasterEntry(_Lenient):
    image: str = Field(min_length=1)
    model: str = Field(min_length=1)
    model_prefix: str = Field(min_length=1, pattern=r"^[^_\s]+$", alias="model-prefix")
    runner: str = Field(min_length=1)
    precision: str = Field(min_length=1)
    framework: str = Field(min_length=1)
    multinode: bool = False
    disagg: bool = False
    router: dict[str, Any] | None = None
    kv_p2p_transfer: str | None = Field(default=None, alias="kv-p2p-transfer")
    scenarios: Scenarios

    @model_validator(mode="before")
    @classmethod
    def _older_layout(cls, data: Any) -> Any:
        # Older master configs listed fixed-seq-len entries under `seq-len-configs`.
        if isinstance(data, dict) and "scenarios" not in data and "seq-len-configs" in data:
            data = dict(data)
            data["scenarios"] = {"fixed-seq-len": data.pop("seq-len-configs")}
        return data

    @model_validator(mode="after")
    def _single_node_has_tp(self) -> MasterEntry:
        if self.multinode:
            return self
        groups = [("fixed-seq-len", s.search_space) for s in self.scenarios.fixed_seq_len]
        groups += [("agentic-coding", s.search_space) for s in self.scenarios.agentic_coding]
        counters: dict[str, int] = {}
        for scenario, entries in groups:
            index = counters.get(scenario, 0)
            counters[scenario] = index + 1
            for position, entry in enumerate(entries):
                if entry.tp is None:
                    raise FieldError(
                        ("scenarios", scenario, index, "search-space", position, "tp"),
                        "single-node search-space entries need tp",
                    )
        if not groups:
            raise FieldError(("scenarios",), "no fixed-seq-len or agentic-coding scenario")
        return self


@dataclass(frozen=True)
class ConfigNode:
    """A master-config key where it was found (for located errors)."""

    key: str
    file: str
    document: MarkedMap  # holds ``key`` (the whole file, or the key's own chunk)
    line: int | None
    offset: int = 0  # lines of the file before ``document``'s text

    def line_at(self, path: list[str | int]) -> int | None:
        """1-based line in ``file`` of the node at ``path`` (from the key), if known."""
        found = line_of(self.document, path)
        return found + self.offset if found is not None else None


PARSE_CACHE_SIZE = 8  # consecutive commits share most files: base of one PR = head of the last
_PARSED: BoundedMemo[tuple[str, str], Any] = BoundedMemo(PARSE_CACHE_SIZE)


def parse_yaml(text: str, display: str) -> Any:
    """The round-trip document of ``text``, from a small cache keyed by the text's hash (the
    documents are only read, never mutated; a backtest parses the same blobs over and over)."""
    key = (hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest(), display)
    return _PARSED.get_or_make(key, lambda: _parse_yaml(text, display))


_TOP_KEY = re.compile(r"^[^\s#\-][^\n]*:", re.MULTILINE)
_TOP_ITEM = re.compile(r"^- ", re.MULTILINE)
CHUNK_CACHE_SIZE = 8192  # top-level chunks kept: both master configs and the changelog


_CHUNKS: BoundedMemo[str, Any] = BoundedMemo(CHUNK_CACHE_SIZE)


def parse_chunks(text: str, display: str, *, sequence: bool) -> list[tuple[int, Any]] | None:
    """The file as its top-level chunks (a mapping's keys at column 0, or a sequence's
    ``- `` items), each parsed on its own: ``[(lines before it, document)]``.

    A master config or the changelog changes in a key or two per commit; parsing the chunks
    separately, cached by their text, re-parses only what changed. The round-trip documents
    and their line numbers are the ones a whole-file parse gives (``offset`` added). None
    when the file is not a plain list of chunks (directives, text before the first chunk, a
    chunk that does not parse alone, e.g. an alias of another chunk's anchor, or a repeated
    key): the caller parses the whole file."""
    if PARSE_CACHE_SIZE == 0 or text.startswith(("%", "---")) or "\n---" in text:
        return None
    starts = [m.start() for m in (_TOP_ITEM if sequence else _TOP_KEY).finditer(text)]
    if not starts or (text[: starts[0]].strip("\n") and not _only_comments(text[: starts[0]])):
        return None
    out: list[tuple[int, Any]] = []
    offset = text.count("\n", 0, starts[0])
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        chunk = text[start:end]
        document = _chunk(chunk, display)
        size = len(document) if isinstance(document, MarkedMap | MarkedSeq) else 0
        if size != 1:
            return None
        out.append((offset, document))
        offset += chunk.count("\n")
    return out


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _chunk(text: str, display: str) -> Any:
    key = hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()
    return _CHUNKS.get_or_make(key, lambda: _parse_chunk(text, display))


def _parse_chunk(text: str, display: str) -> Any:
    try:
        return parse_untrusted(text, display)  # alias-bounded, like the whole file
    except InputError:
        return None  # the whole-file parse names the error


def _parse_yaml(text: str, display: str) -> Any:
    return parse_untrusted(text, display)  # alias-bounded: a PR's config is untrusted


def find_master_files(source: FileSource) -> list[str]:
    for directory in CONFIG_DIRS:
        found = [
            f"{directory}/{name}" for name in MASTER_FILES if source.exists(f"{directory}/{name}")
        ]
        if found:
            return found
    return []


def master_files(source: FileSource) -> list[str]:
    """:func:`find_master_files`, or an error: without them this is no benchmark repository."""
    files = find_master_files(source)
    if not files:
        raise InputError(
            Location(source.label),
            "no master configs found (configs/amd-master.yaml or configs/nvidia-master.yaml)",
        )
    return files


def load_master_configs(source: FileSource) -> dict[str, ConfigNode]:
    """Every key of both master configs (a key defined twice is an error)."""
    files = master_files(source)
    nodes: dict[str, ConfigNode] = {}
    for path in files:
        text = read_text(source, path)
        chunks = parse_chunks(text, path, sequence=False)
        keys = [str(next(iter(d))) for _, d in chunks or ()]
        if chunks is not None and len(set(keys)) == len(keys):
            for offset, chunk in chunks:
                name = str(next(iter(chunk)))
                node = ConfigNode(name, path, chunk, None, offset)
                node = replace(node, line=node.line_at([name]))
                if name in nodes:
                    raise InputError(
                        Location(path, name, node.line),
                        f"config key also defined in {nodes[name].file}",
                    )
                nodes[name] = node
            continue
        document = parse_yaml(text, path)
        if document is None:
            continue
        if not isinstance(document, MarkedMap):
            raise InputError(Location(path, line=1), "a master config must be a mapping of keys")
        for key in document:
            name = str(key)
            if name in nodes:
                raise InputError(
                    Location(path, name, line_of(document, [key])),
                    f"config key also defined in {nodes[name].file}",
                )
            nodes[name] = ConfigNode(name, path, document, line_of(document, [key]))
    return nodes


_VALID: BoundedMemo[tuple[int, str], tuple[Any, MasterEntry]] = BoundedMemo(CHUNK_CACHE_SIZE)


def validate_entry(node: ConfigNode) -> MasterEntry:
    """The validated entry, or an InputError naming file:line, the key path and the reason.

    A valid entry is kept by its parsed document (chunks are shared by every commit whose
    text of the key is the same, see :func:`parse_chunks`): a PR's base and head, and the
    next PR's, validate a key's entry once. An invalid one is validated each time (its
    error names the line, which moves with the text above it)."""
    memo = (id(node.document), node.key)
    found = _VALID.get(memo)
    if found is not None and found[0] is node.document:
        return found[1]
    entry = _validate_entry(node)
    _VALID.put(memo, (node.document, entry))  # the document kept: its id is not reused
    return entry


def _validate_entry(node: ConfigNode) -> MasterEntry:
    raw = node.document[node.key]
    try:
        return MasterEntry.model_validate(to_plain(raw))
    except ValidationError as err:
        first = err.errors()[0]
        loc: list[str | int] = [p for p in first["loc"] if isinstance(p, str | int)]
        reason = first["msg"]
        inner = (first.get("ctx") or {}).get("error")
        if isinstance(inner, FieldError):  # relative to the model that raised it
            loc, reason = [*loc, *inner.loc], inner.message
        if first["type"] == "missing":
            reason = "required key is missing"
        path: list[str | int] = [node.key, *loc]
        line = node.line_at(path) or node.line
        key = ".".join(str(p) for p in path)
        raise InputError(Location(node.file, key, line), reason) from err
