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
        "holds": "contiene la respuesta",
        "more_passages": "{n} pasajes más, que no contienen la respuesta",
        "possible": "Posible respuesta (compruébala en la fuente):",
        "conf_high": "Confianza alta",
        "conf_low": "Confianza baja",
        "conf_none": "Sin respuesta",
        "confidence_value": "confianza {value:.2f}",
        "you": "Tú",
        "reply": "citeqa",
        "conversation": "Conversación",
        "empty_chat": "Haz una pregunta sobre los documentos: cada respuesta es una cita con sus fuentes.",
        "empty_question": "Escribe una pregunta primero.",
        "empty_claim": "Escribe una afirmación primero.",
        "too_long": "La pregunta es demasiado larga ({n} caracteres; el límite es {limit}).",
        "counter": "{n} / {limit} caracteres",
        "tab_chat": "Chat",
        "tab_corpus": "Documentos",
        "tab_evaluate": "Evaluar",
        "subtitle": "Pregunta en español, portugués o inglés, o comprueba una afirmación. Cada respuesta se copia de un documento, con sus fuentes debajo.",
        "examples": "Ejemplos",
        "options": "Opciones",
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
        "holds": "contém a resposta",
        "more_passages": "mais {n} passagens, que não contêm a resposta",
        "possible": "Resposta possível (confira na fonte):",
        "conf_high": "Confiança alta",
        "conf_low": "Confiança baixa",
        "conf_none": "Sem resposta",
        "confidence_value": "confiança {value:.2f}",
        "you": "Você",
        "reply": "citeqa",
        "conversation": "Conversa",
        "empty_chat": "Faça uma pergunta sobre os documentos: cada resposta é uma citação com as suas fontes.",
        "empty_question": "Digite uma pergunta primeiro.",
        "empty_claim": "Digite uma afirmação primeiro.",
        "too_long": "A pergunta é longa demais ({n} caracteres; o limite é {limit}).",
        "counter": "{n} / {limit} caracteres",
        "tab_chat": "Chat",
        "tab_corpus": "Documentos",
        "tab_evaluate": "Avaliar",
        "subtitle": "Pergunte em espanhol, português ou inglês, ou verifique uma afirmação. Cada resposta é copiada de um documento, com as fontes abaixo.",
        "examples": "Exemplos",
        "options": "Opções",
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
        "holds": "holds the answer",
        "more_passages": "{n} more passages, which do not hold the answer",
        "possible": "Possible answer (check it in the source):",
        "conf_high": "High confidence",
        "conf_low": "Low confidence",
        "conf_none": "No answer",
        "confidence_value": "confidence {value:.2f}",
        "you": "You",
        "reply": "citeqa",
        "conversation": "Conversation",
        "empty_chat": "Ask a question about the documents: every answer is a quote with its sources.",
        "empty_question": "Type a question first.",
        "empty_claim": "Type a claim first.",
        "too_long": "The question is too long ({n} characters; the limit is {limit}).",
        "counter": "{n} / {limit} characters",
        "tab_chat": "Chat",
        "tab_corpus": "Corpus",
        "tab_evaluate": "Evaluate",
        "subtitle": "Ask in Spanish, Portuguese or English, or check a claim. Every answer is copied from a document, with its sources below it.",
        "examples": "Examples",
        "options": "Options",
    },
}


#: The languages the interface speaks; a question is read as one of these or of the corpus's.
UI_LANGUAGES = tuple(LABELS)


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
        "cite_language": "idioma",
        "cite_indexed": "Indexado el {day}.",
        "md_indexed": "indexado el {day}",
        "md_title": "Conversación de citeqa",
        "md_exported": "Exportada el {stamp} · {turns}",
        "md_turn": "1 turno",
        "md_turns": "{n} turnos",
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
        "cite_language": "idioma",
        "cite_indexed": "Indexado em {day}.",
        "md_indexed": "indexado em {day}",
        "md_title": "Conversa do citeqa",
        "md_exported": "Exportada em {stamp} · {turns}",
        "md_turn": "1 turno",
        "md_turns": "{n} turnos",
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
        "cite_language": "language",
        "cite_indexed": "Indexed {day}.",
        "md_indexed": "indexed {day}",
        "md_title": "citeqa conversation",
        "md_exported": "Exported {stamp} · {turns}",
        "md_turn": "1 turn",
        "md_turns": "{n} turns",
    },
}


def evidence_labels(lang: str) -> dict[str, str]:
    """Strings of the claim mode, citation tools, viewer and downloads in ``lang`` (English by default)."""
    return EVIDENCE_LABELS.get(lang, EVIDENCE_LABELS["en"])


#: The Corpus tab (es/pt/en); its labels follow the chat's language, its status lines are English.
CORPUS_LABELS = {
    "es": {
        "uploads_off": "Las subidas están desactivadas en este servidor.",
        "add_files": "Añadir documentos ({types}, hasta {mb} MB cada uno)",
        "add": "Añadir al índice",
        "rescan": "Volver a leer la carpeta del corpus",
        "upload_status": "Estado de la subida",
        "remove_doc": "Quitar un documento",
        "remove_confirm": "Sí, borrar este archivo de la carpeta del corpus",
        "remove": "Quitar",
        "removal_status": "Estado de la eliminación",
    },
    "pt": {
        "uploads_off": "Os envios estão desativados neste servidor.",
        "add_files": "Adicionar documentos ({types}, até {mb} MB cada)",
        "add": "Adicionar ao índice",
        "rescan": "Ler de novo a pasta do corpus",
        "upload_status": "Estado do envio",
        "remove_doc": "Remover um documento",
        "remove_confirm": "Sim, apagar este arquivo da pasta do corpus",
        "remove": "Remover",
        "removal_status": "Estado da remoção",
    },
    "en": {
        "uploads_off": "Uploads are disabled for this server.",
        "add_files": "Add documents ({types}, up to {mb} MB each)",
        "add": "Add to the index",
        "rescan": "Re-scan corpus folder",
        "upload_status": "Upload status",
        "remove_doc": "Remove a document",
        "remove_confirm": "Yes, delete this file from the corpus folder",
        "remove": "Remove",
        "removal_status": "Removal status",
        "removal_off": "Removing documents is disabled for this server.",
        "choose": "Choose a document to remove.",
        "tick": "Tick the box to confirm that {doc} should be deleted from the corpus folder.",
        "fixed_index": "This index cannot be updated.",
        "not_removed": "not removed: {error}",
    },
}


def corpus_labels(lang: str) -> dict[str, str]:
    """The Corpus tab's strings in ``lang``, English for the status lines and unknown languages."""
    return {**CORPUS_LABELS["en"], **CORPUS_LABELS.get(lang, {})}


#: The Evaluate tab's strings, in English (its name is in LABELS, with the other tabs', and follows the chat's language).
EVALUATE = {
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
    "file_choice": "{name} ({n} questions)",
    "fit_all": "{n} questions; all {gold} of their gold documents are in the live index.",
    "fit_some": "{n} questions; only {indexed} of their {gold} gold documents are in the live index: questions "
    "about the others will be graded wrong.",
    "fit_none": "{n} questions; none of their {gold} gold documents is in the live index: this file is for "
    "another corpus, and every answer would be graded wrong.",
    "fit_any": "{n} questions; the file names no gold documents (any document may answer).",
    "cards": "Headline metrics against their targets (all questions)",
    "target_min": "target ≥ {bound:.2f}",
    "target_max": "target ≤ {bound:.2f}",
    "target_met": "met",
    "target_missed": "missed",
    "target_none": "no questions",
    "chart_alt": "Bar chart of the main metrics per question language. {summary}",
    "reliability_alt": "Reliability diagram: the share of right answers against the confidence given, per "
    "confidence bin, beside the diagonal of perfect calibration.",
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

#: The web server's refusals (:mod:`citeqa.app.server`), one line each, as JSON ``{"error": ...}``.
SERVER = {
    "not_uploaded": "that file was not uploaded from this page; upload it again from the page",
    "bad_json": "the request body is not valid JSON",
    "no_events": "no events are waiting for that session; join the queue first",
}
