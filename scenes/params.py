"""Scene parameters: types, defaults, validation and help, declared once per scene.

render.py, `render.py list`, lecture.toml, the scenes themselves and the tests all
read the declarations in scenes/catalog.py through this module. It imports neither
manim nor the model, so `render.py list` and a no-op rerun stay fast.

A value arrives as text (the command line, an environment variable) or already
typed (TOML); both go through the same parse/check, and every problem is a
ParamError whose message is one line naming the parameter.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


SCENES_DIR = Path(__file__).resolve().parent   # scenes/


class ParamError(ValueError):
    """A bad parameter value or name; the message alone tells the user what is wrong."""


AUTO = "auto"  # a default computed at render time from the model's language


# --- value types --------------------------------------------------------------------
class Kind:
    name = "value"

    def parse(self, text: str) -> Any:          # from the command line
        return self.coerce(text)

    def coerce(self, value: Any) -> Any:        # from TOML / JSON, or after parse
        raise NotImplementedError

    def show(self, value: Any) -> str:          # for `list`, errors and file names
        return str(value)


class Text(Kind):
    name = "text"

    def coerce(self, value):
        if not isinstance(value, str):
            raise ParamError(f"expected text, got {value!r}")
        value = " ".join(value.split())
        if not value:
            raise ParamError("must not be empty")
        return value


class Int(Kind):
    def __init__(self, lo: int, hi: int):
        self.lo, self.hi = lo, hi
        self.name = self.range_name(lo, hi)

    @staticmethod
    def range_name(lo: int, hi: int) -> str:
        return f"integer {lo}..{hi}"

    def parse(self, text):
        try:
            value = int(text.strip())
        except ValueError:
            raise ParamError(f"expected an integer, got {text!r}") from None
        return self.coerce(value)

    def coerce(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError(f"expected an integer, got {value!r}")
        if not self.lo <= value <= self.hi:
            raise ParamError(f"must be between {self.lo} and {self.hi}, got {value}")
        return value


class Choice(Kind):
    def __init__(self, *options: str):
        self.options = options
        self.name = "|".join(options)

    def coerce(self, value):
        if value not in self.options:
            raise ParamError(f"must be one of {', '.join(self.options)}, got {value!r}")
        return value


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"expected a number, got {value!r}")
    return float(value)


class Temperatures(Kind):
    """A list of temperatures: each 0 (argmax) or within [lo, hi]."""

    def __init__(self, lo: float, hi: float, max_len: int):
        self.lo, self.hi, self.max_len = lo, hi, max_len
        self.name = f"list of numbers (0, or {lo:g}..{hi:g})"

    def parse(self, text):
        try:
            values = [float(p) for p in text.replace(",", " ").split()]
        except ValueError:
            raise ParamError(f"expected numbers separated by commas, got {text!r}") from None
        return self.coerce(values)

    def coerce(self, value):
        if not isinstance(value, (list, tuple)):
            raise ParamError(f"expected a list of numbers, got {value!r}")
        values = tuple(_number(v) for v in value)
        if not 1 <= len(values) <= self.max_len:
            raise ParamError(f"expected 1 to {self.max_len} temperatures, got {len(values)}")
        for t in values:
            if math.isnan(t) or t < 0:
                raise ParamError(f"a temperature must be >= 0, got {t:g}")
            if t != 0 and not self.lo <= t <= self.hi:
                raise ParamError(f"a temperature must be 0 or between {self.lo:g} and {self.hi:g}, got {t:g}")
        return values

    def show(self, value):
        return ",".join(f"{t:g}" for t in value)


class Temperature(Kind):
    """One temperature: 0 (argmax) or a number within [lo, hi]."""

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi
        self.name = f"number (0, or {lo:g}..{hi:g})"

    def parse(self, text):
        try:
            value = float(text.strip())
        except ValueError:
            raise ParamError(f"expected a number, got {text!r}") from None
        return self.coerce(value)

    def coerce(self, value):
        t = _number(value)
        if math.isnan(t) or (t != 0 and not self.lo <= t <= self.hi):
            raise ParamError(f"a temperature must be 0 or between {self.lo:g} and {self.hi:g}, got {t:g}")
        return t

    def show(self, value):
        return f"{value:g}"


# --- declarations --------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    default: Any
    help: str
    check: Callable[[Any, Any], None] | None = None   # (value, model) -> None; raises ParamError

    def show_default(self) -> str:
        return AUTO if self.default == AUTO else self.kind.show(self.default)

    def kind_name(self, model=None) -> str:
        """The type as `render.py list` shows it: an index bounded by the model (see bounded_by) with that
        model's real range, e.g. "integer 0..1" for the layer of a 2-layer model rather than the declared 0..63."""
        field_name = getattr(self.check, "config_field", None)
        if model is None or field_name is None or not isinstance(self.kind, Int):
            return self.kind.name
        return Int.range_name(self.kind.lo, min(self.kind.hi, getattr(model.config, field_name) - 1))


@dataclass(frozen=True)
class SceneSpec:
    name: str                     # the command-line name: the module scenes/<name>.py or the package scenes/<name>/
    cls: str                      # the manim Scene class in that module (a package's beats.py)
    summary: str
    params: tuple[Param, ...]
    sections: Callable[[dict], list[str]] = field(default=lambda p: [])
    check: Callable[[dict, Any], None] | None = None   # a rule across parameters, e.g. the focus within the prompt

    @property
    def module(self) -> str:
        return f"scenes.{self.name}"

    @property
    def path(self) -> str:
        """The file that defines the scene class, relative to the project's root: what `manim render` is given.
        A scene's module scenes/<name>.py, or for a scene grown into a package (scenes/<name>/: numbers.py,
        beats.py, words.toml) its beats.py, where the class is defined: manim takes the classes defined in the file
        it loads, and the package's __init__.py only hands the class on."""
        if (SCENES_DIR / self.name / "beats.py").is_file():
            return f"scenes/{self.name}/beats.py"
        return f"scenes/{self.name}.py"

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params)
        raise ParamError(f"{self.name} has no parameter {name!r}; its parameters are: {known}")

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def resolve(self, typed: dict | None = None, text: dict | None = None, *, model=None, where: str = "") -> dict:
        """Defaults, overlaid with typed values (TOML, JSON), then with text (the command line); all checked."""
        values = self.defaults()
        for given, is_text in ((typed or {}, False), (text or {}, True)):
            for name, raw in given.items():
                p = self.param(name)
                try:
                    values[name] = p.kind.parse(raw) if is_text else p.kind.coerce(raw)
                except ParamError as e:
                    raise ParamError(f"{where}{name}: {e}") from None
        if model is not None:
            for p in self.params:
                if p.check and values[p.name] != AUTO:
                    try:
                        p.check(values[p.name], model)
                    except ParamError as e:
                        raise ParamError(f"{where}{p.name}: {e}") from None
            if self.check:
                try:
                    self.check(values, model)
                except ParamError as e:
                    raise ParamError(f"{where}{e}") from None
        return values

    def non_defaults(self, values: dict) -> dict:
        return {p.name: values[p.name] for p in self.params if values[p.name] != p.default}

    def section_names(self, values: dict) -> list[str]:
        return self.sections(values)


def pick_section(wanted: str, names: list[str]) -> int:
    """The index of a section given by name or 1-based number."""
    if wanted in names:
        return names.index(wanted)
    if wanted.isdigit() and 1 <= int(wanted) <= len(names):
        return int(wanted) - 1
    raise ParamError(f"no section {wanted!r}; the sections are: {', '.join(names)}")


def canonical_json(values: dict) -> str:
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=list)


def check_prompt(prompt: str, model) -> None:
    """Every word must be in the vocabulary and the prompt must fit the context."""
    from model import ModelError  # the model owns the rules; its messages are one line
    try:
        model.encode(prompt)
    except ModelError as e:
        raise ParamError(str(e)) from None


def bounded_by(config_field: str):
    """Mark a parameter check as limiting an index to range(model.config.<config_field>), so that
    Param.kind_name (and `render.py list`) can show the loaded model's real range."""
    def mark(check):
        check.config_field = config_field
        return check
    return mark


def model_index(config_field: str, what: str) -> Callable[[Any, Any], None]:
    """A check for an index into the model, e.g. model_index("n_layer", "layers")."""
    @bounded_by(config_field)
    def check(value, model):
        limit = getattr(model.config, config_field)
        if not 0 <= value < limit:
            raise ParamError(f"the model has {limit} {what} (0..{limit - 1}), got {value}")
    return check
