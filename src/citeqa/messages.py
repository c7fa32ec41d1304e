"""Every user-facing string of the UI and the terminal, in es, pt and en: one place to translate."""

from __future__ import annotations

LABELS = {
    "es": {
        "sources": "Fuentes",
        "closest": "Pasajes más cercanos (no contienen la respuesta)",
        "confidence": "confianza",
        "chars": "caracteres",
        "other_lang": "otro idioma",
        "not_found": "No encontré esto en los documentos.",
        "page": "página",
        "score": "puntuación",
        "see_closest": "Abajo están los pasajes más cercanos.",
        "context": "Ver en su contexto",
        "ask": "Preguntar",
        "placeholder": "Escribe una pregunta…",
        "clear": "Borrar chat",
        "passages": "Pasajes",
        "language": "Idioma de los pasajes",
        "show_confidence": "Mostrar confianza",
        "error": "Error",
        "section": "sección",
    },
    "pt": {
        "sources": "Fontes",
        "closest": "Passagens mais próximas (não contêm a resposta)",
        "confidence": "confiança",
        "chars": "caracteres",
        "other_lang": "outro idioma",
        "not_found": "Não encontrei isso nos documentos.",
        "page": "página",
        "score": "pontuação",
        "see_closest": "Abaixo estão as passagens mais próximas.",
        "context": "Ver no contexto",
        "ask": "Perguntar",
        "placeholder": "Digite uma pergunta…",
        "clear": "Limpar conversa",
        "passages": "Passagens",
        "language": "Idioma das passagens",
        "show_confidence": "Mostrar confiança",
        "error": "Erro",
        "section": "seção",
    },
    "en": {
        "sources": "Sources",
        "closest": "Closest passages (they do not contain the answer)",
        "confidence": "confidence",
        "chars": "characters",
        "other_lang": "other language",
        "not_found": "I couldn't find this in the documents.",
        "page": "page",
        "score": "score",
        "see_closest": "The closest passages are listed below.",
        "context": "Show in context",
        "ask": "Ask",
        "placeholder": "Ask a question…",
        "clear": "Clear chat",
        "passages": "Passages",
        "language": "Passage language",
        "show_confidence": "Show confidence",
        "error": "Error",
        "section": "section",
    },
}


def labels(lang: str) -> dict[str, str]:
    """UI strings in ``lang``, English when the language has none."""
    return LABELS.get(lang, LABELS["en"])


def not_found(lang: str) -> str:
    """ "I couldn't find this in the documents", in ``lang`` (English when unknown)."""
    return labels(lang)["not_found"]


#: Claim checking (:mod:`citeqa.answer.claims`): verdict names and the one-line message.
CLAIM_LABELS = {
    "es": {
        "supported": "Respaldada",
        "conflicting": "En conflicto",
        "not_found": "No encontrada",
        "supports": "respalda",
        "conflicts": "contradice",
        "related": "pasaje cercano",
        "supported_msg": "Los documentos respaldan esta afirmación.",
        "supported_value": "Los documentos respaldan esta afirmación: dicen «{doc}».",
        "conflicting_msg": "Los documentos dicen «{doc}», no «{claim}».",
        "not_found_msg": "No encontré nada en los documentos que hable de esta afirmación.",
        "claim": "Afirmación",
        "evidence": "Pasajes",
        "claim_value": "la afirmación dice",
        "doc_value": "el documento dice",
        "also_in": "también en la traducción",
    },
    "pt": {
        "supported": "Confirmada",
        "conflicting": "Em conflito",
        "not_found": "Não encontrada",
        "supports": "confirma",
        "conflicts": "contradiz",
        "related": "passagem próxima",
        "supported_msg": "Os documentos confirmam esta afirmação.",
        "supported_value": "Os documentos confirmam esta afirmação: dizem «{doc}».",
        "conflicting_msg": "Os documentos dizem «{doc}», não «{claim}».",
        "not_found_msg": "Não encontrei nada nos documentos que fale desta afirmação.",
        "claim": "Afirmação",
        "evidence": "Passagens",
        "claim_value": "a afirmação diz",
        "doc_value": "o documento diz",
        "also_in": "também na tradução",
    },
    "en": {
        "supported": "Supported",
        "conflicting": "Conflicting",
        "not_found": "Not found",
        "supports": "supports",
        "conflicts": "conflicts",
        "related": "closest passage",
        "supported_msg": "The documents support this claim.",
        "supported_value": "The documents support this claim: they say “{doc}”.",
        "conflicting_msg": "The documents say “{doc}”, not “{claim}”.",
        "not_found_msg": "Nothing in the documents speaks to this claim.",
        "claim": "Claim",
        "evidence": "Passages",
        "claim_value": "the claim says",
        "doc_value": "the document says",
        "also_in": "also in the translation",
    },
}


def claim_labels(lang: str) -> dict[str, str]:
    """Claim-checking strings in ``lang``, English when the language has none."""
    return CLAIM_LABELS.get(lang, CLAIM_LABELS["en"])


def claim_message(verdict: str, lang: str, claim_value: str | None = None, doc_value: str | None = None) -> str:
    """The verdict as one sentence in ``lang``; a conflict names both values."""
    lab = claim_labels(lang)
    if verdict == "conflicting" and claim_value and doc_value:
        return lab["conflicting_msg"].format(doc=doc_value, claim=claim_value)
    if verdict == "supported":  # the value when it is written out ("744 billion"), not an ellipsis ("the third")
        shown = doc_value if doc_value and any(c.isdigit() for c in doc_value) else None
        return lab["supported_value"].format(doc=shown) if shown else lab["supported_msg"]
    if verdict == "conflicting":
        return lab["conflicting_msg"].format(doc="?", claim="?")
    return lab["not_found_msg"]


#: The chat's claim mode, citation tools, document viewer and downloads (es/pt/en).
EVIDENCE_LABELS = {
    "es": {
        "mode": "Modo",
        "mode_ask": "Preguntar",
        "mode_check": "Comprobar una afirmación",
        "mode_auto": "Auto",
        "copy": "Copiar cita",
        "bibtex": "BibTeX",
        "csl": "CSL-JSON",
        "formats": "Formatos de la cita",
        "open": "Abrir el documento",
        "close": "Cerrar",
        "copied": "Copiado",
        "download_md": "Descargar conversación (Markdown)",
        "download_json": "Descargar conversación (JSON)",
        "check_placeholder": "Escribe una afirmación para comprobarla…",
    },
    "pt": {
        "mode": "Modo",
        "mode_ask": "Perguntar",
        "mode_check": "Verificar uma afirmação",
        "mode_auto": "Auto",
        "copy": "Copiar citação",
        "bibtex": "BibTeX",
        "csl": "CSL-JSON",
        "formats": "Formatos da citação",
        "open": "Abrir o documento",
        "close": "Fechar",
        "copied": "Copiado",
        "download_md": "Baixar conversa (Markdown)",
        "download_json": "Baixar conversa (JSON)",
        "check_placeholder": "Digite uma afirmação para verificar…",
    },
    "en": {
        "mode": "Mode",
        "mode_ask": "Ask",
        "mode_check": "Check a claim",
        "mode_auto": "Auto",
        "copy": "Copy citation",
        "bibtex": "BibTeX",
        "csl": "CSL-JSON",
        "formats": "Citation formats",
        "open": "Open document",
        "close": "Close",
        "copied": "Copied",
        "download_md": "Download conversation (Markdown)",
        "download_json": "Download conversation (JSON)",
        "check_placeholder": "Type a claim to check…",
    },
}


def evidence_labels(lang: str) -> dict[str, str]:
    """Strings of the claim mode, citation tools, viewer and downloads in ``lang`` (English by default)."""
    return EVIDENCE_LABELS.get(lang, EVIDENCE_LABELS["en"])


#: The Evaluate tab's strings. The tab is in English, as the other static labels of the page
#: are (only the chat's labels follow the question's language).
EVALUATE = {
    "tab": "Evaluate",
    "intro": "Run `citeqa eval` from the page: the live index answers every question of a QA file "
    "(JSONL or CSV, one question per line, as `citeqa eval` takes it) and the answers are graded. "
    "The run goes on in the background, one at a time for the whole server; the chat keeps "
    "answering meanwhile.",
    "upload": "QA file to upload (.jsonl or .csv)",
    "shipped": "…or a QA file shipped in eval/",
    "no_shipped": "(no QA files found)",
    "start": "Run evaluation",
    "cancel": "Cancel",
    "status": "Status",
    "no_file": "Upload a QA file or choose one from the list first.",
    "busy": "An evaluation is already running ({source}, {done} of {total} questions); wait for it to finish "
    "or cancel it.",
    "started": "Evaluating {source}: {total} questions.",
    "running": "Evaluating {source}: {done} of {total} questions.",
    "cancelling": "Cancelling {source} after the current question…",
    "nothing_running": "No evaluation is running.",
    "done": "Evaluated {source}: {total} questions in {seconds:.1f} s.",
    "cancelled": "Cancelled {source} after {done} of {total} questions; nothing was written.",
    "failed": "The evaluation of {source} failed after {done} of {total} questions: {error}",
    "metrics": "Metrics per question language",
    "chart": "Main metrics",
    "reliability": "Reliability of confidence",
    "questions": "Questions (click one to see it below)",
    "outcome": "Outcome",
    "language": "Question language",
    "all": "all",
    "detail_empty": "Click a question in the table to see its gold answers, the answer record and its passages.",
    "downloads": "Downloads",
    "compare": "Compare with a previous run",
    "compare_intro": "Upload the predictions of an earlier run (`predictions.jsonl`, downloaded from this tab or "
    "written by `citeqa eval --predictions`; add its `.meta.json` to see which settings changed), "
    "or compare with the run before this one on this server.",
    "compare_upload": "Earlier predictions (.jsonl, optionally with its .meta.json)",
    "compare_file": "Compare with the uploaded predictions",
    "compare_previous": "Compare with the previous run",
    "compare_no_run": "Run an evaluation first; the comparison is with its results.",
    "compare_no_file": "Upload an earlier predictions file (.jsonl) first.",
    "compare_no_previous": "There is no earlier run on this server yet.",
    "compare_heading": "{old} → this run ({n} questions in both)",
    "only_old": "only in the earlier run",
    "only_new": "only in this run",
    "changed": "changed between the runs",
    "fixed": "fixed",
    "broken": "broken",
    "compare_note": "A metric is worse (or better) when its 95% bootstrap interval excludes 0 and the sign test "
    "gives p < 0.05; +/- counts the questions that got better/worse.",
    "gold_answers": "Gold answers",
    "unanswerable": "none: the documents do not answer this question",
    "gold_doc": "Gold document",
    "any_doc": "any",
    "history": "Earlier questions",
    "answer": "Answer",
    "abstained": "abstained",
    "short_answer": "short answer",
    "confidence": "confidence",
    "answer_language": "answered in",
    "rank": "first relevant citation",
    "no_rank": "none in the first {k}",
    "latency": "latency",
    "passages": "Cited passages",
    "no_passages": "No passages were cited.",
    "from_gold": "gold document",
    "relevant": "holds a gold answer",
    "key": "Marked in the passages:",
    "key_gold": "gold answer",
    "key_given": "given answer",
    "record": "Answer record (JSON)",
    "not_in_passage": "(the given answer is not in any cited passage)",
}

#: What each outcome means, as the tab says it next to the filter.
OUTCOME_HELP = {
    "right": "answered, and the answer holds a gold answer (as answer accuracy counts it)",
    "wrong answer": "answered from the gold document (any document when the question names none), but the "
    "answer holds no gold answer",
    "wrong document": "answered, the answer holds no gold answer, and the first citation is not from the gold document",
    "false abstention": "abstained, but the documents answer the question",
    "missed abstention": "answered a question the documents do not answer",
    "right abstention": "abstained on a question the documents do not answer",
}
