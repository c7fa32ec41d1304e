"""Every user-facing string of the UI and the terminal, in es, pt and en: one place to translate."""

from __future__ import annotations

LABELS = {
    "es": {"sources": "Fuentes", "closest": "Pasajes más cercanos (no contienen la respuesta)",
           "confidence": "confianza", "chars": "caracteres", "other_lang": "otro idioma",
           "not_found": "No encontré esto en los documentos.", "page": "página", "score": "puntuación",
           "see_closest": "Abajo están los pasajes más cercanos.", "context": "Ver en su contexto",
           "ask": "Preguntar", "placeholder": "Escribe una pregunta…", "clear": "Borrar chat",
           "passages": "Pasajes", "language": "Idioma de los pasajes", "show_confidence": "Mostrar confianza",
           "error": "Error", "section": "sección"},
    "pt": {"sources": "Fontes", "closest": "Passagens mais próximas (não contêm a resposta)",
           "confidence": "confiança", "chars": "caracteres", "other_lang": "outro idioma",
           "not_found": "Não encontrei isso nos documentos.", "page": "página", "score": "pontuação",
           "see_closest": "Abaixo estão as passagens mais próximas.", "context": "Ver no contexto",
           "ask": "Perguntar", "placeholder": "Digite uma pergunta…", "clear": "Limpar conversa",
           "passages": "Passagens", "language": "Idioma das passagens", "show_confidence": "Mostrar confiança",
           "error": "Erro", "section": "seção"},
    "en": {"sources": "Sources", "closest": "Closest passages (they do not contain the answer)",
           "confidence": "confidence", "chars": "characters", "other_lang": "other language",
           "not_found": "I couldn't find this in the documents.", "page": "page", "score": "score",
           "see_closest": "The closest passages are listed below.", "context": "Show in context",
           "ask": "Ask", "placeholder": "Ask a question…", "clear": "Clear chat",
           "passages": "Passages", "language": "Passage language", "show_confidence": "Show confidence",
           "error": "Error", "section": "section"},
}


def labels(lang: str) -> dict[str, str]:
    """UI strings in ``lang``, English when the language has none."""
    return LABELS.get(lang, LABELS["en"])


def not_found(lang: str) -> str:
    """"I couldn't find this in the documents", in ``lang`` (English when unknown)."""
    return labels(lang)["not_found"]
