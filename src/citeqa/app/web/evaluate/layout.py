"""The Evaluate tab's components (:func:`evaluate_layout`), labelled in English until a visit
relabels them; :mod:`citeqa.app.web.evaluate.tab` wires their events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from citeqa.app.web.evaluate.files import log_skipped, shipped_qa_files
from citeqa.app.web.holder import EvalSettings
from citeqa.messages import evaluate_labels


@dataclass(frozen=True)
class EvaluateTab:
    """The tab's components (:func:`evaluate_layout`); ``shown`` holds the FinishedRun a page shows,
    ``mine`` the ids of the runs it started."""

    intro: Any
    qa_upload: Any
    shipped: Any
    start: Any
    cancel: Any
    fit: Any
    confirm: Any
    status: Any
    timer: Any
    shown: Any
    mine: Any
    results: Any
    cards_heading: Any
    cards: Any
    metrics_heading: Any
    metrics: Any
    chart: Any
    reliability: Any
    questions_heading: Any
    outcome_help: Any
    outcome: Any
    language: Any
    questions: Any
    detail: Any
    downloads_heading: Any
    downloads: list[Any]
    compare: Any
    compare_intro: Any
    earlier: Any
    compare_file: Any
    compare_previous: Any
    compare_table: Any
    compare_lists: Any

    def results_outputs(self) -> list[Any]:
        """What showing a finished run updates, in the order the tab's ``show`` gives them."""
        return [
            self.results,
            self.cards,
            self.metrics,
            self.chart,
            self.reliability,
            self.outcome,
            self.language,
            self.questions,
            self.detail,
            *self.downloads,
            self.compare_table,
            self.compare_lists,
        ]

    def poll_outputs(self) -> list[Any]:
        """What a poll of the runner updates: status, timer, the shown run, the results, Run and Cancel."""
        return [self.status, self.timer, self.shown, *self.results_outputs(), self.start, self.cancel]


def evaluate_layout(gr: Any, settings: EvalSettings) -> EvaluateTab:
    """The tab's components, labelled in English (a visit relabels them), the results hidden."""
    from citeqa.app.web.evaluate import view
    from citeqa.app.web.evaluate.runner import DOWNLOADS

    lab = evaluate_labels("en")
    intro = gr.Markdown(lab["intro"])
    with gr.Row():
        # No file_types: Gradio's box would drop a file of another type (or named with fullwidth letters,
        # "qa.ｊｓｏｎｌ") with its own English notice; the file reaches the tab, which says why in the
        # page's language (a type is read from the NFKC form of the name, citeqa.evaluation.rows).
        qa_upload = gr.File(label=lab["upload"], file_count="single", elem_id="eval-upload", height=120)
        with gr.Column():
            # The same file names the page load offers (it adds question counts and the best fit), so a
            # session's events are checked against them even before its load event has run.
            shipped = gr.Dropdown(
                [(name, name) for name in shipped_qa_files(settings.qa_dir, skipped=log_skipped)],
                value=None,
                label=lab["shipped"],
                elem_id="eval-shipped",
                interactive=True,
            )
            with gr.Row():
                start = gr.Button(lab["start"], variant="primary", elem_id="eval-start")
                cancel = gr.Button(lab["cancel"], variant="stop", elem_id="eval-cancel", interactive=False)
            fit = gr.HTML("", elem_id="eval-fit", js_on_load=None)
            confirm = gr.Checkbox(False, label=lab["confirm_mismatch"], visible=False, elem_id="eval-confirm")
    status = gr.HTML(view.status_html(None), elem_id="eval-status", js_on_load=None)
    timer = gr.Timer(0.5, active=False)
    shown = gr.State(None)  # the FinishedRun this page shows: filters and details keep working after newer runs
    mine = gr.State(())  # the ids of the runs this page started: each page sees and cancels its own runs only
    with gr.Column(visible=False, elem_id="eval-results") as results:
        cards_heading = gr.Markdown(f"### {lab['cards']}")
        cards = gr.HTML("", elem_id="eval-cards", js_on_load=None)
        metrics_heading = gr.Markdown(f"### {lab['metrics']}")
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
        questions_heading = gr.Markdown(f"### {lab['questions']}")
        outcome_help = gr.HTML(view.outcome_help_html(), js_on_load=None)
        with gr.Row():
            outcome = gr.Dropdown([], label=lab["outcome"], elem_id="eval-outcome", interactive=True)
            language = gr.Dropdown([], label=lab["language"], elem_id="eval-language", interactive=True)
        with gr.Row(elem_id="eval-browse"):  # the question's detail beside the table on a wide screen
            questions = gr.Dataframe(
                headers=view.question_headers(),
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
        downloads_heading = gr.Markdown(f"### {lab['downloads']}")
        with gr.Row():
            downloads = [
                gr.DownloadButton(name, elem_id=f"eval-download-{name.replace('.', '-')}", size="sm")
                for name in DOWNLOADS
            ]
        with gr.Accordion(lab["compare"], open=False, elem_id="eval-compare") as compare:
            compare_intro = gr.Markdown(lab["compare_intro"])
            earlier = gr.File(
                label=lab["compare_upload"],  # no file_types either (see qa_upload): names NFKC-read there
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

    return EvaluateTab(
        intro=intro,
        qa_upload=qa_upload,
        shipped=shipped,
        start=start,
        cancel=cancel,
        fit=fit,
        confirm=confirm,
        status=status,
        timer=timer,
        shown=shown,
        mine=mine,
        results=results,
        cards_heading=cards_heading,
        cards=cards,
        metrics_heading=metrics_heading,
        metrics=metrics,
        chart=chart,
        reliability=reliability,
        questions_heading=questions_heading,
        outcome_help=outcome_help,
        outcome=outcome,
        language=language,
        questions=questions,
        detail=detail,
        downloads_heading=downloads_heading,
        downloads=downloads,
        compare=compare,
        compare_intro=compare_intro,
        earlier=earlier,
        compare_file=compare_file,
        compare_previous=compare_previous,
        compare_table=compare_table,
        compare_lists=compare_lists,
    )
