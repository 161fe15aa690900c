"""Reading a survey definition: YAML or JSON text in, plain values and their lines out.

Validation then judges plain values (str, list, dict, numbers, a ``YamlScalar`` for YAML's
other scalars) and never needs to know the format; errors it raises name a field path
(``questions[1].key``), and ``nearest_line`` finds that path's line in what was read here.
Reading refuses on its own only what no survey can be: text that does not parse,
duplicate keys, aliases, nesting too deep to walk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

from survey_app.domain.survey_model import SurveyDefinitionError

_TOO_DEEP = "the definition is nested too deeply to be a survey"
_EMPTY = "the definition is empty (it needs slug, title and questions)"


def read_values(text: str, fmt: str) -> tuple[object, dict[str, int]]:
    """The definition in ``text`` as plain values, and the line where each field path
    starts; ``fmt`` is "json" or "yaml"."""
    if not text.strip():
        raise SurveyDefinitionError(_EMPTY)
    return _read_json(text) if fmt == "json" else _read_yaml(text)


def field_path(path: str, key: str) -> str:
    """The path of ``key`` inside the mapping at ``path``: how reading records a field's
    line and validation names it, so the two always agree."""
    return f"{path}.{key}" if path else key


def nearest_line(field: str, lines: dict[str, int]) -> int | None:
    """The line of ``field``, or else of its closest enclosing field (a missing key is
    reported at the mapping that lacks it). The top level has no line of its own."""
    while field:
        if field in lines:
            return lines[field]
        cut = max(field.rfind("."), field.rfind("["))
        field = field[:cut] if cut > 0 else ""
    return None


@dataclass(frozen=True)
class YamlScalar:
    """A YAML scalar that is not a string, kept unconstructed.

    Constructing it could itself fail (``2024-13-45`` resolves as a date), and validation
    only needs to say what it is, e.g. that ``title: yes`` is a boolean. Numbers and
    booleans are read from ``text`` as written, never through a float.
    """

    kind: str
    text: str
    tag: str = ""

    @property
    def is_integer(self) -> bool:
        """Resolved as an integer, in any of YAML 1.1's notations (hex, 1_000, ...)."""
        return self.tag == _YAML_INT_TAG

    @property
    def is_number(self) -> bool:
        """Resolved as an integer or a float."""
        return self.tag in (_YAML_INT_TAG, _YAML_FLOAT_TAG)

    @property
    def is_boolean(self) -> bool:
        """Resolved as a boolean."""
        return self.tag == _YAML_BOOL_TAG

    @property
    def is_true(self) -> bool:
        """A boolean's value: YAML 1.1, as PyYAML resolves it, spells true as yes and on too."""
        return self.text.lower() in _YAML_TRUE


_YAML_STR_TAG = "tag:yaml.org,2002:str"
_YAML_BOOL_TAG = "tag:yaml.org,2002:bool"
_YAML_INT_TAG = "tag:yaml.org,2002:int"
_YAML_FLOAT_TAG = "tag:yaml.org,2002:float"
_YAML_TRUE = frozenset({"true", "yes", "on"})
_YAML_SCALAR_KINDS = {
    "tag:yaml.org,2002:null": "an empty value",
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:timestamp": "a date",
}


class _DefinitionLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (``*name``).

    A survey definition never needs them, and refusing them keeps a few bytes from
    expanding into a huge or cyclic tree ("billion laughs").
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise SurveyDefinitionError(
                "YAML aliases (*name) are not supported in survey definitions",
                line=self.peek_event().start_mark.line + 1,  # type: ignore[no-untyped-call]
            )
        return super().compose_node(parent, index)


def _read_yaml(text: str) -> tuple[object, dict[str, int]]:
    """Compose rather than load: nodes carry line numbers and show duplicate keys."""
    lines: dict[str, int] = {}
    try:
        root = yaml.compose(text, Loader=_DefinitionLoader)
        if root is None:  # only comments
            raise SurveyDefinitionError(_EMPTY)
        return _plain(root, "", lines), lines
    except yaml.YAMLError as err:
        raise SurveyDefinitionError(
            f"not valid YAML: {_yaml_problem(err)}", line=_yaml_error_line(err, text)
        ) from None
    except RecursionError:
        raise SurveyDefinitionError(_TOO_DEEP) from None


def _read_json(text: str) -> tuple[object, dict[str, int]]:
    """The json module decides the values; PyYAML, which reads nearly all JSON, lends
    line numbers and catches the duplicate keys that json.loads silently collapses."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SurveyDefinitionError(
            f"not valid JSON: {err.msg} (column {err.colno})", line=err.lineno
        ) from None
    except RecursionError:
        raise SurveyDefinitionError(_TOO_DEEP) from None
    except ValueError as err:  # e.g. an integer too long to convert
        raise SurveyDefinitionError(f"not valid JSON: {err}") from None
    lines: dict[str, int] = {}
    try:
        root = yaml.compose(text, Loader=_DefinitionLoader)
        if root is not None:  # valid JSON is never empty, but the type allows it
            _plain(root, "", lines)
    except (yaml.YAMLError, RecursionError):
        # PyYAML cannot read this JSON (tab indentation, for one): no line numbers then,
        # but duplicate keys must still be refused.
        json.loads(text, object_pairs_hook=_refuse_duplicate_json_keys)
        return data, {}
    return data, lines


def _refuse_duplicate_json_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """json.loads hook: a repeated key is an error, not "the last one wins"."""
    mapping: dict[str, object] = {}
    for key, value in pairs:
        if key in mapping:
            raise SurveyDefinitionError("duplicate key", field=key)
        mapping[key] = value
    return mapping


def _yaml_problem(err: yaml.YAMLError) -> str:
    """The parser's own words, plus where the construct it choked on began: an unclosed
    quote is reported at the end of the file, but the author needs the line it opened on."""
    if isinstance(err, yaml.reader.ReaderError):
        return f"unacceptable character U+{err.character:04X}"
    if isinstance(err, yaml.MarkedYAMLError):
        context = ""
        if err.context and err.context_mark:
            context = f" ({err.context}, which began on line {err.context_mark.line + 1})"
        elif err.context:
            context = f" ({err.context})"
        return f"{err.problem or 'cannot parse'}{context}"
    return str(err)


def _yaml_error_line(err: yaml.YAMLError, text: str) -> int | None:
    if isinstance(err, yaml.reader.ReaderError):
        return text.count("\n", 0, err.position) + 1
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        return None if mark is None else mark.line + 1
    return None


def _plain(node: yaml.Node, path: str, lines: dict[str, int]) -> object:
    """Turn a composed node into plain values, noting in ``lines`` where each field starts."""
    if isinstance(node, yaml.MappingNode):
        return _plain_mapping(node, path, lines)
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            item_path = f"{path}[{index}]"
            lines[item_path] = item.start_mark.line + 1
            items.append(_plain(item, item_path, lines))
        return items
    if node.tag == _YAML_STR_TAG:
        # PyYAML decodes a JSON-style "\ud83d\ude00" escape as two lone surrogates;
        # joining them gives back the character the author wrote.
        return str(node.value).encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    kind = _YAML_SCALAR_KINDS.get(node.tag, f"a value tagged {node.tag}")
    return YamlScalar(kind, node.value, node.tag)


def _plain_mapping(node: yaml.MappingNode, path: str, lines: dict[str, int]) -> dict[str, object]:
    """Keys are taken as written; a key given twice is an error because PyYAML's loader
    would silently keep only the last, hiding what the author meant."""
    mapping: dict[str, object] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise SurveyDefinitionError(
                "mapping keys must be plain names, not lists or mappings", field=path, line=line
            )
        key_path = field_path(path, key_node.value)
        if key_node.value in mapping:
            raise SurveyDefinitionError(
                f"duplicate key (first given on line {lines[key_path]})", field=key_path, line=line
            )
        lines[key_path] = line
        mapping[key_node.value] = _plain(value_node, key_path, lines)
    return mapping
