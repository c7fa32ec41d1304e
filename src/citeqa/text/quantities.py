"""Numbers with their units and dates, read the same way in Spanish, Portuguese and English.

"744 mil millones de parámetros", "744 bilhões de parâmetros" and "744 billion parameters"
are one value (7.44e11, unit ``param``); "0,1 yuan" is "0.1 yuan"; "31 de julio de 2026",
"31 de julho de 2026" and "July 31, 2026" are one date. :func:`find_facts` lists the
quantities and dates of a text with their offsets, so two texts in different languages
can be compared fact by fact (:func:`same_value`, :func:`date_relation`).

Numbers that are part of a name are not quantities: "GLM-5", "Kunlun P800", "Ascend 950",
"openPangu 2.0", "Huawei Connect 2026" (a digit glued to letters, or a number right after
a capitalised word that is not a month or a function word).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

from citeqa.text.analysis import fold_accents

# --- numbers ---------------------------------------------------------------------------

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def parse_number(token: str) -> float | None:
    """The value of a written number: "744", "0,1" and "0.1", "3.000" (es/pt) and "250,000" (en).

    A separator followed by exactly three digits after a non-zero whole part groups
    thousands ("1.200", "1,200"); otherwise it is the decimal mark ("0,979", "1,2", "4.5").
    With both marks the last one is the decimal mark ("1.234,5", "1,234.5").
    """
    token = token.strip()
    if not token or not _DIGITS.fullmatch(token):
        return None
    dots, commas = token.count("."), token.count(",")
    if dots and commas:
        decimal = "." if token.rfind(".") > token.rfind(",") else ","
        group = "," if decimal == "." else "."
        return float(token.replace(group, "").replace(decimal, "."))
    if not dots and not commas:
        return float(token)
    mark = "." if dots else ","
    parts = token.split(mark)
    if len(parts) > 2:  # "1.000.000": only thousands repeat
        return float("".join(parts))
    whole, fraction = parts
    if len(fraction) == 3 and whole.strip("0") and len(whole) <= 3:
        return float(whole + fraction)
    return float(f"{whole}.{fraction}")


#: Cardinal number words (2-12, 20, 100, 1000) per language. One/uno/um are left out: they
#: are articles far more often than numbers. Words shared with other meanings in another
#: language ("dos" is "of the" in Portuguese, "once" is English) are read in their language only.
NUMBER_WORDS: dict[str, dict[str, int]] = {
    "es": {
        "dos": 2,
        "tres": 3,
        "cuatro": 4,
        "cinco": 5,
        "seis": 6,
        "siete": 7,
        "ocho": 8,
        "nueve": 9,
        "diez": 10,
        "once": 11,
        "doce": 12,
        "veinte": 20,
        "cien": 100,
        "cientos": 100,
    },
    "pt": {
        "dois": 2,
        "duas": 2,
        "três": 3,
        "tres": 3,
        "quatro": 4,
        "cinco": 5,
        "seis": 6,
        "sete": 7,
        "oito": 8,
        "nove": 9,
        "dez": 10,
        "onze": 11,
        "doze": 12,
        "vinte": 20,
        "cem": 100,
    },
    "en": {
        "two": 2,
        "three": 3,
        "four": 4,
        "five": 5,
        "six": 6,
        "seven": 7,
        "eight": 8,
        "nine": 9,
        "ten": 10,
        "eleven": 11,
        "twelve": 12,
        "twenty": 20,
        "hundred": 100,
    },
}

#: Multipliers written as words after a number. "mil millones" (es) and "bilhões" (pt-BR) are
#: the English "billion" (10^9); the Spanish "billón" is 10^12.
SCALES: tuple[tuple[str, float], ...] = (
    ("mil millones", 1e9),
    ("mil milhões", 1e9),
    ("mil milhoes", 1e9),
    ("millones", 1e6),
    ("millón", 1e6),
    ("millon", 1e6),
    ("milhões", 1e6),
    ("milhoes", 1e6),
    ("milhão", 1e6),
    ("milhao", 1e6),
    ("million", 1e6),
    ("millions", 1e6),
    ("mn", 1e6),
    ("billones", 1e12),
    ("billón", 1e12),
    ("billon", 1e12),
    ("bilhões", 1e9),
    ("bilhoes", 1e9),
    ("bilhão", 1e9),
    ("bilhao", 1e9),
    ("billion", 1e9),
    ("billions", 1e9),
    ("bn", 1e9),
    ("trillion", 1e12),
    ("trillions", 1e12),
    ("trilhões", 1e12),
    ("trilhoes", 1e12),
    ("trilhão", 1e12),
    ("trillones", 1e18),
    ("trillón", 1e18),
    ("thousand", 1e3),
    ("mil", 1e3),
)
_SCALE_RE = "|".join(re.escape(w) for w, _ in sorted(SCALES, key=lambda s: -len(s[0])))
_SCALE_VALUE = {w: v for w, v in SCALES}

#: Unit words that differ between the languages, mapped to one key. Other unit words are
#: matched by :func:`unit_key` (accent-folded, singular, first five letters: "parámetros",
#: "parâmetros" and "parameters" are all ``param``).
UNIT_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(("trimestre", "trimestres", "quarter", "quarters"), "quarter"),
    **dict.fromkeys(("año", "años", "ano", "anos", "year", "years"), "year"),
    **dict.fromkeys(("mes", "meses", "mês", "month", "months"), "month"),
    **dict.fromkeys(("semana", "semanas", "week", "weeks"), "week"),
    **dict.fromkeys(("día", "días", "dia", "dias", "day", "days"), "day"),
    **dict.fromkeys(("hora", "horas", "hour", "hours"), "hour"),
    **dict.fromkeys(("dólar", "dólares", "dolar", "dolares", "dollar", "dollars", "usd", "us$", "$"), "usd"),
    **dict.fromkeys(("euro", "euros", "eur", "€"), "eur"),
    **dict.fromkeys(("yuan", "yuanes", "yuans", "cny", "rmb", "¥"), "cny"),
    **dict.fromkeys(("real", "reais", "brl", "r$"), "brl"),
    **dict.fromkeys(("libra", "libras", "pound", "pounds", "£"), "gbp"),
    **dict.fromkeys(("%", "percent", "per cent", "por ciento", "por cento", "porcentaje", "percentagem"), "%"),
    **dict.fromkeys(("metro", "metros", "metre", "metres", "meter", "meters", "m"), "m"),
    **dict.fromkeys(
        (
            "kilómetro",
            "kilómetros",
            "quilômetro",
            "quilómetro",
            "quilômetros",
            "quilómetros",
            "kilometre",
            "kilometres",
            "kilometer",
            "kilometers",
            "km",
        ),
        "km",
    ),
    **dict.fromkeys(
        (
            "nanómetro",
            "nanómetros",
            "nanômetro",
            "nanômetros",
            "nanometre",
            "nanometres",
            "nanometer",
            "nanometers",
            "nm",
        ),
        "nm",
    ),
    **dict.fromkeys(
        (
            "empleado",
            "empleados",
            "funcionário",
            "funcionários",
            "funcionario",
            "funcionarios",
            "employee",
            "employees",
            "trabajadores",
            "trabalhadores",
            "workers",
            "staff",
        ),
        "employee",
    ),
    **dict.fromkeys(("persona", "personas", "pessoa", "pessoas", "people", "person", "persons"), "person"),
}
#: Units written in capitals or glued to the number ("288 GB", "288GB", "7nm").
SYMBOL_UNITS = frozenset(
    {
        "gb",
        "tb",
        "mb",
        "kb",
        "pb",
        "nm",
        "km",
        "kg",
        "mg",
        "ms",
        "ghz",
        "mhz",
        "khz",
        "hz",
        "w",
        "kw",
        "mw",
        "gw",
        "kwh",
        "mwh",
        "gwh",
        "tflops",
        "pflops",
        "petaflops",
        "teraflops",
        "exaflops",
        "gflops",
        "tops",
        "m",
        "cm",
        "mm",
        "g",
        "t",
        "k",
        "°c",
        "°f",
    }
)
#: Units that are always written next to their number (a count of things may leave its noun out).
MEASURE_UNITS = frozenset(UNIT_SYNONYMS.values()) | SYMBOL_UNITS
_CURRENCY_BEFORE = re.compile(r"(US\$|R\$|\$|€|£|¥)\s*$")
#: Words skipped between a number and its unit ("744 mil millones de parámetros", "a portfolio of").
_UNIT_GLUE = frozenset({"de", "of", "do", "da", "dos", "das", "del"})
#: Words after which a number is not part of a name even when capitalised ("In 2026", "En 2026").
_FUNCTION_WORDS = frozenset(
    fold_accents(w)
    for w in """
in on at by of for from to since until before after around about near over under the a an and or
en el la los las de del desde hasta antes despues tras hacia sobre con sin por para y o un una unos unas
em no na nos nas do da dos das ao aos com sem pelo pela ate apos e um uma uns umas
january february march april may june july august september october november december
enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre
janeiro fevereiro março maio junho julho setembro outubro novembro dezembro
""".split()
)


#: Words after which a number designates, not counts: "série 3600", "model 3", "versión 2".
_DESIGNATION_WORDS = frozenset(
    fold_accents(w)
    for w in "series serie série model modelo version versión versão type tipo class clase classe number número".split()
)

#: Endings of adjectives, participles and adverbs: a word after a number that ends so is not its unit.
_NOT_A_NOUN = re.compile(r"(?:able|ible|avel|ivel|ado|ada|ados|adas|ido|ida|idos|idas|ing|ed|mente|ly)$")


def unit_key(word: str) -> str:
    """One key for a unit word in any of the three languages ("" for no unit)."""
    lowered = word.strip().lower()
    if not lowered:
        return ""
    if lowered in UNIT_SYNONYMS:
        return UNIT_SYNONYMS[lowered]
    folded = fold_accents(lowered)
    if folded in UNIT_SYNONYMS:
        return UNIT_SYNONYMS[folded]
    if folded in SYMBOL_UNITS:
        return folded
    singular = folded[:-1] if len(folded) > 3 and folded.endswith("s") else folded
    return singular[:5]


# --- dates -----------------------------------------------------------------------------

MONTHS: dict[str, int] = {}
for _n, _names in enumerate(
    (
        ("january", "enero", "janeiro", "jan"),
        ("february", "febrero", "fevereiro", "feb", "fev"),
        ("march", "marzo", "março", "marco", "mar"),
        ("april", "abril", "apr", "abr"),
        ("may", "mayo", "maio"),
        ("june", "junio", "junho", "jun"),
        ("july", "julio", "julho", "jul"),
        ("august", "agosto", "aug", "ago"),
        ("september", "septiembre", "setiembre", "setembro", "sep", "sept", "set"),
        ("october", "octubre", "outubro", "oct", "out"),
        ("november", "noviembre", "novembro", "nov"),
        ("december", "diciembre", "dezembro", "dec", "dic", "dez"),
    ),
    start=1,
):
    for _name in _names:
        MONTHS[_name] = _n
#: Month names that are also common words ("may", "marco" = frame, "set", "out") or
#: abbreviations: read as months only next to a day or a year.
_AMBIGUOUS_MONTHS = frozenset(
    {
        "may",
        "marco",
        "mar",
        "jan",
        "feb",
        "fev",
        "apr",
        "abr",
        "jun",
        "jul",
        "aug",
        "ago",
        "sep",
        "sept",
        "set",
        "oct",
        "out",
        "nov",
        "dec",
        "dic",
        "dez",
    }
)
ORDINALS: dict[str, int] = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
    "primer": 1,
    "primero": 1,
    "primera": 1,
    "segundo": 2,
    "segunda": 2,
    "tercer": 3,
    "tercero": 3,
    "tercera": 3,
    "cuarto": 4,
    "cuarta": 4,
    "primeiro": 1,
    "primeira": 1,
    "terceiro": 3,
    "terceira": 3,
    "quarto": 4,
    "quarta": 4,
}
_MONTH_RE = "|".join(sorted((re.escape(m) for m in MONTHS), key=len, reverse=True))
_ORDINAL_RE = "|".join(sorted((re.escape(o) for o in ORDINALS), key=len, reverse=True))
_YEAR = r"(?:1[89]\d\d|20\d\d|2100)"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])"
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(p, re.I))
    for name, p in (
        (
            "dmy",
            rf"\b(?P<day>{_DAY})(?:st|nd|rd|th|º|°)?\s+(?:de\s+|of\s+)?(?P<month>{_MONTH_RE})\.?,?"
            rf"(?:\s+(?:de|del|of)\s+|\s+|,\s*)(?P<year>{_YEAR})\b",
        ),
        ("mdy", rf"\b(?P<month>{_MONTH_RE})\.?\s+(?P<day>{_DAY})(?:st|nd|rd|th)?,?\s+(?P<year>{_YEAR})\b"),
        ("qy", rf"\b(?P<quarter>{_ORDINAL_RE})\s+(?:quarter|trimestre)\s*(?:of|de|del|do)?\s+(?P<year>{_YEAR})\b"),
        ("Qy", rf"\bQ(?P<quarter>[1-4])\s*(?:of\s+|de\s+|del\s+|do\s+)?(?P<year>{_YEAR})\b"),
        ("my", rf"\b(?P<month>{_MONTH_RE})\.?,?(?:\s+(?:de|del|of)\s+|\s+|,\s*)(?P<year>{_YEAR})\b"),
        ("dm", rf"\b(?P<day>{_DAY})(?:st|nd|rd|th|º|°)?\s+(?:de\s+|of\s+)?(?P<month>{_MONTH_RE})\b"),
        ("md", rf"\b(?P<month>{_MONTH_RE})\s+(?P<day>{_DAY})(?:st|nd|rd|th)?\b(?![.,]\d)"),
        ("m", rf"\b(?P<month>{_MONTH_RE})\b"),
    )
)
#: "... the 960DT arrives in the first quarter of 2027 and the 960PR in the third": an ordinal
#: standing alone after a quarter date is another quarter of the same year.
_ELLIPTIC_QUARTER = re.compile(
    rf"\b(?:in the|en el|no|na|el|the|o|a)\s+(?P<quarter>{_ORDINAL_RE})\b"
    rf"(?=\s*(?:[.,;:)\u2014\u2013-]|$|\s+(?:y|e|and|o|or|ou)\b))",
    re.I,
)


@dataclass(frozen=True, slots=True)
class DatePoint:
    """A date as precise as the text says: year, quarter, month, day (None when not said)."""

    year: int | None = None
    quarter: int | None = None
    month: int | None = None
    day: int | None = None

    @property
    def quarter_of_month(self) -> int | None:
        return (self.month - 1) // 3 + 1 if self.month is not None else None


@dataclass(frozen=True, slots=True)
class Fact:
    """A quantity or a date found in a text, at ``text[start:end]``.

    A quantity has ``number`` (scale words applied: "744 mil millones" is 7.44e11) and
    ``unit`` (a :func:`unit_key`, "" when none is written); a date has ``date``.
    """

    kind: str  # "quantity" or "date"
    start: int
    end: int
    text: str
    number: float | None = None
    unit: str = ""
    date: DatePoint | None = None


def find_dates(text: str) -> list[Fact]:
    """Dates in ``text`` (most specific reading first; spans never overlap), in text order."""
    found: list[Fact] = []
    taken: list[tuple[int, int]] = []
    for name, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            a, b = m.span()
            if any(x < b and a < y for x, y in taken):
                continue
            groups = m.groupdict()
            month_word = (groups.get("month") or "").lower()
            if name in ("m", "dm", "md") and not _plain_month(text, m, month_word):
                continue
            month = MONTHS.get(month_word) if month_word else None
            quarter = groups.get("quarter")
            q = None
            if quarter is not None:
                q = int(quarter) if quarter.isdigit() else ORDINALS.get(quarter.lower())
            year = int(groups["year"]) if groups.get("year") else None
            day = int(groups["day"]) if groups.get("day") else None
            found.append(Fact("date", a, b, text[a:b], date=DatePoint(year, q, month, day)))
            taken.append((a, b))
    found.extend(_elliptic_quarters(text, found, taken))
    found.extend(_bare_years(text, taken))
    return sorted(found, key=lambda f: f.start)


def _plain_month(text: str, m: re.Match[str], month_word: str) -> bool:
    """A month name without a year: only unambiguous names, and English ones capitalised."""
    if month_word in _AMBIGUOUS_MONTHS:
        return False
    word = m.group("month")
    english = month_word in (
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    )
    return not english or word[:1].isupper()


def _elliptic_quarters(text: str, found: list[Fact], taken: list[tuple[int, int]]) -> list[Fact]:
    out = []
    quarters = [f for f in found if f.date is not None and f.date.quarter is not None and f.date.year is not None]
    for q in quarters:
        window_end = len(text)
        stop = re.search(r"[.;!?](?:\s|$)", text[q.end :])
        if stop:
            window_end = q.end + stop.start()
        for m in _ELLIPTIC_QUARTER.finditer(text, q.end, window_end):
            a, b = m.span("quarter")
            if any(x < b and a < y for x, y in taken):
                continue
            n = ORDINALS.get(m.group("quarter").lower())
            out.append(Fact("date", a, b, text[a:b], date=DatePoint(q.date.year, n)))  # type: ignore[union-attr]
            taken.append((a, b))
    return out


_YEAR_TOKEN = re.compile(rf"(?<![\w.,\-/]){_YEAR}(?![\w\-]|[.,]\d)")


def _bare_years(text: str, taken: list[tuple[int, int]]) -> list[Fact]:
    """Four-digit years standing alone ("desde 2022", "in 2028"), not inside names or quantities."""
    out = []
    for m in _YEAR_TOKEN.finditer(text):
        a, b = m.span()
        if any(x < b and a < y for x, y in taken) or _name_number(text, a, b):
            continue
        if _known_unit_after(text, b):
            continue  # "2000 GB", "2026 millones", "1990 %": a quantity
        out.append(Fact("date", a, b, text[a:b], date=DatePoint(int(m.group(0)))))
        taken.append((a, b))
    return out


def _known_unit_after(text: str, end: int) -> bool:
    """A scale word, a symbol or a listed unit right after ``end``."""
    m = re.match(rf"[\s\-]*({_SCALE_RE}|%|[^\W\d_]+)", text[end : end + 30], re.I)
    if m is None:
        return False
    word = m.group(1).lower()
    return word in _SCALE_VALUE or word == "%" or word in SYMBOL_UNITS or word in UNIT_SYNONYMS


# --- quantities --------------------------------------------------------------------------

_NUMBER_TOKEN = re.compile(r"(?<![\w])\d+(?:[.,]\d+)*(?:[a-zA-Z%]+)?")
_WORD = re.compile(r"[^\W\d_][\w'’\-]*|\$|€|£|%")


def _name_number(text: str, a: int, b: int) -> bool:
    """Whether the number at ``text[a:b]`` is part of a name: glued to letters ("P800", "GLM-5",
    "960DT"), right after a capitalised word ("Ascend 950", "openPangu 2.0", "Connect 2026") or a
    word that designates ("série 3600")."""
    before = text[max(0, a - 40) : a]
    if before and (before[-1].isalpha() or before[-1] == "_"):
        return True
    if before.endswith("-") and len(before) > 1 and before[-2].isalnum():
        return True
    if before.endswith("."):
        return True  # "GPT-5.2" continues a version
    previous = re.search(r"([^\W_][\w\-]*)\s+$", before)
    if previous is None:
        return False
    word = previous.group(1)
    if fold_accents(word.lower()) in _DESIGNATION_WORDS:
        return True  # "automotoras da série 3600"
    if fold_accents(word.lower()) in _FUNCTION_WORDS:
        return False
    if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
        return True  # "A2 800": a run of model names
    return any(c.isupper() for c in word)


def _score_or_range(text: str, a: int, b: int) -> bool:
    """A number joined to another by a dash: a score ("3–1") or a range ("10-15"), not one quantity."""
    after = re.match(r"[\u2013\u2014-]\d", text[b : b + 2])
    before = re.search(r"\d[\u2013\u2014-]$", text[max(0, a - 2) : a])
    return after is not None or before is not None


def _unit_after(text: str, end: int) -> tuple[str, int]:
    """The unit word after a number ending at ``end`` and the end of what was read ("" when none).

    Skips "de"/"of" and up to two names ("11 UnifiedBus chips", "50,000 Ascend 950 chips").
    """
    rest = text[end : end + 80]
    offset, names, glued = 0, 0, False
    degrees = re.match(r"\s*[°º]\s*([CF])\b", rest)
    if degrees is not None:
        return f"°{degrees.group(1).lower()}", end + degrees.end()
    while True:
        m = re.match(r"[\s\-]*(%|[^\W\d_][\w\-]*|\d+[\w]*)", rest[offset:])
        if m is None:
            return "", end
        word = m.group(1)
        lowered = word.lower()
        word_end = offset + m.end()
        if lowered == "%":
            return "%", end + word_end
        if lowered in ("per", "por") and re.match(r"\s+(cent|ciento|cento)\b", rest[word_end:], re.I):
            tail = re.match(r"\s+(cent|ciento|cento)\b", rest[word_end:], re.I)
            return "%", end + word_end + tail.end()  # type: ignore[union-attr]
        if lowered in SYMBOL_UNITS or lowered in UNIT_SYNONYMS:
            return unit_key(word), end + word_end
        if lowered in _UNIT_GLUE and not glued:
            glued, offset = True, word_end
            continue
        is_name = word[:1].isupper() or any(c.isdigit() for c in word)
        if is_name and names < 2:
            names += 1
            offset = word_end
            continue
        if fold_accents(lowered) in _FUNCTION_WORDS or word[:1].isdigit():
            return "", end
        if is_name or _NOT_A_NOUN.search(fold_accents(lowered)):
            return "", end  # "de 7 mil millones responsable de...": the noun was said before
        return unit_key(word), end + word_end


def find_quantities(text: str, lang: str = "", dates: list[Fact] | None = None) -> list[Fact]:
    """Quantities in ``text``: digits or (in ``lang``) number words, with scale words and a unit.

    Numbers inside dates (``dates``, default :func:`find_dates`) or names are left out.
    """
    dates = find_dates(text) if dates is None else dates
    taken = [(d.start, d.end) for d in dates]
    out = []
    for m in _NUMBER_TOKEN.finditer(text):
        a, b = m.span()
        token = m.group(0)
        digits = _DIGITS.match(token)
        if digits is None or any(x < b and a < y for x, y in taken):
            continue
        glued = token[digits.end() :]
        if glued and glued.lower() not in SYMBOL_UNITS and glued != "%":
            continue  # "800T", "960DT", "2K": a model name
        if text[a - 1 : a] == "-" and a >= 2 and text[a - 2].isalnum():
            continue
        if _score_or_range(text, a, a + digits.end()):
            continue
        if _name_number(text, a, a + digits.end()):
            continue
        value = parse_number(digits.group(0))
        if value is None:
            continue
        out.append(_quantity(text, a, a + digits.end(), value, glued))
    for word, value in _number_words(text, lang):
        a, b = word
        if any(x < b and a < y for x, y in taken):
            continue
        out.append(_quantity(text, a, b, float(value), ""))
    return sorted(out, key=lambda f: f.start)


def _quantity(text: str, a: int, b: int, value: float, glued: str) -> Fact:
    """The quantity whose number is ``text[a:b]``: scale words, a unit after it or a currency before."""
    end = b
    unit = ""
    if glued:
        unit = "%" if glued == "%" else unit_key(glued)
        end = b + len(glued)
    else:
        scale = re.match(rf"[\s\-]*(?P<scale>{_SCALE_RE})\b", text[b : b + 30], re.I)
        if scale is not None:
            word = scale.group("scale").lower()
            value *= _SCALE_VALUE.get(word, _SCALE_VALUE.get(fold_accents(word), 1.0))
            end = b + scale.end()
        unit, unit_end = _unit_after(text, end)
        if unit:
            end = unit_end
    start = a
    currency = _CURRENCY_BEFORE.search(text[max(0, a - 4) : a])
    if currency is not None:
        unit = unit_key(currency.group(1))
        start = a - (len(text[max(0, a - 4) : a]) - currency.start())
    return Fact("quantity", start, end, text[start:end], number=value, unit=unit)


def _number_words(text: str, lang: str) -> list[tuple[tuple[int, int], int]]:
    words = NUMBER_WORDS.get(lang, {})
    if not words:
        return []
    pattern = _number_word_pattern(lang)
    return [
        ((m.start(), m.end()), words[m.group(0).lower()])
        for m in pattern.finditer(text)
        if _unit_after(text, m.end())[0]
    ]  # "seis meses", "three quarters": a word number needs a unit


@cache
def _number_word_pattern(lang: str) -> re.Pattern[str]:
    words = sorted(NUMBER_WORDS[lang], key=len, reverse=True)
    return re.compile(r"(?<![\w\-])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w\-])", re.I)


def find_facts(text: str, lang: str = "") -> list[Fact]:
    """Every date and quantity of ``text`` in text order (``lang`` enables its number words)."""
    dates = find_dates(text)
    return sorted(dates + find_quantities(text, lang, dates), key=lambda f: f.start)


# --- comparing -------------------------------------------------------------------------------

#: Relative difference under which two numbers are the same value (rounding of the last digit
#: is a different number: 0.952 is not 0.925).
SAME_NUMBER_TOLERANCE = 1e-6


def same_number(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=SAME_NUMBER_TOLERANCE, abs_tol=1e-12)


def date_relation(claim: DatePoint, doc: DatePoint) -> str:
    """``"same"`` when ``doc`` states everything ``claim`` says, ``"different"`` when a part both
    state differs (a month outside a stated quarter counts), else ``"unknown"`` (``doc`` is less
    precise, or says other parts)."""
    for c, d in ((claim.year, doc.year), (claim.month, doc.month), (claim.day, doc.day)):
        if c is not None and d is not None and c != d:
            return "different"
    claim_q = claim.quarter if claim.quarter is not None else claim.quarter_of_month
    doc_q = doc.quarter if doc.quarter is not None else doc.quarter_of_month
    if claim_q is not None and doc_q is not None and claim_q != doc_q:
        return "different"
    wanted = [(claim.year, doc.year), (claim.month, doc.month), (claim.day, doc.day), (claim.quarter, doc_q)]
    stated = [(c, d) for c, d in wanted if c is not None]
    if stated and all(c == d for c, d in stated):
        return "same"
    return "unknown"


def same_value(claim: Fact, doc: Fact) -> bool:
    """Whether ``doc`` states the value of ``claim``: same date, or the same number in the same
    unit (a unit written on one side only is taken as the same: "744 billion" and "744 mil
    millones de parámetros")."""
    if claim.kind != doc.kind:
        return False
    if claim.kind == "date":
        return claim.date is not None and doc.date is not None and date_relation(claim.date, doc.date) == "same"
    if claim.number is None or doc.number is None or not same_number(claim.number, doc.number):
        return False
    return not claim.unit or not doc.unit or claim.unit == doc.unit


def same_slot(claim: Fact, doc: Fact) -> bool:
    """Whether ``doc`` could state the same thing as ``claim`` with another value: a date that
    differs in a part both give, or a quantity in the same unit (or without one on either side:
    "de 7 mil millones responsable de..." leaves the unit said before, but a measure such as
    months, dollars, GB or % is always written)."""
    if claim.kind != doc.kind:
        return False
    if claim.kind == "date":
        return claim.date is not None and doc.date is not None and date_relation(claim.date, doc.date) == "different"
    if claim.unit == doc.unit:
        return True
    unit = claim.unit or doc.unit
    return not (claim.unit and doc.unit) and unit not in MEASURE_UNITS
