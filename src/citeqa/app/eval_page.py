"""The Evaluate tab's page: choose or upload a QA file, run it in the background, look at the
results, compare them with an earlier run.

The layout and its events are :func:`evaluate_page`; the run itself is
:class:`~citeqa.app.eval_runner.EvaluationRunner`'s, the HTML and tables
:mod:`citeqa.app.evaluate_tab`'s. :func:`start_evaluation` and :func:`compare_evaluation` are
what its buttons do, callable without a page.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from citeqa.app.eval_runner import EvaluationRunner, FinishedRun
from citeqa.app.holder import EngineHolder, EvalSettings
from citeqa.app.upload_cache import discard_uploads, upload_name, upload_path
from citeqa.errors import CiteqaError
from citeqa.messages import EVALUATE


def start_evaluation(
    runner: EvaluationRunner, settings: EvalSettings, uploaded: Any = None, shipped: str | None = None
) -> str | None:
    """Start evaluating an uploaded QA file, or else a shipped one; None when it started, else why not.

    The file is validated whole first (:func:`~citeqa.evaluation.qa_file.load_qa`): a bad
    one is refused with its line and reason, named as the user knows it. An uploaded file
    is removed from the upload cache once read (the run keeps a copy for its provenance).
    """
    from citeqa.app.evaluate_tab import shipped_path, shown_error
    from citeqa.evaluation.qa_file import load_qa

    if uploaded:
        path, name = Path(upload_path(uploaded)), upload_name(uploaded)
    elif shipped:
        try:
            path = shipped_path(settings.qa_dir, shipped)
        except CiteqaError as exc:
            return str(exc)
        name = shipped
    else:
        return EVALUATE["no_file"]
    try:
        items = load_qa(path)
        runner.start(items, name, path)
    except CiteqaError as exc:
        return shown_error(str(exc), path, name)
    finally:
        if uploaded:
            discard_uploads([path])
    return None


def evaluate_page(gr, app, holder: EngineHolder, runner: EvaluationRunner, settings: EvalSettings) -> None:
    """The Evaluate tab: choose or upload a QA file, run it in the background, look at the results.

    The shipped files are offered with their question counts, the one whose gold documents the live
    index holds preselected, and a line says how many of the chosen file's gold documents are indexed
    before it runs. Run is enabled while nothing runs, Cancel only while a run goes on.

    A timer polls the runner while a run goes on (every page that shows the tab); the run
    itself is in the runner's thread, never in one of Gradio's queue workers.
    """
    from citeqa.app import eval_files
    from citeqa.app import evaluate_tab as view
    from citeqa.app.eval_runner import DOWNLOADS

    def fits() -> list:
        names = view.shipped_qa_files(settings.qa_dir)
        return eval_files.shipped_fits(settings.qa_dir, names, holder.engine.data.documents)

    def offered() -> tuple[Any, str]:
        found = fits()
        chosen = eval_files.best_fit(found)
        note = eval_files.fit_note(next((f for f in found if f.name == chosen), None))
        choices = [(eval_files.choice_label(f), f.name) for f in found]
        return gr.update(choices=choices, value=chosen), note

    def buttons(running: bool) -> list[Any]:
        return [gr.update(interactive=not running), gr.update(interactive=running)]

    lab = EVALUATE
    gr.Markdown(lab["intro"])
    with gr.Row():
        qa_upload = gr.File(
            label=lab["upload"], file_types=[".jsonl", ".csv"], file_count="single", elem_id="eval-upload", height=120
        )
        with gr.Column():
            # The same file names the page load offers (it adds question counts and the best fit), so a
            # session's events are checked against them even before its load event has run.
            shipped = gr.Dropdown(
                [(name, name) for name in view.shipped_qa_files(settings.qa_dir)],
                value=None,
                label=lab["shipped"],
                elem_id="eval-shipped",
                interactive=True,
            )
            with gr.Row():
                start = gr.Button(lab["start"], variant="primary", elem_id="eval-start")
                cancel = gr.Button(lab["cancel"], variant="stop", elem_id="eval-cancel", interactive=False)
            fit = gr.HTML("", elem_id="eval-fit", js_on_load=None)
    status = gr.HTML(view.status_html(None), elem_id="eval-status", js_on_load=None)
    timer = gr.Timer(0.5, active=False)
    shown = gr.State(None)  # the FinishedRun this page shows: filters and details keep working after newer runs
    with gr.Column(visible=False, elem_id="eval-results") as results:
        gr.Markdown(f"### {lab['cards']}")
        cards = gr.HTML("", elem_id="eval-cards", js_on_load=None)
        gr.Markdown(f"### {lab['metrics']}")
        metrics = gr.Dataframe(interactive=False, wrap=True, elem_id="eval-metrics", datatype="str", max_height=560)
        with gr.Row(equal_height=True):
            chart = gr.Image(
                type="filepath",
                label=lab["chart"],
                interactive=False,
                elem_id="eval-chart",
                buttons=["download", "fullscreen"],
                scale=3,
                height=400,
            )
            reliability = gr.Image(
                type="filepath",
                label=lab["reliability"],
                interactive=False,
                elem_id="eval-reliability",
                buttons=["download", "fullscreen"],
                scale=2,
                height=400,
            )
        gr.Markdown(f"### {lab['questions']}")
        gr.HTML(view.outcome_help_html(), js_on_load=None)
        with gr.Row():
            outcome = gr.Dropdown([], label=lab["outcome"], elem_id="eval-outcome", interactive=True)
            language = gr.Dropdown([], label=lab["language"], elem_id="eval-language", interactive=True)
        with gr.Row(elem_id="eval-browse"):  # the question's detail beside the table on a wide screen
            questions = gr.Dataframe(
                headers=view.QUESTION_HEADERS,
                interactive=False,
                wrap=True,
                datatype="str",
                elem_id="eval-questions",
                max_height=680,  # about a screen: the detail beside it stays in view
                column_widths=["70px", "56px", "126px", "214px", "238px", "96px"],  # px: a phone scrolls sideways
                scale=2,
                min_width=480,
            )
            detail = gr.HTML(view.detail_html(None), elem_id="eval-detail", js_on_load=None, scale=1, min_width=300)
        gr.Markdown(f"### {lab['downloads']}")
        with gr.Row():
            downloads = [
                gr.DownloadButton(name, elem_id=f"eval-download-{name.replace('.', '-')}", size="sm")
                for name in DOWNLOADS
            ]
        with gr.Accordion(lab["compare"], open=False, elem_id="eval-compare"):
            gr.Markdown(lab["compare_intro"])
            earlier = gr.File(
                label=lab["compare_upload"],
                file_types=[".jsonl", ".json"],
                file_count="multiple",
                elem_id="eval-compare-upload",
                height=100,
            )
            with gr.Row():
                compare_file = gr.Button(lab["compare_file"], elem_id="eval-compare-file")
                compare_previous = gr.Button(lab["compare_previous"], elem_id="eval-compare-previous")
            compare_table = gr.Dataframe(
                interactive=False, wrap=True, datatype="str", visible=False, elem_id="eval-compare-table"
            )
            compare_lists = gr.HTML(elem_id="eval-compare-lists", js_on_load=None)

    shown_outputs = [
        results,
        cards,
        metrics,
        chart,
        reliability,
        outcome,
        language,
        questions,
        detail,
        *downloads,
        compare_table,
        compare_lists,
    ]

    def show(run) -> list[Any]:  # run: FinishedRun
        if run is None:
            return [gr.update(visible=False), *([gr.skip()] * (len(shown_outputs) - 1))]
        files = run.files
        return [
            gr.update(visible=True),
            view.cards_html(run.metrics),
            view.metrics_table(run.metrics),
            gr.update(value=str(files["metrics.png"]), alt_text=view.chart_alt(run.metrics)),
            gr.update(value=str(files["reliability.png"]), alt_text=lab["reliability_alt"]),
            gr.update(choices=view.outcome_choices(run.results), value=view.ALL),
            gr.update(choices=view.language_choices(run.results), value=view.ALL),
            {"headers": view.QUESTION_HEADERS, "data": view.question_rows(run.results)},
            view.detail_html(None),
            *(gr.update(value=str(files[name])) for name in DOWNLOADS),
            gr.update(visible=False, value=None),
            "",
        ]

    def refresh(shown_run) -> list[Any]:
        """Status, timer, the shown run, then the results (skipped unless a newer run has ended)."""
        current = runner.status()
        if current is not None and current.running:
            skipped = [gr.skip()] * len(shown_outputs)
            return [view.status_html(current), gr.Timer(active=True), shown_run, *skipped, *buttons(True)]
        run = runner.finished()
        if run is None or (shown_run is not None and run.run_id == shown_run.run_id):
            skipped = [gr.skip()] * len(shown_outputs)
            return [view.status_html(current), gr.Timer(active=False), shown_run, *skipped, *buttons(False)]
        return [view.status_html(current), gr.Timer(active=False), run, *show(run), *buttons(False)]

    poll_outputs = [status, timer, shown, *shown_outputs, start, cancel]
    timer.tick(refresh, shown, poll_outputs, show_progress="hidden", api_visibility="private")
    app.load(
        lambda shown_run: [*refresh(shown_run), *offered()],
        shown,
        [*poll_outputs, shipped, fit],
        api_visibility="private",
    )

    def on_start(uploaded, choice, shown_run):
        error = start_evaluation(runner, settings, uploaded, choice)
        if error is not None:  # the upload was read and discarded: the box is emptied either way
            return [view.status_html(None, error), gr.skip(), shown_run, gr.skip(), None, *buttons(False)]
        running = [view.status_html(runner.status()), gr.Timer(active=True), None, gr.update(visible=False), None]
        return [*running, *buttons(True)]

    start.click(
        on_start,
        [qa_upload, shipped, shown],
        [status, timer, shown, results, qa_upload, start, cancel],
        api_visibility="private",
    )

    def on_shipped(name):
        return eval_files.fit_note(next((f for f in fits() if f.name == name), None))

    shipped.change(on_shipped, shipped, fit, api_visibility="private")
    qa_upload.upload(lambda: None, None, shipped, api_visibility="private")  # one source at a time

    def on_choose(uploaded):
        if uploaded:
            discard_uploads([upload_path(uploaded)])
        return None

    shipped.input(on_choose, qa_upload, qa_upload, api_visibility="private")

    def on_cancel():
        if not runner.cancel():
            return view.status_html(None, lab["nothing_running"])
        return view.status_html(runner.status())

    cancel.click(on_cancel, None, status, api_visibility="private")

    def on_filter(outcome_value, language_value, shown_run):
        rows = view.question_rows(shown_run.results, outcome_value, language_value) if shown_run else []
        return {"headers": view.QUESTION_HEADERS, "data": rows}

    outcome.input(on_filter, [outcome, language, shown], questions, api_visibility="private")
    language.input(on_filter, [outcome, language, shown], questions, api_visibility="private")

    def on_select(shown_run, evt):
        row = evt.row_value or []
        found = view.find_result(shown_run.results, row[0] if row else None) if shown_run else None
        return view.detail_html(found)

    on_select.__annotations__["evt"] = gr.SelectData  # a real class: Gradio passes the event by this hint

    questions.select(on_select, shown, detail, api_visibility="private")

    def on_compare(files, shown_run, use_previous: bool):
        table, lists = compare_evaluation(runner, shown_run, files, use_previous)
        if table is None:
            return gr.update(visible=False, value=None), view.status_html(None, lists)
        return gr.update(visible=True, value=table), lists

    compare_file.click(
        lambda f, s: on_compare(f, s, False), [earlier, shown], [compare_table, compare_lists], api_visibility="private"
    )
    compare_previous.click(
        lambda s: on_compare(None, s, True), shown, [compare_table, compare_lists], api_visibility="private"
    )


def compare_evaluation(
    runner: EvaluationRunner, run: FinishedRun | None, files: Any = None, use_previous: bool = False
) -> tuple[dict[str, list] | None, str]:
    """A finished run compared with uploaded earlier predictions or the run before it on this server.

    Returns the deltas table and the fixed/broken lists as HTML, or ``(None, why not)``.
    A ``.meta.json`` uploaded with the predictions adds the settings that changed.
    """
    from citeqa.app.evaluate_tab import comparison_html, comparison_table, shown_error
    from citeqa.evaluation.compare import compare_runs, load_predictions
    from citeqa.evaluation.report import meta_path

    uploaded = [(Path(upload_path(f)), upload_name(f)) for f in (files or [])]
    try:
        if run is None:
            return None, EVALUATE["compare_no_run"]
        if use_previous:
            earlier = runner.before(run)
            if earlier is None:
                return None, EVALUATE["compare_no_previous"]
            old_records, old_provenance, label = earlier.records(), earlier.provenance, earlier.source
        else:
            jsonl = [(p, n) for p, n in uploaded if not n.endswith(".meta.json")]
            if not jsonl:
                return None, EVALUATE["compare_no_file"]
            source, name = jsonl[0]
            with tempfile.TemporaryDirectory(prefix="citeqa-compare-") as folder:
                copy = Path(folder) / Path(name).name
                copy.write_bytes(source.read_bytes())
                for path, meta_name in uploaded:
                    if meta_name == meta_path(copy).name:
                        meta_path(copy).write_bytes(path.read_bytes())
                try:
                    earlier_run = load_predictions(copy)
                except CiteqaError as exc:
                    return None, shown_error(str(exc), copy, name)
            old_records, old_provenance, label = list(earlier_run.records), earlier_run.provenance, name
        comparison = compare_runs(
            old_records, run.records(), old_provenance=old_provenance, new_provenance=run.provenance
        )
        return comparison_table(comparison), comparison_html(comparison, label)
    finally:
        discard_uploads(p for p, _ in uploaded)
