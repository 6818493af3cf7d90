"""GitHub's side of the REST contract, from GitHub's own description, for the fake.

The npm package ``@octokit/openapi`` carries GitHub's OpenAPI description of api.github.com
(``make test`` installs it into the gitignored ``.npm-tools/openapi``, best effort, like the
webhook examples). :class:`Contract` checks a request the fake receives and a response it serves
against it: the operation exists, path and query parameters have their types and enums,
``per_page`` is at most 100, a JSON body has every required field with its type, enum and
length; a 2xx response body matches its schema. On top of the description, the limits
GitHub documents elsewhere (:data:`DOCUMENTED_LIMITS`): a title of 256 characters, a body or
comment of 65,536, an annotation message of 64 KB (bytes) and 50 annotations per request.

Without the package only the documented limits are checked (the OpenAPI test skips, saying
why). Schemas are OpenAPI 3.0: ``nullable``, ``allOf``/``anyOf``/``oneOf`` (read as "any
one matches": GitHub's alternatives overlap), ``$ref`` into ``components``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OPENAPI_VERSION = "23.0.2"  # the Makefile's GITHUB_OPENAPI_VERSION
OPENAPI_PACKAGE = ROOT / ".npm-tools" / "openapi" / "node_modules" / "@octokit" / "openapi"
DESCRIPTION = OPENAPI_PACKAGE / "generated" / "api.github.com.json"
MAX_PER_PAGE = 100  # "The number of results per page (max 100)"

Schema = Mapping[str, Any]


def missing_reason() -> str | None:
    """Why GitHub's description cannot be used here, or None."""
    if not DESCRIPTION.is_file():
        return (
            f"{DESCRIPTION.relative_to(ROOT)} is not installed: `make test` installs "
            f"@octokit/openapi {OPENAPI_VERSION} with npm (npm missing or offline?)"
        )
    return None


# --- documented limits the description does not carry ------------------------------------


def _chars(field: str, limit: int) -> Callable[[Any], list[str]]:
    def check(body: Any) -> list[str]:
        value = body.get(field) if isinstance(body, dict) else None
        if isinstance(value, str) and len(value) > limit:
            what = field.capitalize()
            return [f"{what} is too long (maximum is {limit} characters, got {len(value)})"]
        return []

    return check


def _annotations(body: Any) -> list[str]:
    output = body.get("output") if isinstance(body, dict) else None
    annotations = output.get("annotations") if isinstance(output, dict) else None
    if not isinstance(annotations, list):
        return []
    problems = []
    if len(annotations) > 50:
        problems.append(f"at most 50 annotations per request, got {len(annotations)}")
    for index, annotation in enumerate(annotations):
        message = annotation.get("message") if isinstance(annotation, dict) else None
        if isinstance(message, str) and len(message.encode("utf-8")) > 64 * 1024:
            size = len(message.encode("utf-8"))
            problems.append(f"annotations[{index}].message is over 64 KB ({size} bytes)")
    return problems


TITLE = _chars("title", 256)
BODY = _chars("body", 65536)
R = "/repos/{owner}/{repo}"
DOCUMENTED_LIMITS: Mapping[tuple[str, str], tuple[Callable[[Any], list[str]], ...]] = {
    ("POST", R + "/pulls"): (TITLE, BODY),
    ("PATCH", R + "/pulls/{pull_number}"): (TITLE, BODY),
    ("POST", R + "/issues"): (TITLE, BODY),
    ("PATCH", R + "/issues/{issue_number}"): (TITLE, BODY),
    ("POST", R + "/issues/{issue_number}/comments"): (BODY,),
    ("PATCH", R + "/issues/comments/{comment_id}"): (BODY,),
    ("POST", R + "/check-runs"): (_annotations,),
    ("PATCH", R + "/check-runs/{check_run_id}"): (_annotations,),
}
_LIMITED = [
    (method, re.compile(re.sub(r"\{\w+\}", "[^/]+", template) + "$"), template)
    for method, template in DOCUMENTED_LIMITS
]


# --- the description ---------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    spec: Mapping[str, Any]


class Contract:
    """GitHub's REST description (None: only the documented limits are checked)."""

    def __init__(self, document: Mapping[str, Any] | None) -> None:
        self.document = document
        # by (method, number of segments); templates whose {ref} or {path} may span several
        # segments under (method, -1), tried after the others
        self._routes: dict[tuple[str, int], list[tuple[re.Pattern[str], str]]] = {}
        for template, item in (document or {}).get("paths", {}).items():
            spans = bool(re.search(r"\{(ref|path)\}", template))
            regex = re.compile("^" + re.sub(r"\\\{(\w+)\\\}", _segment, re.escape(template)) + "$")
            for method in item:
                if method in ("get", "post", "patch", "put", "delete"):
                    key = (method.upper(), -1 if spans else template.count("/"))
                    self._routes.setdefault(key, []).append((regex, template))
        for routes in self._routes.values():  # the most literal template first
            routes.sort(key=lambda route: (route[1].count("{"), -len(route[1])))

    @property
    def described(self) -> bool:
        return self.document is not None

    @functools.lru_cache(maxsize=4096)  # noqa: B019 (one contract per process, kept)
    def operation(self, method: str, path: str) -> tuple[Operation, tuple[str, ...]] | None:
        """The operation serving ``method path`` and its path parameter values."""
        candidates = [
            *self._routes.get((method, path.count("/")), ()),
            *self._routes.get((method, -1), ()),
        ]
        for regex, template in candidates:
            found = regex.match(path)
            if found:
                assert self.document is not None
                spec = self.document["paths"][template][method.lower()]
                return Operation(method, template, spec), found.groups()
        return None

    def resolve(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            assert self.document is not None
            target: Any = self.document
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    # --- requests -------------------------------------------------------------------------

    def check_request(
        self, method: str, path: str, query: Mapping[str, str], body: Any
    ) -> list[str]:
        """Why GitHub would refuse this request (422/404), or []."""
        problems: list[str] = []
        for limit_method, regex, template in _LIMITED:
            if limit_method == method and regex.match(path):
                for check in DOCUMENTED_LIMITS[(method, template)]:
                    problems += check(body)
        per_page = query.get("per_page")
        if per_page is not None and (not per_page.isdigit() or int(per_page) > MAX_PER_PAGE):
            problems.append(f"per_page must be at most {MAX_PER_PAGE}, got {per_page!r}")
        if self.document is None:
            return problems
        found = self.operation(method, path)
        if found is None:
            return [*problems, f"{method} {path} is not in GitHub's REST description"]
        operation, values = found
        names = re.findall(r"\{(\w+)\}", operation.template)
        in_path = dict(zip(names, values, strict=True))
        for parameter in map(self.resolve, operation.spec.get("parameters", ())):
            where, name = parameter.get("in"), parameter.get("name")
            raw = in_path.get(name) if where == "path" else query.get(name)
            if raw is None:
                if parameter.get("required") and where == "query":
                    problems.append(f"query parameter {name} is required")
                continue
            if where in ("path", "query"):
                problems += self._parameter(f"{where} parameter {name}", parameter, raw)
        request_body = self.resolve(operation.spec.get("requestBody") or {})
        schema = request_body.get("content", {}).get("application/json", {}).get("schema")
        if body is None:
            if request_body.get("required"):
                problems.append("a JSON body is required")
        elif schema is not None:
            problems += list(self.violations(schema, body, "body"))
        return problems

    def _parameter(self, what: str, parameter: Mapping[str, Any], raw: str) -> list[str]:
        schema = self.resolve(parameter.get("schema") or {})
        kind = schema.get("type")
        value: Any = raw
        if kind == "integer":
            if not re.fullmatch(r"-?\d+", raw):
                return [f"{what} must be an integer, got {raw!r}"]
            value = int(raw)
        elif kind == "boolean":
            if raw not in ("true", "false"):
                return [f"{what} must be true or false, got {raw!r}"]
            value = raw == "true"
        elif kind == "array":
            value = raw.split(",")
        return list(self.violations(schema, value, what))

    # --- responses ------------------------------------------------------------------------

    def check_response(self, method: str, path: str, status: int, body: Any) -> list[str]:
        """Where a 2xx response differs from GitHub's description of it, or []."""
        if self.document is None or not 200 <= status < 300:
            return []
        found = self.operation(method, path)
        if found is None:
            return []  # the request was refused as undescribed already
        responses = found[0].spec.get("responses", {})
        described = self.resolve(responses.get(str(status)) or {})
        if not described and str(status) not in responses:
            return [f"status {status} is not a documented answer to {method} {found[0].template}"]
        schema = described.get("content", {}).get("application/json", {}).get("schema")
        if schema is None or body is None:
            return []
        return list(self.violations(schema, body, "response"))

    # --- schemas --------------------------------------------------------------------------

    def violations(self, schema: Any, value: Any, where: str) -> Iterator[str]:
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return
        if value is None:
            if not schema.get("nullable") and "type" in schema:
                yield f"{where} must not be null"
            return
        for part in schema.get("allOf", ()):
            yield from self.violations(part, value, where)
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if options and not any(
                next(self.violations(option, value, where), None) is None for option in options
            ):
                first = next(self.violations(options[0], value, where), "")
                yield f"{where} matches none of its {len(options)} alternatives ({first})"
        kind = schema.get("type")
        if kind is not None and not _is(kind, value):
            yield f"{where} must be {kind}, got {type(value).__name__}"
            return
        if "enum" in schema and value not in schema["enum"]:
            yield f"{where} must be one of {schema['enum']}, got {value!r}"
        if isinstance(value, str):
            yield from _string(schema, value, where)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if "maximum" in schema and value > schema["maximum"]:
                yield f"{where} must be at most {schema['maximum']}, got {value}"
            if "minimum" in schema and value < schema["minimum"]:
                yield f"{where} must be at least {schema['minimum']}, got {value}"
        elif isinstance(value, list):
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                yield f"{where} has {len(value)} items (at most {schema['maxItems']})"
            items = schema.get("items")
            if items is not None:
                for index, item in enumerate(value):
                    yield from self.violations(items, item, f"{where}[{index}]")
        elif isinstance(value, dict):
            yield from self._object(schema, value, where)

    def _object(self, schema: Schema, value: Mapping[str, Any], where: str) -> Iterator[str]:
        for name in schema.get("required", ()):
            if name not in value:
                yield f"{where}.{name} is required"
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            if name in properties:
                yield from self.violations(properties[name], item, f"{where}.{name}")
            elif extra is False:
                yield f"{where}.{name} is not a known field"
            elif isinstance(extra, dict):
                yield from self.violations(extra, item, f"{where}.{name}")


def _segment(parameter: re.Match[str]) -> str:
    """A path parameter's pattern: ``{ref}`` (``heads/a/b``) and ``{path}`` span segments."""
    return "(.+)" if parameter.group(1) in ("ref", "path") else "([^/]+)"


def _is(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(
        value,
        {"string": str, "boolean": bool, "array": list, "object": dict}.get(kind, object),
    )


def _string(schema: Schema, value: str, where: str) -> Iterator[str]:
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield f"{where} is {len(value)} characters long (at most {schema['maxLength']})"
    if "minLength" in schema and len(value) < schema["minLength"]:
        yield f"{where} is shorter than {schema['minLength']} characters"
    if schema.get("format") == "date-time" and not _timestamp(value):
        yield f"{where} is not an ISO 8601 timestamp: {value!r}"


def _timestamp(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


WHOLE_SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def fractional_timestamps(value: Any, where: str = "response") -> Iterator[str]:
    """Timestamps with fractions of a second: GitHub sends whole seconds (a push and a
    comment in the same second look simultaneous)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from fractional_timestamps(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from fractional_timestamps(item, f"{where}[{index}]")
    elif isinstance(value, str) and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+", value):
        yield f"{where} has fractions of a second ({value}): GitHub sends whole seconds"


_LINK = re.compile(r'^<([^>]+)>; rel="(next|last|first|prev)"$')


def link_problems(link: str | None) -> list[str]:
    """A ``Link`` header as GitHub writes it: ``<url>; rel="next"``, comma-separated, each
    URL keeping ``per_page`` within the maximum."""
    if not link:
        return []
    problems = []
    for part in link.split(", "):
        found = _LINK.match(part.strip())
        if found is None:
            problems.append(f'Link entry {part!r} is not <url>; rel="next|last|first|prev"')
            continue
        per_page = re.search(r"[?&]per_page=(\d+)", found.group(1))
        if per_page and int(per_page.group(1)) > MAX_PER_PAGE:
            problems.append(f"Link {found.group(2)} asks per_page={per_page.group(1)}")
    return problems


@functools.cache
def contract() -> Contract:
    """GitHub's description, read once per process (~0.2 s), or the limits alone."""
    if missing_reason() is not None:
        return Contract(None)
    return Contract(json.loads(DESCRIPTION.read_text(encoding="utf-8")))
