"""Expected answer types: what kind of fact a question asks for, and where such facts sit in a text.

The type comes from the question's interrogative phrase in es, pt or en (the wh-word, the
preposition before it and the noun after it: "¿A qué empresa...", "What word accuracy...",
"Qual foi a pontuação..."); a fact of that type next to a question term raises a span's
score, and the one nearest the question's terms is the short answer, highlighted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from citeqa.text.analysis import fold_accents, stopwords, terms, words


class AnswerType(str, Enum):
    """The kind of fact a question asks for."""

    QUANTITY = "quantity"
    DATE = "date"
    PRICE = "price"
    NAME = "name"
    PLACE = "place"
    OTHER = "other"


# --- questions -------------------------------------------------------------------------
# Everything below is matched on the case-folded, accent-folded question.


def _alternatives(*phrases: str) -> str:
    """A regex alternation of phrases, longest first (so "a partir de" beats "a")."""
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(set(phrases), key=len, reverse=True))


_CONJUNCTIONS = _alternatives(
    "y",
    "e",
    "and",
    "ou",
    "or",
    "but",
    "pero",
    "mas",
    "entonces",
    "then",
    "so",
    "also",
    "tambien",
    "tambem",
    "ademas",
    "now",
    "ahora",
    "agora",
)
_ADVERBS = _alternatives(
    "exactly",
    "exactamente",
    "exatamente",
    "roughly",
    "approximately",
    "aproximadamente",
    "more or less",
    "mas o menos",
    "mais ou menos",
    "precisely",
    "precisamente",
)
_PREPOSITIONS = _alternatives(
    "a",
    "al",
    "ao",
    "de",
    "del",
    "do",
    "da",
    "con",
    "com",
    "en",
    "em",
    "no",
    "na",
    "para",
    "por",
    "pelo",
    "pela",
    "sobre",
    "desde",
    "hasta",
    "ate",
    "mediante",
    "ante",
    "diante de",
    "entre",
    "contra",
    "tras",
    "apos",
    "durante",
    "a partir de",
    "junto a",
    "junto con",
    "junto com",
    "cerca de",
    "dentro de",
    "alrededor de",
    "in",
    "on",
    "at",
    "to",
    "for",
    "with",
    "from",
    "by",
    "of",
    "into",
    "under",
    "since",
    "until",
    "after",
    "before",
    "during",
    "through",
    "via",
    "against",
    "among",
    "between",
    "up to",
)
_WH = _alternatives(
    "how",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "que",
    "qual",
    "quais",
    "cual",
    "cuales",
    "quien",
    "quienes",
    "quem",
    "cuando",
    "quando",
    "donde",
    "onde",
    "adonde",
    "aonde",
    "como",
    "porque",
    "cuantos",
    "cuantas",
    "cuanto",
    "cuanta",
    "quantos",
    "quantas",
    "quanto",
    "quanta",
)
_LEAD = re.compile(
    rf"^[\W_]*(?:(?:{_CONJUNCTIONS})\s+)?(?:(?:{_ADVERBS})\s+)?(?:(?P<prep>{_PREPOSITIONS})\s+)?"
    rf"(?P<pronoun>(?:o|lo)\s+)?(?P<wh>{_WH})\b(?P<rest>.*)$",
    re.S,
)
#: "part of X" asks for a component, in common nouns ("the fuel pump"); "which Siemens part" for a product.
_PART_OF = re.compile(r"^(?:part|parts|parte|partes)\s+(?:of|de|do|da|del|dos|das)\b")

#: Words between a which/what/qual and its noun: copulas, articles, possessives, "kind of".
_SKIP_BEFORE_HEAD = frozenset(
    """
e foi era sera seria sao eram es fue son fueron sera seria is was are were will be would
el la los las lo o a os as the an un una uno um uma su sus seu sua seus suas its their his her
exactamente exatamente exactly otro otra otros otras outro outra outros outras other another others
""".split()
)
_KIND_OF = re.compile(
    r"^(?:tipo|tipos|clase|clases|kind|kinds|type|types|sort|sorts|genero|especie|variedad|"
    r"categoria)\s+(?:de|of)\s+"
)
#: English words that end the noun phrase after which/what: auxiliaries and prepositions.
_EN_HEAD_STOP = frozenset(
    """
did does do is was are were has have had will would can could should may might must
of in on at for to from by with about as that than
""".split()
)
#: A determiner after the noun phrase follows its verb ("Which unit designs the chips").
_EN_DETERMINERS = frozenset("the a an its their his her this these those".split())


#: Nouns whose answer is a number (with its unit): "¿Qué precisión...", "What word accuracy...".
_QUANTITY_NOUNS = frozenset(
    (
        "precision",
        "precisao",
        "accuracy",
        "exactitud",
        "exatidao",
        "puntuacion",
        "pontuacao",
        "score",
        "nota",
        "puntaje",
        "porcentaje",
        "percentagem",
        "porcentagem",
        "percentage",
        "proporcion",
        "proporcao",
        "proportion",
        "share",
        "cuota",
        "tasa",
        "taxa",
        "rate",
        "ratio",
        "tamano",
        "tamanho",
        "size",
        "capacidad",
        "capacidade",
        "capacity",
        "velocidad",
        "velocidade",
        "speed",
        "frecuencia",
        "frequencia",
        "frequency",
        "latencia",
        "latency",
        "throughput",
        "consumo",
        "consumption",
        "altura",
        "height",
        "longitud",
        "comprimento",
        "length",
        "ancho",
        "largura",
        "width",
        "peso",
        "weight",
        "distancia",
        "distance",
        "temperatura",
        "temperature",
        "duracion",
        "duracao",
        "duration",
        "tiempo",
        "tempo",
        "edad",
        "idade",
        "age",
        "numero",
        "number",
        "cantidad",
        "quantidade",
        "quantity",
        "amount",
        "total",
        "cifra",
        "volumen",
        "volume",
        "poblacion",
        "populacao",
        "population",
        "area",
        "superficie",
        "margen",
        "margem",
        "margin",
        "crecimiento",
        "crescimento",
        "growth",
        "aumento",
        "increase",
        "reduccion",
        "reducao",
        "reduction",
        "caida",
        "queda",
        "drop",
        "puntos",
        "pontos",
        "points",
        "resolucion",
        "resolucao",
        "resolution",
        "bandwidth",
        "potencia",
        "power",
    )
)
_PRICE_NOUNS = frozenset(
    (
        "precio",
        "preco",
        "price",
        "coste",
        "costo",
        "custo",
        "cost",
        "tarifa",
        "fee",
        "fare",
        "valor",
        "value",
        "importe",
        "salario",
        "salary",
    )
)
_DATE_NOUNS = frozenset(
    (
        "dia",
        "day",
        "fecha",
        "date",
        "ano",
        "year",
        "mes",
        "month",
        "semana",
        "week",
        "trimestre",
        "quarter",
        "semestre",
        "epoca",
        "momento",
        "moment",
        "hora",
        "hour",
        "siglo",
        "seculo",
        "century",
        "decada",
        "decade",
        "temporada",
        "season",
        "periodo",
    )
)
_PLACE_NOUNS = frozenset(
    (
        "city",
        "town",
        "place",
        "region",
        "province",
        "state",
        "country",
        "location",
        "site",
        "continent",
        "ciudad",
        "pais",
        "lugar",
        "sitio",
        "provincia",
        "localidad",
        "continente",
        "cidade",
        "local",
        "regiao",
        "localidade",
        "barrio",
        "bairro",
        "neighborhood",
        "municipio",
        "island",
        "isla",
        "ilha",
    )
)
#: Nouns whose answer is a common-noun phrase or a clause, not a name: "¿Qué rasgo...", "What technique...".
_PHRASE_NOUNS = frozenset(
    (
        "rasgo",
        "caracteristica",
        "feature",
        "trait",
        "medida",
        "measure",
        "solucion",
        "solucao",
        "solution",
        "tecnica",
        "technique",
        "metodo",
        "method",
        "enfoque",
        "abordagem",
        "approach",
        "estrategia",
        "strategy",
        "ventaja",
        "vantagem",
        "advantage",
        "desventaja",
        "desvantagem",
        "disadvantage",
        "razon",
        "razao",
        "reason",
        "motivo",
        "motive",
        "causa",
        "cause",
        "objetivo",
        "goal",
        "objective",
        "proposito",
        "purpose",
        "finalidad",
        "finalidade",
        "fin",
        "aim",
        "manera",
        "forma",
        "modo",
        "way",
        "problema",
        "problem",
        "riesgo",
        "risco",
        "risk",
        "efecto",
        "efeito",
        "effect",
        "consecuencia",
        "consequencia",
        "consequence",
        "impacto",
        "impact",
        "papel",
        "rol",
        "role",
        "funcion",
        "funcao",
        "function",
        "idea",
        "ideia",
        "leccion",
        "licao",
        "lesson",
        "conclusion",
        "conclusao",
        "argumento",
        "argument",
        "frase",
        "phrase",
        "mensaje",
        "mensagem",
        "message",
        "opinion",
        "opiniao",
        "critica",
        "criticism",
        "diferencia",
        "diferenca",
        "difference",
        "relacion",
        "relacao",
        "relationship",
        "limitacion",
        "limitacao",
        "limitation",
        "factor",
        "fator",
        "obstaculo",
        "obstacle",
        "desafio",
        "challenge",
        "reto",
        "tarea",
        "tarefa",
        "task",
        "cambio",
        "mudanca",
        "change",
        "paso",
        "passo",
        "step",
        "accion",
        "acao",
        "action",
        "decision",
        "decisao",
        "regla",
        "regra",
        "rule",
        "requisito",
        "requirement",
        "condicion",
        "condicao",
        "condition",
        "beneficio",
        "benefit",
        "proceso",
        "processo",
        "process",
        "aspecto",
        "aspect",
        "tipo",
        "clase",
        "kind",
        "type",
        "sort",
        "ventajas",
        "leccion",
        "consejo",
        "conselho",
        "advice",
        "recomendacion",
        "recomendacao",
        "recommendation",
        "explicacion",
        "explicacao",
        "explanation",
        "senal",
        "sinal",
        "signal",
    )
)
_NAME_VERBS = re.compile(
    r"\b(llama|llaman|llamaba|llamo|llamado|llamada|denomina|denominan|denominado|conoce como|"
    r"conocido como|conocida como|chama|chamam|chamava|chamado|chamada|conhecido como|"
    r"conhecida como|called|named|known as|call|name)\b"
)
_SAY_OR_HAPPEN = re.compile(
    r"^\W*(?:did|does|do|has|have|had|will|is|was)?\b.*?\b(say|said|says|tell|told|happen|"
    r"happened|happens|mean|means|meant)\b|^\W*(ocurrio|ocurre|paso|pasa|sucedio|sucede|"
    r"aconteceu|acontece|ocorreu|ocorre|dijo|dice|dijeron|disse|diz|disseram|afirmo|afirmou|"
    r"significa|quiere decir|quer dizer)\b"
)
_MEASURE_ADJECTIVES = re.compile(
    r"^\W*(many|much|big|large|long|tall|high|fast|heavy|far|old|wide|deep|often|small|"
    r"short|low|quickly|soon|expensive|cheap|costly)\b"
)
_SCORE_VERBS = re.compile(
    r"\b(score|scored|scores|measure|measured|measures|weigh|weighs|weighed|reach|reached|"
    r"reaches|obtain|obtained|puntuo|pontuou|mide|mediu|pesa|pesou)\b"
)
_COST_WORDS = re.compile(
    r"\b(cost|costs|costed|charge|charges|charged|price|priced|pay|paid|sell for|sold for|"
    r"cuesta|costo|costaria|cuestan|cobra|cobran|cobro|vale|valen|pago|pagaron|pagar|precio|"
    r"custa|custam|custou|custaria|cobrou|cobram|pagou|pagaram|preco|custo|coste)\b"
)
_CURRENCY_ASKED = re.compile(
    r"\b(?:en|em|in)\s+(?:dolares|dollars|euros|yuan|yuanes|reais|reales|libras|pounds|"
    r"pesos|yenes|yen|usd|eur|brl|rmb)\b"
)
_PRICE_ANYWHERE = re.compile(r"\b(price|cost|priced|precio|coste|costo|tarifa|preco|custo)\b")
_QUANTITY_ANYWHERE = re.compile(
    r"\b(how many|how much|cuantos|cuantas|cuanto|cuanta|quantos|quantas|quanto|"
    r"quanta)\b"
)
#: An interrogative inside the question (accents tell "qué" from the relative "que").
_WH_MID = re.compile(r"(?<!\w)(qué|quê|cuál|cuáles|qual|quais|which|what)\s+(?P<rest>\w.*)$", re.S)
_CLITICS = frozenset("se lo la le les me te nos os".split())


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """What a question asks for: the answer ``kind``; ``head``, the noun after which/what/qué/qual
    ("chip" in "¿A qué chip...?"), or ""; ``plural`` when the question asks for several
    ("¿Qué bibliotecas...", "Which cards..."); ``phrase`` when the answer is a common-noun
    phrase or a clause rather than a name ("¿Qué técnica...", "What kind of task...": the
    kind is then OTHER, as for why and how); ``person`` for who/quién/quem."""

    kind: AnswerType
    head: str = ""
    plural: bool = False
    phrase: bool = False
    person: bool = False


def _clause(folded: str) -> str:
    """The interrogative clause: after the last "¿", else from the last comma-separated part
    that starts with a wh-word ("If not X, what did ..." -> "what did ..."), to the end."""
    if "¿" in folded:
        folded = folded[folded.rindex("¿") + 1 :]
    starts = [0] + [m.end() for m in re.finditer(r"[,;:]", folded)]
    for start in reversed(starts):
        if _LEAD.match(folded[start:]):
            return folded[start:].strip()
    return folded.strip()


def _is_plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _singulars(word: str) -> list[str]:
    """The word and its possible singulars in es/pt/en ("pontuacoes" -> "pontuacao")."""
    forms = [word]
    if word.endswith("oes") or word.endswith("aes"):
        forms.append(word[:-3] + "ao")
    if word.endswith("ones"):
        forms.append(word[:-2])
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s"):
        forms.append(word[:-1])
    return forms


def _noun_class(word: str, english: bool) -> AnswerType | str | None:
    for form in _singulars(word):
        if form in _QUANTITY_NOUNS:
            return AnswerType.QUANTITY
        if form in _PRICE_NOUNS:
            return AnswerType.PRICE
        if form in _DATE_NOUNS or (form == "data" and not english):  # pt "data" is a date
            return AnswerType.DATE
        if form in _PLACE_NOUNS:
            return AnswerType.PLACE
        if form in _PHRASE_NOUNS:
            return "phrase"
    return None


def _head_words(rest: str, english: bool, original_rest: str) -> list[str]:
    """The noun phrase right after which/what/qual: up to three words in English (where
    modifiers come first: "word accuracy"), the first word in es/pt ("precisión de palabra")."""
    tokens = re.findall(r"\w+", rest)
    while tokens and tokens[0] in _SKIP_BEFORE_HEAD:
        tokens.pop(0)
    if not tokens:
        return []
    if not english:
        return tokens[:1]
    phrase = []
    for tok in tokens[:4]:
        if tok in _EN_HEAD_STOP:
            break
        if tok in _EN_DETERMINERS:
            return phrase[:-1] if len(phrase) > 1 else phrase
        phrase.append(tok)
    if len(phrase) == 4:
        # no auxiliary or preposition closes the noun phrase ("Which Acme unit designs ..."):
        # its first lower-case word in the question is the likeliest noun
        lower = {w for w in re.findall(r"\w+", original_rest) if w[:1].islower()}
        lower = {fold_accents(w.casefold()) for w in lower}
        first = next((w for w in phrase if w in lower), phrase[0])
        return phrase[: phrase.index(first) + 1]
    return phrase


@lru_cache(maxsize=4096)
def question_shape(question: str) -> QuestionShape:
    """The answer type, head noun, number and phrase-ness a question asks for (es, pt, en)."""
    folded = fold_accents(question.casefold())
    original = fold_accents(question)
    clause = _clause(folded)
    lead = _LEAD.match(clause)
    if lead is None:
        if _QUANTITY_ANYWHERE.search(clause):
            if _COST_WORDS.search(clause) or _CURRENCY_ASKED.search(clause):
                return QuestionShape(AnswerType.PRICE)
            return QuestionShape(AnswerType.QUANTITY)
        mid = _WH_MID.search(question.casefold())  # "¿Y el barco zarpó con qué carga?"
        if mid is None:
            return QuestionShape(AnswerType.OTHER)
        return _which_shape(fold_accents(mid.group(1)), None, fold_accents(mid.group("rest")), original)
    wh, prep, rest = lead.group("wh"), lead.group("prep"), lead.group("rest")
    if wh in ("why", "porque") or (wh == "que" and prep in ("por", "para")):  # a reason or a purpose
        return QuestionShape(AnswerType.OTHER)
    if wh in ("cuantos", "cuantas", "cuanto", "cuanta", "quantos", "quantas", "quanto", "quanta"):
        if _COST_WORDS.search(rest) or _CURRENCY_ASKED.search(rest):
            return QuestionShape(AnswerType.PRICE)
        return QuestionShape(AnswerType.QUANTITY, plural=wh.endswith("s"))
    if wh == "how":
        measure = _MEASURE_ADJECTIVES.match(rest)
        if measure is None:
            return QuestionShape(AnswerType.NAME if _NAME_VERBS.search(rest) else AnswerType.OTHER)
        if measure.group(1) in ("expensive", "cheap", "costly") or (
            measure.group(1) == "much" and (_COST_WORDS.search(rest) or _CURRENCY_ASKED.search(rest))
        ):
            return QuestionShape(AnswerType.PRICE)
        if measure.group(1) in ("soon",):
            return QuestionShape(AnswerType.DATE)
        return QuestionShape(AnswerType.QUANTITY, plural=measure.group(1) == "many")
    if wh == "como":
        return QuestionShape(AnswerType.NAME if _NAME_VERBS.search(rest) else AnswerType.OTHER)
    if wh in ("when", "cuando", "quando"):
        return QuestionShape(AnswerType.DATE)
    if wh in ("where", "donde", "onde", "adonde", "aonde"):
        return QuestionShape(AnswerType.PLACE)
    if wh in ("who", "whom", "whose", "quien", "quienes", "quem"):
        return QuestionShape(AnswerType.NAME, plural=wh == "quienes", person=True)
    if lead.group("pronoun") and wh == "que":  # "o que", "lo que": a pronoun, no noun follows
        return QuestionShape(AnswerType.OTHER if _SAY_OR_HAPPEN.match(rest) else AnswerType.NAME)
    return _which_shape(wh, prep, rest, original)


def _which_shape(wh: str, prep: str | None, rest: str, original: str) -> QuestionShape:
    """which/what/qué/qual/cuál + a noun: the noun decides ("qué precisión" -> a quantity)."""
    english = wh in ("what", "which")
    if _SAY_OR_HAPPEN.search(rest) if english else _SAY_OR_HAPPEN.match(rest):
        return QuestionShape(AnswerType.OTHER)
    original_rest = original[-len(rest) :] if rest else ""
    bare = " ".join(w for w in re.findall(r"\w+", rest) if w not in _SKIP_BEFORE_HEAD)
    kind_of = _KIND_OF.match(bare)
    if kind_of:  # "¿Qué tipo de clústeres...?", "What kind of kernels...": a category, in common nouns
        head = _head_words(bare[kind_of.end() :], english, "")
        return QuestionShape(
            AnswerType.OTHER, head[-1] if head else "", bool(head) and _is_plural(head[-1]), phrase=True
        )
    head = _head_words(rest, english, original_rest)
    if _PART_OF.match(bare):
        return QuestionShape(AnswerType.OTHER, head[0] if head else "", False, phrase=True)
    if english and not head and _SCORE_VERBS.search(rest):  # "What did X score on Y?"
        return QuestionShape(AnswerType.QUANTITY)
    if not english and head and head[0] in _CLITICS:  # "¿Para qué se usa?", "¿En qué se diferencia?"
        return QuestionShape(AnswerType.OTHER if prep else AnswerType.NAME)
    plural = wh in ("quais", "cuales") or (bool(head) and _is_plural(head[-1]))
    for word in head:
        found = _noun_class(word, english)
        if isinstance(found, AnswerType):
            return QuestionShape(found, word, plural)
        if found == "phrase":
            return QuestionShape(AnswerType.OTHER, word, plural, phrase=True)
    if not head and _PRICE_ANYWHERE.search(rest):
        return QuestionShape(AnswerType.PRICE)
    return QuestionShape(AnswerType.NAME, head[-1] if head else "", plural)


def expected_type(question: str) -> AnswerType:
    """The answer type a question asks for, from its interrogative phrase in es, pt or en."""
    return question_shape(question).kind


# --- facts in a text -------------------------------------------------------------------
# Matched on the accent-folded text (same length as the text for Latin scripts).

_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
    r"diciembre|janeiro|fevereiro|marco|maio|junho|julho|setembro|outubro|novembro|dezembro"
)
_MONTH_ABBREVIATIONS = r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|ene|abr|ago|dic|fev|mai|set|out|dez"
_YEAR = r"(?:19|20)\d{2}"
_ORDINALS = (
    r"primer|primero|primera|segundo|segunda|tercer|tercero|tercera|cuarto|cuarta|primeiro|primeira|"
    r"terceiro|terceira|quarto|quarta|ultimo|ultima|first|second|third|fourth|last|final|"
    r"1st|2nd|3rd|4th|1er|1o|2o|3o|4o|1a|2a|3a|4a"
)
_PERIODS = r"trimestre|semestre|cuatrimestre|quadrimestre|bimestre|quarter|half|mitad|metade"
_SEASONS = r"spring|summer|autumn|fall|winter|primavera|verano|otono|invierno|verao|outono|inverno"
_PARTS = (
    r"principios|comienzos|inicios|mediados|finales|fines|inicio|comeco|meados|final|fim|early|mid|late|"
    r"the end|the start|the beginning|the middle"
)
#: Words after which a bare month ("septiembre") or an old year ("en 1887") is a date.
_DATE_CONTEXT = (
    "en",
    "in",
    "em",
    "de",
    "del",
    "do",
    "desde",
    "since",
    "hasta",
    "until",
    "ate",
    "during",
    "durante",
    "of",
    "this",
    "next",
    "last",
    "este",
    "proximo",
    "pasado",
    "passado",
    "from",
    "by",
    "around",
    "circa",
    "year",
    "ano",
    "early",
    "late",
    "mid",
    "por",
    "before",
    "after",
    "antes",
    "depois",
    "despues",
    "entre",
)


def _after_word(alternatives: tuple[str, ...]) -> str:
    return "(?:" + "|".join(rf"(?<=\b{w} )" for w in alternatives) + ")"


_DATE_PATTERN = re.compile(
    "|".join(
        (
            rf"\b{_YEAR}-\d{{2}}-\d{{2}}\b",  # ISO
            rf"\b\d{{1,2}}/\d{{1,2}}/(?:{_YEAR}|\d{{2}})\b",
            rf"\b\d{{1,2}}\s+(?:{_MONTH_ABBREVIATIONS})\.?\s+{_YEAR}\b",  # 19 set 2026 (pt)
            rf"\b(?:{_MONTH_ABBREVIATIONS})\.\s+\d{{1,2}},\s+{_YEAR}\b",  # Sept. 5, 2026
            rf"\b(?:\d{{1,2}}(?:º|o|er)?\s+(?:de\s+)?)?(?:{_MONTHS})(?:\s+(?:de\s+|del\s+|of\s+)?{_YEAR}|\s+\d{{1,2}}"
            rf"(?:st|nd|rd|th)?(?:,\s+{_YEAR})?)\b",  # 31 de julio de 2026, July 31, 2026, enero de 2026
            rf"\b\d{{1,2}}(?:º|o|er)?\s+(?:de\s+)?(?:{_MONTHS})\b",  # 31 de julio
            rf"\b(?:{_ORDINALS})\s+(?:{_PERIODS})(?:\s+(?:de|del|do|of|of\s+the)\s+(?:ano\s+|year\s+)?{_YEAR}|\s+{_YEAR})?\b",
            rf"\b(?:{_ORDINALS})\s+(?:{_PERIODS})\b",
            rf"\b(?:q[1-4]|[1-4]q|h[12]|[1-4]t|[12]s)\s*(?:de\s+|of\s+)?(?:{_YEAR}|'\d{{2}})\b",  # Q1 2027
            rf"\b{_YEAR}\s*(?:q[1-4]|h[12])\b",
            rf"\b(?:{_SEASONS})\s+(?:de\s+|del\s+|of\s+)?{_YEAR}\b",
            rf"\b(?:{_PARTS})[\s-]+(?:de\s+|del\s+|of\s+|do\s+)?(?:ano\s+|year\s+)?{_YEAR}\b",  # finales de 2026, mid-2026
            r"\b(?:19|20)\d0s\b",  # the 1990s
            rf"{_after_word(_DATE_CONTEXT)}(?:{_MONTHS})\b",  # en septiembre, in May (not "it may")
            rf"{_after_word(_DATE_CONTEXT)}1[0-8]\d{{2}}\b(?![.,]\d)",  # en 1887
            rf"\b{_YEAR}\b(?![.,]\d)",
        )
    ),
    re.I,
)

_NUMBER = r"\d+(?:[.,]\d+)*"
_SCALE = (
    r"(?:[\s-]+(?:mil\s+millones|mil\s+milhoes|millones|millon|milhoes|milhao|bilhoes|bilhao|billones|"
    r"billon|trilhoes|trilhao|mil|billion|billions|million|millions|thousand|trillion|bn|mn)\b)?"
)
_UNITS = (
    r"%|por\s+ciento|por\s+cento|percent|per\s+cent|pp|puntos\s+porcentuales|pontos\s+percentuais|"
    r"percentage\s+points|[kmgtpe]i?b|[kmgt]?bps|[kmgt]b/s|[kmgt]?hz|[kmgt]?wh?|nm|mm|cm|km|m|kg|mg|g|t|"
    r"toneladas|tons|tonnes|litros|liters|litres|ml|°c|ºc|°f|grados|degrees|graus|"
    r"(?:peta|tera|exa|giga)?flops|[tpeg]flops|tops|tokens|bits|bytes|x|×|veces|vezes|times|"
    r"anos?|years?|mes|meses|months?|semanas?|weeks?|dias?|days?|horas?|hours?|minutos?|minutes?|min|"
    r"segundos?|seconds?|ms|s|h|km/h|mph|metros?|meters?|metres?|kilometros?|kilometers?|millas?|miles?|pies|"
    r"feet|foot|hectareas?|hectares?|tonelada|ton|tonne|litro|liter|litre|grado|degree|grau"
)
#: A unit's second half: "metros cúbicos por segundo", "toneladas al año", "km per hour".
_PER = (
    r"(?:\s+(?:cubicos|cuadrados|quadrados|cubic|square))?"
    r"(?:\s*(?:/|por|per|al|ao|a|an)\s*(?:segundo|second|s|hora|hour|h|dia|day|semana|week|mes|month|"
    r"ano|year|habitante|inhabitant|capita|persona|pessoa|person|hectarea|hectare|ha|km|kilometro|kilometer|"
    r"litro|liter|kwh|unidad|unidade|unit)\b)?"
)
_NUMBER_WORDS = (
    r"un|una|uno|um|uma|one|dos|duas|two|tres|three|cuatro|quatro|four|cinco|five|seis|six|siete|sete|"
    r"seven|ocho|oito|eight|nueve|nove|nine|diez|dez|ten|once|onze|eleven|doce|doze|twelve"
)
_TIME_UNITS = (
    r"anos|years|meses|months|semanas|weeks|dias|days|horas|hours|minutos|minutes|segundos|seconds|"
    r"trimestres|quarters|semestres|decadas|decades|generaciones|geracoes|generations|veces|vezes|times"
)
_ENTITY_PATTERNS: dict[AnswerType, re.Pattern[str]] = {
    AnswerType.PRICE: re.compile(
        rf"(?:us\$|r\$|\$|€|£|¥|\busd|\beur|\bbrl|\brmb)\s*{_NUMBER}{_SCALE}"
        rf"|(?<![\w.,\-]){_NUMBER}{_SCALE}\s*(?:de\s+)?(?:yuan|yuanes|yenes|yen|dolares|dollars|euros|reais|reales|"
        rf"libras|pounds|pesos|usd|eur|brl|rmb|centavos|cents|centimos)\b",
        re.I,
    ),
    AnswerType.DATE: _DATE_PATTERN,
    AnswerType.QUANTITY: re.compile(
        rf"(?<![\w.,\-]){_NUMBER}{_SCALE}(?:\s*(?:{_UNITS})(?![\w/]){_PER})?(?![^\W_])"  # not "X5" nor "5X"
        rf"|\b(?:{_NUMBER_WORDS})\s+(?:{_TIME_UNITS})\b",
        re.I,
    ),
    AnswerType.PLACE: re.compile(  # a capitalised name after a locative preposition, not a month
        rf"(?:(?<=\b[Ii]n )|(?<=\b[Aa]t )|(?<=\b[Ee]n )|(?<=\b[Ee]m )|(?<=\b[Nn][oa] )|(?<=\b[Nn][oa]s )|(?<=\bfrom )|(?<=\bdesde ))"
        rf"(?!(?i:{_MONTHS})\b)[A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)*"
    ),
}

_NAME_TOKEN = re.compile(r"\w+(?:[-./&+]\w+)*\+*")
#: Acronyms that are common nouns ("IA", "API"), not the name of something.
_COMMON_ACRONYMS = frozenset("ia ai api apis ceo cto cfo coo ti it tv pc pib gdp ong ngo ok faq pdf url www".split())
_NAME_CONNECTORS = frozenset("de del do da dos das of".split())
_MONTH_WORDS = frozenset(_MONTHS.split("|"))
_SENTENCE_START = ".!?:¿¡\"'«“‘•*#\n"
_CLAUSE_START = _SENTENCE_START + "(;—–-["


def _is_name_token(token: str) -> bool:
    return any(c.isupper() for c in token) and any(c.isalpha() for c in token)


def _name_spans(text: str) -> list[tuple[int, int]]:
    """Names: runs of capitalised or mixed-case tokens ("Galaxy Tab 3.5", "cuDNN", "T-Rex"),
    numbers continuing a name ("Falcon 9"), "X de Y" for a one-word X ("Banco de
    Portugal"); leading function words dropped ("El Nexus 7"); a lone title-case word starting a
    sentence, a month, a common acronym ("IA") and a single letter are not names."""
    stop = stopwords("en")
    tokens = [(m.start(), m.end(), m.group(0)) for m in _NAME_TOKEN.finditer(text)]
    groups: list[list[tuple[int, int, str]]] = []
    current: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        a, b, tok = tokens[i]
        if current:
            gap = text[current[-1][1] : a]
            joined = gap in (" ", "\u00a0") and (_is_name_token(tok) or tok[0].isdigit())
            if not joined and gap == "'" and tok[:1].isupper():
                joined = True
            if (
                not joined
                and gap == " "
                and tok.lower() in _NAME_CONNECTORS
                and len(current) == 1
                and current[0][2].isalpha()
                and current[0][2][:1].isupper()
                and i + 1 < len(tokens)
                and text[b : tokens[i + 1][0]] == " "
                and tokens[i + 1][2][:1].isupper()
                and tokens[i + 1][2].isalpha()
            ):
                current.append((a, b, tok))
                i += 1
                continue
            if joined:
                current.append((a, b, tok))
                i += 1
                continue
            groups.append(current)
            current = []
        if _is_name_token(tok):
            current = [(a, b, tok)]
        i += 1
    if current:
        groups.append(current)
    spans = []
    for group in groups:
        before = text[: group[0][0]].rstrip()
        if not before or before[-1] in _CLAUSE_START:  # "El Nexus 7", but "in The Silent Valley"
            while group and fold_accents(group[0][2].lower()) in stop:
                group = group[1:]
        while len(group) > 1 and group[0][2].lower() in _COMMON_ACRONYMS:  # "IA Norlax"
            group = group[1:]
        while group and (group[-1][2].lower() in _NAME_CONNECTORS or fold_accents(group[-1][2].lower()) in stop):
            group = group[:-1]
        if not group or not _is_name_token(group[0][2]):
            continue
        first = group[0][2]
        if fold_accents(first.lower()) in _MONTH_WORDS:
            continue
        if len(group) == 1:
            if len(first) == 1 or first.lower() in _COMMON_ACRONYMS:
                continue
            before = text[: group[0][0]].rstrip()
            title_word = first[:1].isupper() and first[1:].islower() and first.isalpha()
            if title_word and (not before or before[-1] in _SENTENCE_START):
                continue
        spans.append((group[0][0], group[-1][1]))
    return spans


def _raw_entities(source: str, kind: AnswerType) -> list[tuple[int, int]]:
    if kind is AnswerType.NAME:
        return _name_spans(source)
    pattern = _ENTITY_PATTERNS.get(kind)
    if pattern is None:
        return []
    found = [m.span() for m in pattern.finditer(source)]
    if kind is AnswerType.QUANTITY:  # not a year, not a model number ("Falcon 9")
        taken = _raw_entities(source, AnswerType.DATE) + _raw_entities(source, AnswerType.PRICE)
        names = [s for s in _name_spans(source) if " " in source[s[0] : s[1]]]
        found = [
            (a, b)
            for a, b in found
            if not any(da < b and a < db for da, db in taken) and not any(na < a and b <= nb for na, nb in names)
        ]
    return found


def find_entities(text: str, kind: AnswerType, avoid: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """Offsets of the phrases of ``kind`` in ``text`` whose words are not all in ``avoid``.

    ``avoid`` holds the question's own (folded, lower-case) words: the key phrase of an
    answer is what the question did not already say. Quantities exclude dates, years,
    prices and the numbers of model names.
    """
    if kind is AnswerType.OTHER:
        return []
    folded = fold_accents(text)
    source = folded if len(folded) == len(text) else text
    found = []
    for a, b in _raw_entities(source, kind):
        if kind is AnswerType.DATE and text[a:b] in ("may", "marco"):  # a verb and a frame, not May and março
            continue
        listed = [fold_accents(w) for w in words(source[a:b])]
        found_words = set(listed)
        if not found_words or found_words <= avoid:
            continue
        if kind is AnswerType.NAME and len(listed) > 1 and listed[-1] in avoid:
            continue  # "Airbus A320" when the question says "A320": the question's own thing
        found.append((a, b))
    return found


def find_entity(text: str, kind: AnswerType, avoid: frozenset[str] = frozenset()) -> tuple[int, int] | None:
    """The first span of :func:`find_entities`, or None."""
    spans = find_entities(text, kind, avoid)
    return spans[0] if spans else None


_OLD_YEAR = re.compile(r"1[0-8]\d{2}")


def type_match(text: str, lang: str, kind: AnswerType, avoid: frozenset[str], qterms: set[str]) -> float:
    """1.0 when a fact of ``kind`` sits next to a question term ("505 mil millones de
    parámetros"), 0.6 when the fact is present elsewhere, 0 when absent."""
    if kind is AnswerType.OTHER:
        return 0.0
    spans = [s for s in find_entities(text, kind, avoid) if not _OLD_YEAR.fullmatch(text[s[0] : s[1]])]
    if not spans:
        return 0.0
    for a, b in spans:
        near = set(terms(text[max(0, a - 40) : a] + " " + text[b : b + 40], lang))
        if near & qterms:
            return 1.0
    return 0.6


def highlight_in(answer: str, kind: AnswerType, question_words: frozenset[str]) -> tuple[int, int] | None:
    """The key phrase to highlight inside an answer: its fact of the expected kind."""
    kinds = [kind] if kind is not AnswerType.OTHER else []
    kinds += [
        k
        for k in (AnswerType.PRICE, AnswerType.DATE, AnswerType.QUANTITY, AnswerType.PLACE, AnswerType.NAME)
        if k not in kinds
    ]
    for k in kinds:
        span = find_entity(answer, k, question_words)
        if span is not None:
            return span
    return None


# --- the short answer ------------------------------------------------------------------

#: Characters on each side of a fact in which a question term counts as "next to" it.
NEAR_CHARS = 40
#: Content words on each side of a fact searched for the question's terms.
NEAR_WORDS = 8
#: Punctuation between a fact and a question term counts as this many words (a comma
#: between "2028" and "980" puts them in different list items).
BOUNDARY_WORDS = 2
#: A name is the short answer only with at least this much support from the question's
#: terms around it (one term within two words, or the question's noun next to it): a
#: capitalised word with nothing of the question near it is more often wrong than right.
MIN_NAME_SUPPORT = 1 / 3
#: Support for a name right next to the question's noun ("Zentra, the bakery" for "which bakery"),
#: or for a number in the unit or currency the question names ("5 teraFLOPS", "US$ 43" for
#: "in dollars"): these say more than nearness, so they outweigh a question term at distance 0.
HEAD_BONUS = 2.0
#: Terms of the previous turn (a follow-up's query) weigh this much against the question's own.
PREVIOUS_TURN_WEIGHT = 0.5

_TEXT_TOKEN = re.compile(r"(?P<w>\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)?|\d+)|(?P<p>[,;:()\[\]—–]|\s-\s)")
_LIST_GAP = re.compile(r"^\s*(?:,\s*(?:(?:and|y|e|or|o|ou)\s+)?|(?:and|y|e|or|o|ou|&)\s+|/\s*)$", re.I)


def _text_tokens(text: str, lang: str) -> list[tuple[int, int, str | None]]:
    """(start, end, term) per word (term None for a stopword) and (start, end, "") per punctuation mark."""
    out: list[tuple[int, int, str | None]] = []
    for m in _TEXT_TOKEN.finditer(text):
        if m.group("w") is not None:
            found = terms(m.group("w"), lang)
            out.append((m.start(), m.end(), found[0] if found else None))
        else:
            out.append((m.start(), m.end(), ""))
    return out


def _support(tokens: list[tuple[int, int, str | None]], span: tuple[int, int], weights: dict[str, float]) -> float:
    """Sum over question terms of weight / (1 + distance) of the term's nearest occurrence
    outside ``span``, distance in content words (punctuation counts BOUNDARY_WORDS)."""
    a, b = span
    best: dict[str, float] = {}
    left = [t for t in tokens if t[1] <= a][::-1]
    right = [t for t in tokens if t[0] >= b]
    for side in (left, right):
        distance = 0
        for _, _, term in side:
            if distance > NEAR_WORDS:
                break
            if term == "":
                distance += BOUNDARY_WORDS
                continue
            if term is None:
                continue
            if term in weights:
                best[term] = max(best.get(term, 0.0), weights[term] / (1 + distance))
            distance += 1
    return sum(best.values())


def _next_word_term(tokens: list[tuple[int, int, str | None]], end: int) -> str | None:
    """The term of the first content word after ``end`` (stopwords such as "de" skipped),
    None when punctuation comes first: the noun a number counts ("200 mil coches")."""
    for _, _, term in (t for t in tokens if t[0] >= end):
        if term == "":
            return None
        if term is not None:
            return term
    return None


_OF = frozenset({"de", "del", "do", "da", "dos", "das", "of"})
_ARTICLES = frozenset("the a an el la los las lo o os as un una unos unas um uma uns umas".split())


def _next_to_head(answer: str, tokens: list[tuple[int, int, str | None]], span: tuple[int, int], head: str) -> bool:
    """Whether the question's noun stands right before the fact, maybe with a "de X"
    complement between ("su filial Norlax", "la unidad de IA Norlax", "el marco de trabajo
    Kivy"), or right after it as an apposition ("Zentra, the bakery", "Goya y Murillo — los pintores")."""
    a, b = span
    left = [t for t in tokens if t[1] <= a][::-1]
    for i, (_, _, term) in enumerate(left[:6]):
        if term == head:
            return True
        if term == "":
            break
        if term is not None:  # a content word only as the complement of "de"/"of"
            nxt = left[i + 1] if i + 1 < len(left) else None
            if nxt is None or fold_accents(answer[nxt[0] : nxt[1]].lower()) not in _OF:
                break
    after = [t for t in tokens if t[0] >= b][:4]
    if not after or after[0][2] != "":  # an apposition follows a comma or a dash
        return False
    for s, e, term in after[1:]:
        if term == head:
            return True
        if term is not None or fold_accents(answer[s:e].lower()) not in _ARTICLES:
            return False
    return False


def _lists(answer: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of two or more facts joined by commas or and/y/e/or ("GitLab, Zenodo e Figshare")."""
    runs = []
    ordered = sorted(spans)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and _LIST_GAP.match(answer[ordered[j][1] : ordered[j + 1][0]]):
            j += 1
        if j > i:
            runs.append((ordered[i][0], ordered[j][1]))
        i = j + 1
    return runs


#: Currency signs and the words a question uses for them ("em dólares" asks for "US$ 43").
_CURRENCY_WORDS = (
    ("us$", "dolares dollars dolar dollar usd"),
    ("r$", "reais real brl"),
    ("$", "dolares dollars dolar dollar usd"),
    ("€", "euros euro eur"),
    ("£", "libras pounds libra pound gbp"),
    ("¥", "yuan yenes yen rmb"),
)


def _currency_terms(text: str, lang: str) -> set[str]:
    for sign, names in _CURRENCY_WORDS:
        if sign in text.lower():
            return set(terms(names, lang)) | set(terms(names, "en"))
    return set()


def short_answer_in(
    answer: str,
    lang: str,
    kind: AnswerType,
    question_words: frozenset[str],
    question_terms: set[str],
    question: str | None = None,
) -> tuple[int, int] | None:
    """Offsets of the short answer inside ``answer``: the fact of the expected kind that the
    question's terms support most (nearest, on either side, within the same list item), or None.

    ``question`` (the question alone, when ``question_terms`` also hold a previous turn's)
    lets its own terms weigh more and tells its head noun and number: the fact next to
    the question's noun wins ("su filial Norlax" for "qué filial"), a number counting
    the question's noun wins ("200 mil coches" for "cuántos coches"), a unit or currency the
    question names wins ("5 teraFLOPS" for "how many teraFLOPS", "US$ 43" for "in
    dollars"), and a question asking for several gets a coordinated list whole ("Goya, Velázquez y Murillo").

    None when the question asks for no kind of fact (why, how, "¿Qué técnica...?") or the
    sentence holds none of that kind, or, for a name, none the question supports: a
    capitalised word with nothing of the question near it is more often wrong than right.
    """
    if kind is AnswerType.OTHER:
        return None
    shape = question_shape(question) if question else QuestionShape(kind)
    if question and kind in (AnswerType.QUANTITY, AnswerType.PRICE):
        # "X5" in the question does not make "5 teraFLOPS" a number it said
        glued = {fold_accents(w) for w in re.findall(r"\d+(?=[^\W\d_])|(?<=[^\W\d_])\d+", question.casefold())}
        alone = {fold_accents(m) for m in re.findall(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])", question)}
        question_words = frozenset(w for w in question_words if w not in glued - alone)
    spans = find_entities(answer, kind, question_words)
    if not spans:
        return None
    own = set(terms(question, lang)) if question else set(question_terms)
    weights = {t: (1.0 if t in own else PREVIOUS_TURN_WEIGHT) for t in question_terms | own}
    tokens = _text_tokens(answer, lang)
    head_terms = terms(shape.head, lang) if shape.head else []
    head = head_terms[0] if head_terms else None
    candidates = list(spans)
    if kind in (AnswerType.NAME, AnswerType.PLACE) and shape.plural:
        candidates += _lists(answer, spans)

    def score(span: tuple[int, int]) -> float:
        value = _support(tokens, span, weights)
        inside = {t for s, e, t in tokens if s >= span[0] and e <= span[1] and t}
        if kind is AnswerType.PRICE:
            inside |= _currency_terms(answer[span[0] : span[1]], lang)
        if inside & own:  # the unit the question names ("5 teraFLOPS", "en dólares"), a maker ("Airbus A320")
            value += HEAD_BONUS if kind in (AnswerType.QUANTITY, AnswerType.PRICE) else 1.0
        if kind in (AnswerType.QUANTITY, AnswerType.PRICE):
            counted = _next_word_term(tokens, span[1])
            if counted is not None and counted in own:  # "200 mil coches" for "cuántos coches"
                value += 1.0
        if head is not None and kind is AnswerType.NAME and _next_to_head(answer, tokens, span, head):
            value += HEAD_BONUS
        if shape.plural and span not in spans:
            value += 0.5
        return value

    scored = [(score(s), -s[0], s[1], s) for s in candidates]
    best_score, _, _, best = max(scored)
    if kind is AnswerType.NAME and not shape.person and best_score < MIN_NAME_SUPPORT:
        return None
    return best
