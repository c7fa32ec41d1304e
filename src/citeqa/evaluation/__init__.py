"""Evaluate citeqa on a QA file: load it, run an engine, grade, summarise, report.

The flow is :func:`load_qa` (or :func:`load_squad`) -> :func:`evaluate_engine` (or
:func:`evaluate` with any ``ask`` function) -> :func:`summarize` -> :func:`print_table` /
:func:`write_predictions` / :func:`write_report` / :func:`check_thresholds`, and
:func:`compare_runs` against an earlier run's predictions. Grading is pure: it only looks at the
answer records and the document texts, so it is tested without a model or an index.

Conventions (chosen so every number has one meaning):

* A citation is *relevant* when it comes from the gold document (any document when the
  item has no ``doc``) and its text contains a gold answer under :func:`contains_answer`.
* "Contains" compares :func:`normalize_text` forms (NFKC, casefold, collapsed whitespace)
  and requires whole-word edges, so the gold ``"2"`` does not match ``"2023"``.
* Retrieval and answer metrics cover answerable questions only; an abstention there
  counts as a wrong answer (exact match 0, F1 0).
* Every ratio whose denominator is empty is ``None`` ("not applicable"), never 0.
* Exact match and token F1 drop the articles of the answer's own language (``articles.json``, MLQA's
  way); :func:`squad_scores` gives SQuAD v1.1's official figures (English articles only) beside them.
"""

from citeqa.evaluation.claims_eval import (
    ClaimMetrics,
    ClaimResult,
    check_claim_thresholds,
    evaluate_claims,
    parse_claim_thresholds,
    print_claims_table,
    summarize_claims,
    write_claim_predictions,
)
from citeqa.evaluation.claims_file import ClaimItem, file_kind, load_claims
from citeqa.evaluation.compare import (
    Comparison,
    MetricDelta,
    PredictionRun,
    compare_runs,
    load_predictions,
    print_comparison,
    regression_lines,
    write_comparison,
)
from citeqa.evaluation.grading import (
    TOP_K,
    QuestionResult,
    answer_language,
    citation_is_exact,
    first_relevant_rank,
    is_relevant,
    predicted_text,
    score_question,
)
from citeqa.evaluation.matching import contains_answer, exact_match, normalize_answer, normalize_text, token_f1
from citeqa.evaluation.metrics import (
    METRIC_KEYS,
    Bucket,
    Metrics,
    Scores,
    SquadScores,
    percentile,
    reliability,
    squad_scores,
    summarize,
)
from citeqa.evaluation.provenance import changed_settings, collect_provenance, default_settings
from citeqa.evaluation.qa_file import QAItem, load_qa
from citeqa.evaluation.report import (
    RunHeader,
    header_lines,
    meta_path,
    prediction_record,
    print_table,
    reliability_lines,
    render_table,
    report_json,
    report_record,
    run_header,
    table_notes,
    write_predictions,
    write_report,
)
from citeqa.evaluation.runner import evaluate, evaluate_engine
from citeqa.evaluation.squad import (
    SquadSet,
    load_squad,
    squad_folders,
    squad_predictions,
    write_corpus,
    write_squad_predictions,
)
from citeqa.evaluation.thresholds import check_thresholds, parse_thresholds

__all__ = [
    "ClaimItem",
    "ClaimMetrics",
    "ClaimResult",
    "check_claim_thresholds",
    "evaluate_claims",
    "file_kind",
    "load_claims",
    "parse_claim_thresholds",
    "print_claims_table",
    "summarize_claims",
    "write_claim_predictions",
    "METRIC_KEYS",
    "TOP_K",
    "Bucket",
    "Comparison",
    "MetricDelta",
    "Metrics",
    "PredictionRun",
    "QAItem",
    "QuestionResult",
    "RunHeader",
    "Scores",
    "SquadScores",
    "SquadSet",
    "check_thresholds",
    "answer_language",
    "changed_settings",
    "citation_is_exact",
    "collect_provenance",
    "compare_runs",
    "contains_answer",
    "default_settings",
    "evaluate",
    "evaluate_engine",
    "exact_match",
    "first_relevant_rank",
    "header_lines",
    "is_relevant",
    "load_predictions",
    "load_qa",
    "load_squad",
    "meta_path",
    "normalize_answer",
    "normalize_text",
    "parse_thresholds",
    "percentile",
    "predicted_text",
    "prediction_record",
    "print_comparison",
    "print_table",
    "regression_lines",
    "reliability",
    "reliability_lines",
    "render_table",
    "report_json",
    "report_record",
    "run_header",
    "score_question",
    "squad_folders",
    "squad_predictions",
    "squad_scores",
    "summarize",
    "table_notes",
    "token_f1",
    "write_comparison",
    "write_corpus",
    "write_predictions",
    "write_report",
    "write_squad_predictions",
]
