"""One module per mechanism: the registry's mechanisms offer the whole interface, and no
other module of the app names a mechanism or a question type.

A new mechanism should cost its module, its registry line, its browser module and its
tests (DESIGN.md, "Adding a mechanism"). That holds only while the rest of the app asks a
mechanism instead of naming it, so these tests read the source: a quoted mechanism name,
survey-file mechanism name or question-type string anywhere else fails, with the file and
line to fix.
"""

from __future__ import annotations

import inspect
import io
import math
import re
import tokenize
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from babel.messages.pofile import read_po

from survey_app.domain.survey_limits import PLAIN_TYPES
from survey_app.privacy import (
    MECHANISMS,
    AnswerSpace,
    QuestionType,
    mechanism_for,
    mechanism_from_parameters,
)
from survey_app.privacy.mechanisms import interface
from survey_app.privacy.mechanisms.cells import TallyCell
from survey_app.privacy.mechanisms.plain import PLAIN_NAME
from survey_app.privacy.words import Text

PACKAGE = Path(inspect.getfile(interface)).parents[2]
MECHANISM_PACKAGE = PACKAGE / "privacy" / "mechanisms"
QUESTION_TYPES_MODULE = PACKAGE / "privacy" / "question_types.py"
#: "none", the plain mechanisms' stored name, is also an everyday word of CSP headers,
#: Matplotlib and the pages ("none" of the options): it is left out of the search.
#: "number" and "choice" are HTML's and the style sheet's words too: in a template, the
#: value of a ``type=`` or ``class=`` attribute (or of a Jinja argument so named) is
#: HTML's, not a question type.
EVERYDAY_WORDS = {PLAIN_NAME}
HTML_WORDS = {QuestionType.NUMBER.value, QuestionType.CHOICE.value}
HTML_ATTRIBUTE = re.compile(r"\b(type|class)=$")
SPACES = {
    QuestionType.YES_NO: AnswerSpace(QuestionType.YES_NO),
    QuestionType.CHOICE: AnswerSpace(QuestionType.CHOICE, options=4),
    QuestionType.NUMBER: AnswerSpace(QuestionType.NUMBER, min=-3, max=12),
    QuestionType.SCALE: AnswerSpace(QuestionType.SCALE, options=4),
    QuestionType.MULTIPLE: AnswerSpace(QuestionType.MULTIPLE, options=4),
}
STRING = re.compile(r"^([rRbBuUfF]*)('''|\"\"\"|'|\")(.*)\2$", re.S)
FIELD = re.compile(r"{[^{}]*}")
QUOTED = re.compile(r"\"([^\"<>{}]*)\"|'([^'<>{}]*)'")


def _owners() -> dict[str, Path]:
    """Each forbidden name and the one module allowed to write it as a string."""
    owners = {kind.value: QUESTION_TYPES_MODULE for kind in QuestionType}
    for mechanism in MECHANISMS:
        module = Path(inspect.getfile(mechanism))
        for name in (mechanism.name, mechanism.file_name):
            if name is not None and name not in EVERYDAY_WORDS:
                owners[name] = module
    return owners


def _python_strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string literal of a Python file with its line; an f-string's literal parts."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    for token in tokens:
        if token.type == tokenize.STRING and (match := STRING.match(token.string)):
            prefix, text = match.group(1), match.group(3)
            parts = FIELD.split(text) if "f" in prefix.lower() else [text]
            yield from ((token.start[0], part) for part in parts if part)


def _template_strings(path: Path) -> Iterator[tuple[int, str, bool]]:
    """Every quoted string of a template with its line, and whether it is the value of an
    HTML ``type`` or ``class`` attribute."""
    text = path.read_text()
    for match in QUOTED.finditer(text):
        value = match.group(1) if match.group(1) is not None else match.group(2)
        html = bool(HTML_ATTRIBUTE.search(text[max(0, match.start() - 6) : match.start()]))
        yield text.count("\n", 0, match.start()) + 1, value, html


def _misplaced(owners: dict[str, Path]) -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, value in _python_strings(path):
            if value in owners and owners[value] != path:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {value!r}")
    for path in sorted((PACKAGE / "templates").rglob("*.html")):
        for line, value, html in _template_strings(path):
            if value in owners and not (html and value in HTML_WORDS):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {value!r}")
    return found


def test_no_module_names_a_mechanism_or_a_question_type_but_its_own() -> None:
    owners = _owners()
    assert {"duchi", "discrete_laplace", "grr", "oue", "yes_no", "choice"} <= set(owners)
    misplaced = _misplaced(owners)
    assert not misplaced, "ask the mechanism or the QuestionType instead:\n" + "\n".join(misplaced)


def test_the_search_finds_a_name_where_it_does_not_belong(tmp_path: Path) -> None:
    """The scan itself: a planted name in code, in an f-string and in a template is found,
    and HTML's own words are not."""
    planted = tmp_path / "planted.py"
    planted.write_text('if mechanism.name == "duchi_binary":\n    x = f"{a}oue"\ny = \'oue\'\n')
    assert [value for _line, value in _python_strings(planted)] == ["duchi_binary", "oue", "oue"]
    page = tmp_path / "page.html"
    page.write_text(
        '<td class="number">{% if q.type == \'number\' %}<b data-x="grr">{% endif %}</td>\n'
    )
    found = list(_template_strings(page))
    assert found == [(1, "number", True), (1, "number", False), (1, "grr", False)]


# The interface, mechanism by mechanism.


def _members(protocol: type) -> set[str]:
    """A Protocol's own members: its annotated attributes and its methods and properties."""
    names = set(protocol.__dict__.get("__annotations__", {}))
    names |= {name for name in protocol.__dict__ if not name.startswith("_")}
    return names


def _instance(mechanism: type[interface.Mechanism]) -> interface.Mechanism:
    return mechanism.for_answers(SPACES[mechanism.question_type], Fraction(1))


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_registered_mechanism_offers_the_whole_interface(
    mechanism: type[interface.Mechanism],
) -> None:
    shares = interface.ProportionMechanism
    means = interface.NumericMechanism
    expected = _members(interface.Mechanism)
    expected |= _members(means if mechanism.question_type.estimates_mean else shares)
    instance = _instance(mechanism)
    missing = sorted(name for name in expected if not hasattr(instance, name))
    assert not missing, f"{mechanism.__name__} lacks {missing}"


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_mechanism_lives_in_a_module_of_its_own(mechanism: type[interface.Mechanism]) -> None:
    module = inspect.getmodule(mechanism)
    assert module is not None and Path(inspect.getfile(module)).parent == MECHANISM_PACKAGE
    defined = [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and value.__module__ == module.__name__
    ]
    assert defined == [mechanism]


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_mechanism_is_stored_and_read_back_as_itself(
    mechanism: type[interface.Mechanism],
) -> None:
    instance = _instance(mechanism)
    assert mechanism_from_parameters(instance.parameters()) == instance
    assert mechanism.describes(instance.parameters())


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_mechanism_states_its_reports_cells_and_columns(
    mechanism: type[interface.Mechanism],
) -> None:
    """Its reports, as the browser writes them, go through its format and its cells."""
    instance = _instance(mechanism)
    support = instance.finite_support()
    if support is not None:
        reports = [instance.report_format.from_audit_key(key) for key in support]
        exact = [instance.probability(report, _a_value(instance)) for report in reports]
        assert math.isclose(float(sum(exact)), 1.0)
    report = instance.simulate(np.array([_a_value(instance)]), np.random.default_rng(0))[0]
    python_report = tuple(int(bit) for bit in report) if np.ndim(report) else report.item()
    stored = instance.report_format.store(python_report)
    assert instance.report_format.load(stored) == python_report
    cells = instance.tally_cells()
    assert cells[0] == TallyCell("n", cells[0].rule) and all(c.amount(stored) >= 0 for c in cells)
    assert len(instance.export_cells(stored, ["a", "b", "c", "d"])) == len(
        instance.export_columns("key")
    )


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_randomized_mechanism_counts_its_reports_for_a_public_release(
    mechanism: type[interface.Mechanism],
) -> None:
    """Every report an honest device sends adds to as many counts as the mechanism says,
    by at most the sensitivity it states in ℓ1, and some report by exactly that; a plain
    question is left out of the sensitive estimates."""
    instance = _instance(mechanism)
    counting = instance.central_counting()
    if not mechanism.randomized:
        assert counting is None
        return
    assert counting is not None
    support = instance.finite_support()
    if support is None:
        low, high = instance.report_range()
        reports: list[object] = list(range(low, high + 1))
    else:
        reports = [instance.report_format.from_audit_key(key) for key in support]
    contributions = [counting.contribution(report) for report in reports]
    assert {len(contribution) for contribution in contributions} == {counting.categories}
    largest = max(sum(map(abs, contribution)) for contribution in contributions)
    assert largest == counting.report_sensitivity


def _a_value(instance: interface.Mechanism) -> object:
    if instance.question_type.has_range:
        return 5
    if instance.question_type.answer_format.marks_options:
        return (0, 1, 1, 0)  # tick all that apply: options 1 and 2 ticked
    if instance.question_type.has_options:
        return 2
    return True


def _catalog_ids(language: str) -> set[str]:
    path = PACKAGE / "translations" / language / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        return {
            message.id if isinstance(message.id, str) else message.id[0] for message in read_po(po)
        }


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_mechanism_speaks_in_translated_words(mechanism: type[interface.Mechanism]) -> None:
    """Its words for respondents and researchers are messages the catalogs translate."""
    instance = _instance(mechanism)
    texts: list[Text | str] = [
        instance.respondent_name,
        instance.researcher_name,
        instance.description(),
    ]
    texts += [instance.builder_label] if instance.builder_label is not None else []
    texts += [text for text, _ in instance.report_texts(None, ["a", "b", "c", "d"])]
    markers = [text for text in texts if isinstance(text, Text)]
    assert len(markers) >= 3
    for language in ("ko", "zh"):
        assert not {text.msgid for text in markers} - _catalog_ids(language), language
    assert all(str(text) for text in markers)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.__name__)
def test_each_randomized_mechanism_has_its_browser_module(
    mechanism: type[interface.Mechanism],
) -> None:
    script = mechanism.browser_script
    if not mechanism.randomized:
        assert script is None
        return
    assert script is not None and (PACKAGE / "static" / script).is_file()


def test_the_registry_names_each_mechanism_once() -> None:
    file_names = [m.file_name for m in MECHANISMS if m.file_name is not None]
    assert len(set(file_names)) == len(file_names)
    randomized = [m.name for m in MECHANISMS if m.randomized]
    assert len(set(randomized)) == len(randomized)
    for kind in PLAIN_TYPES:
        plain = mechanism_for(SPACES[kind], None, sensitive=False)
        assert not plain.randomized and plain.question_type is kind.mechanism_kind
