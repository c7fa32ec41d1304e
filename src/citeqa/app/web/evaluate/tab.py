"""The Evaluate tab's page: choose or upload a QA file, run it in the background, look at the
results, compare them with an earlier run.

:func:`evaluate_page` puts the tab together: its components
(:func:`~citeqa.app.web.evaluate.layout.evaluate_layout`) and its events, a function for each
group; the run itself is :class:`~citeqa.app.web.evaluate.runner.EvaluationRunner`'s, the HTML
and tables :mod:`citeqa.app.web.evaluate.view`'s. :func:`start_evaluation` and :func:`compare_evaluation` are
what its buttons do, callable without a page.
"""

from __future__ import annotations

import tempfile
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.app.web.evaluate.files import (
    FileFit,
    best_fit,
    choice_label,
    file_fit,
    fit_html,
    gold_fit,
    shipped_fits,
    shipped_path,
    shipped_qa_files,
    shown_error,
    too_many_note,
)
from citeqa.app.web.evaluate.layout import EvaluateTab, evaluate_layout
from citeqa.app.web.evaluate.runner import EvaluationRunner, FinishedRun
from citeqa.app.web.holder import EngineHolder, EvalSettings
from citeqa.app.web.table import Table
from citeqa.app.web.upload_cache import discard_uploads, upload_name, upload_path
from citeqa.errors import CiteqaError
from citeqa.messages import error_said, evaluate_labels


def start_evaluation(
    runner: EvaluationRunner,
    settings: EvalSettings,
    uploaded: Any = None,
    shipped: str | None = None,
    lang: str = "en",
    documents: Collection[str] | None = None,
    confirmed: bool = False,
) -> str | None:
    """Start evaluating an uploaded QA file, or else a shipped one; None when it started, else why not.

    The file is validated whole first (:func:`~citeqa.evaluation.qa_file.load_qa`): a bad
    one is refused with its line and reason, named as the user knows it. An uploaded file
    is removed from the upload cache once its run has started (the run keeps a copy for its
    provenance); a refused one stays, so the page keeps the user's choice (to tick the
    confirmation, or to run it once the server is free).
    What the page is told is in ``lang``, a QA file's own errors included. A file of more
    questions than ``settings.max_questions`` is refused, naming the limit and the server's option.
    With the live index's ``documents``, a file whose gold documents are not all among them runs only
    when ``confirmed``.
    """
    from citeqa.app.web.evaluate.runner import RunRefused
    from citeqa.evaluation.qa_file import load_qa

    if uploaded:
        path, name = Path(upload_path(uploaded)), upload_name(uploaded)
    elif shipped:
        try:
            path = shipped_path(settings.qa_dir, shipped)
        except CiteqaError as exc:
            return error_said(exc, lang)
        name = shipped
    else:
        return evaluate_labels(lang)["no_file"]
    try:
        items = load_qa(path, name)
        if len(items) > settings.max_questions:  # the one run of the server would be held for hours
            return too_many_note(name, len(items), settings.max_questions, lang)
        gold, indexed = gold_fit(items, documents) if documents is not None else (0, 0)
        if indexed < gold and confirmed is not True:  # every answer about the others would be graded wrong
            return evaluate_labels(lang)["confirm_needed"].format(name=name, indexed=indexed, gold=gold)
        runner.start(items, name, path)
        if uploaded:
            discard_uploads([path])
    except RunRefused as exc:
        current = runner.status()
        if current is None or not current.running:  # it ended meanwhile: the runner's own words
            return error_said(exc, lang)
        return evaluate_labels(lang)["busy"].format(source=current.source, done=current.done, total=current.total)
    except CiteqaError as exc:
        return shown_error(error_said(exc, lang), path, name)
    return None


def evaluate_page(
    gr: Any, app: Any, holder: EngineHolder, runner: EvaluationRunner, settings: EvalSettings, lang: Any = None
) -> list[tuple[Any, Any]]:
    """The Evaluate tab: choose or upload a QA file, run it in the background, look at the results.

    The shipped files are offered with their question counts, the one whose gold documents the live
    index holds preselected, and a line says how many of the chosen file's gold documents are indexed
    before it runs, with the estimated time of its run (or, for a file of more questions than one run may
    take, why it will not run). Run is enabled while nothing runs, Cancel only while a run goes on.

    A timer polls the runner while a run goes on (every page that shows the tab); the run
    itself is in the runner's thread, never in one of Gradio's queue workers.

    ``lang`` is the page's language (a ``gr.State``): every event answers in it. Returns the tab's
    components to relabel and their updates for a language (as :func:`citeqa.app.web.chat.tab.page_labels` takes them).
    """
    lang = lang if lang is not None else gr.State("en")
    page = _Page(gr, holder, runner, settings, evaluate_layout(gr, settings))
    _poll_events(page, app, lang)
    _run_events(page, lang)
    _file_events(page, lang)
    _browse_events(page, lang)
    _compare_events(page, lang)
    return _relabels(page)


#: What the confirmation tick stands for: a file that does not fit the index.
MISMATCHED = FileFit("", 0, 1, 0)


@dataclass
class _Page:
    """What the tab's events share: Gradio, the live engine, the runner, the settings, the components,
    and the shipped files' fits, kept until the files or the index's documents change (a chat turn
    relabels the tab)."""

    gr: Any
    holder: EngineHolder
    runner: EvaluationRunner
    settings: EvalSettings
    tab: EvaluateTab
    _fits: tuple[Any, Any, list[FileFit]] | None = None  # (the files' stamps, the index's documents, their fits)

    def fits(self) -> list[FileFit]:
        """The shipped files' fits with the live index."""
        names = shipped_qa_files(self.settings.qa_dir)
        documents = self.holder.engine.documents
        stamps = tuple((n, *_stamp(Path(self.settings.qa_dir or ".") / n)) for n in names)
        if self._fits is None or self._fits[0] != stamps or self._fits[1] is not documents:
            self._fits = (stamps, documents, shipped_fits(self.settings.qa_dir, names, documents))
        return self._fits[2]

    def offered(self, shown_lang: str) -> tuple[Any, str, Any]:
        """The shipped files (the best fit chosen), its fit and the tick."""
        found = self.fits()
        chosen = best_fit(found)
        fit = next((f for f in found if f.name == chosen), None)
        choices = [(choice_label(f, shown_lang), f.name) for f in found]
        return self.gr.update(choices=choices, value=chosen), self.fit_line(fit, shown_lang), self.confirming(fit)

    def fit_line(self, fit: FileFit | None, shown_lang: str) -> str:
        """What the page says of a file before it runs: its fit, and its run's estimated time or why it will not run."""
        return fit_html(fit, shown_lang, self.settings.max_questions, self.runner.pace())

    def confirming(self, fit: FileFit | None) -> Any:
        """The tick a run of a file for another corpus needs, shown only for one that may run."""
        shown = fit is not None and not fit.fits and fit.questions <= self.settings.max_questions
        return self.gr.update(visible=shown, value=False)

    def runnable(self, fit: FileFit | None, ticked: bool = False) -> Any:
        """Run, enabled while nothing runs; for a file for another corpus, once ticked; never for a file of
        more questions than one run may take."""
        current = self.runner.status()
        busy = current is not None and current.running
        over = fit is not None and fit.questions > self.settings.max_questions
        return self.gr.update(interactive=not busy and not over and (fit is None or fit.fits or ticked is True))

    def buttons(self, running: bool) -> list[Any]:
        """Run and Cancel: one of them enabled."""
        return [self.gr.update(interactive=not running), self.gr.update(interactive=running)]

    def show(self, run: FinishedRun | None, shown_lang: str) -> list[Any]:
        """The results of ``run`` in ``shown_lang`` (:meth:`EvaluateTab.results_outputs`); hidden without one."""
        from citeqa.app.web.evaluate import view
        from citeqa.app.web.evaluate.runner import DOWNLOADS

        gr = self.gr
        if run is None:
            return [gr.update(visible=False), *([gr.skip()] * (len(self.tab.results_outputs()) - 1))]
        files, alt = run.files, evaluate_labels(shown_lang)["reliability_alt"]
        chart, diagram = view.chart_paths(files, run.results, run.metrics, shown_lang)
        gold, indexed = gold_fit([r.item for r in run.results], self.holder.engine.documents)
        return [
            gr.update(visible=True),
            view.cards_html(run.metrics, shown_lang, (indexed, gold) if indexed < gold else None),
            view.metrics_table(run.metrics, shown_lang),
            gr.update(value=str(chart), alt_text=view.chart_alt(run.metrics, shown_lang)),
            gr.update(value=str(diagram), alt_text=alt),
            gr.update(choices=view.outcome_choices(run.results, shown_lang), value=view.ALL),
            gr.update(choices=view.language_filter_choices(run.results, shown_lang), value=view.ALL),
            {
                "headers": view.question_headers(shown_lang),
                "data": view.question_rows(run.results, lang=shown_lang),
            },
            view.detail_html(None, shown_lang),
            *(gr.update(value=str(files[name])) for name in DOWNLOADS),
            gr.update(visible=False, value=None),
            "",
        ]

    def refresh(self, shown_run: Any, own: Any, shown_lang: str) -> list[Any]:
        """Status, timer, the shown run, then the results (skipped unless a newer run of this page has ended).

        Another page's run is only said to be going (it holds the server's one run), not named or shown."""
        from citeqa.app.web.evaluate import view

        gr = self.gr
        current = self.runner.status()
        ours = current is not None and current.run_id in (own or ())
        line = view.status_html(current if ours else None, lang=shown_lang)
        skipped = [gr.skip()] * len(self.tab.results_outputs())
        if current is not None and current.running:
            if not ours:
                waiting = [gr.update(interactive=False), gr.update(interactive=False)]
                line = view.other_run_html(current, shown_lang)
                return [line, gr.Timer(active=True), shown_run, *skipped, *waiting]
            return [line, gr.Timer(active=True), shown_run, *skipped, *self.buttons(True)]
        run = self.runner.finished()
        if run is None or run.run_id not in (own or ()) or (shown_run is not None and run.run_id == shown_run.run_id):
            return [line, gr.Timer(active=False), shown_run, *skipped, *self.buttons(False)]
        return [line, gr.Timer(active=False), run, *self.show(run, shown_lang), *self.buttons(False)]


def _poll_events(page: _Page, app: Any, lang: Any) -> None:
    """The timer's poll of the runner while a run goes on, and the tab's state on every visit."""
    from citeqa.app.web.chat.tab import visit_language

    gr, tab = page.gr, page.tab
    poll_outputs = tab.poll_outputs()
    tab.timer.tick(
        page.refresh, [tab.shown, tab.mine, lang], poll_outputs, show_progress="hidden", api_visibility="private"
    )

    def on_load(shown_run: Any, own: Any, request: Any) -> list[Any]:
        shown_lang = visit_language(request)  # the page's language state is set by another load event
        return [*page.refresh(shown_run, own, shown_lang), *page.offered(shown_lang)]

    on_load.__annotations__ = {"request": gr.Request}  # a real class: the module's annotations are strings
    app.load(
        on_load, [tab.shown, tab.mine], [*poll_outputs, tab.shipped, tab.fit, tab.confirm], api_visibility="private"
    )


def _run_events(page: _Page, lang: Any) -> None:
    """Run (a page's own run, one on the server at a time) and Cancel (only a run of this page)."""
    from citeqa.app.web.evaluate import view

    gr, tab, runner = page.gr, page.tab, page.runner

    def on_start(
        uploaded: Any, choice: str | None, shown_run: Any, own: Any, confirmed: bool, shown_lang: str
    ) -> list[Any]:
        current, own = runner.status(), tuple(own or ())
        error: str | None
        if current is not None and current.running and current.run_id not in own:  # not named: another page's
            error = evaluate_labels(shown_lang)["busy_other"].format(done=current.done, total=current.total)
        else:
            documents = page.holder.engine.documents
            error = start_evaluation(runner, page.settings, uploaded, choice, shown_lang, documents, confirmed)
        if error is not None:  # the choice stays: the upload (kept) and the shipped file, to tick or change
            refused = view.status_html(None, error, shown_lang)
            return [refused, gr.skip(), shown_run, own, gr.skip(), gr.skip(), *page.buttons(False)]
        started = runner.status()
        assert started is not None  # start_evaluation started it
        line = view.status_html(started, lang=shown_lang)
        running = [line, gr.Timer(active=True), None, (*own, started.run_id), gr.update(visible=False), None]
        return [*running, *page.buttons(True)]

    tab.start.click(
        on_start,
        [tab.qa_upload, tab.shipped, tab.shown, tab.mine, tab.confirm, lang],
        [tab.status, tab.timer, tab.shown, tab.mine, tab.results, tab.qa_upload, tab.start, tab.cancel],
        api_visibility="private",
    )

    def on_cancel(own: Any, shown_lang: str) -> str:
        current = runner.status()
        ours = current is not None and current.running and current.run_id in (own or ())
        if not ours or not runner.cancel():
            return view.status_html(None, evaluate_labels(shown_lang)["nothing_running"], shown_lang)
        return view.status_html(runner.status(), lang=shown_lang)

    tab.cancel.click(on_cancel, [tab.mine, lang], tab.status, api_visibility="private")


def _file_events(page: _Page, lang: Any) -> None:
    """Choosing a shipped file or uploading one (one source at a time): its fit, the tick, Run."""
    gr, tab = page.gr, page.tab

    # a new choice: its fit, and the last results hidden (they are another file's)
    def on_shipped(name: str | None, shown_lang: str) -> tuple[str, Any, Any, Any]:
        chosen = next((f for f in page.fits() if f.name == name), None)
        shown = page.fit_line(chosen, shown_lang)
        return shown, page.confirming(chosen), gr.update(visible=False), page.runnable(chosen)

    tab.shipped.input(
        on_shipped, [tab.shipped, lang], [tab.fit, tab.confirm, tab.results, tab.start], api_visibility="private"
    )
    tab.confirm.input(
        lambda ticked: page.runnable(MISMATCHED, ticked), tab.confirm, tab.start, api_visibility="private"
    )  # shown: a misfit

    # one source at a time; the upload's own fit
    def on_uploaded(uploaded: Any, shown_lang: str) -> tuple[None, str, Any, Any, Any]:
        path = Path(upload_path(uploaded)) if uploaded else None
        found = file_fit(path, upload_name(uploaded), page.holder.engine.documents) if path else None
        return (
            None,
            page.fit_line(found, shown_lang),
            page.confirming(found),
            gr.update(visible=False),
            page.runnable(found),
        )

    upload_outputs = [tab.shipped, tab.fit, tab.confirm, tab.results, tab.start]
    tab.qa_upload.upload(on_uploaded, [tab.qa_upload, lang], upload_outputs, api_visibility="private")

    def on_choose(uploaded: Any) -> None:
        if uploaded:
            discard_uploads([upload_path(uploaded)])
        return None

    tab.shipped.input(on_choose, tab.qa_upload, tab.qa_upload, api_visibility="private")


def _browse_events(page: _Page, lang: Any) -> None:
    """The question table's filters and the detail of a question chosen in it."""
    from citeqa.app.web.evaluate import view

    gr, tab = page.gr, page.tab

    def on_filter(
        outcome_value: str | None, language_value: str | None, shown_run: FinishedRun | None, shown_lang: str
    ) -> Table:
        rows = view.question_rows(shown_run.results, outcome_value, language_value, shown_lang) if shown_run else []
        return {"headers": view.question_headers(shown_lang), "data": rows}

    filters = [tab.outcome, tab.language, tab.shown, lang]
    tab.outcome.input(on_filter, filters, tab.questions, api_visibility="private")
    tab.language.input(on_filter, filters, tab.questions, api_visibility="private")

    def on_select(shown_run: FinishedRun | None, shown_lang: str, evt: Any) -> str:
        row = evt.row_value or []
        found = view.find_result(shown_run.results, row[0] if row else None) if shown_run else None
        return view.detail_html(found, shown_lang)

    on_select.__annotations__["evt"] = gr.SelectData  # a real class: Gradio passes the event by this hint

    tab.questions.select(on_select, [tab.shown, lang], tab.detail, api_visibility="private")


def _compare_events(page: _Page, lang: Any) -> None:
    """Comparing the shown run with uploaded earlier predictions or with this page's run before it."""
    from citeqa.app.web.evaluate import view

    gr, tab = page.gr, page.tab

    def on_compare(files: Any, shown_run: Any, use_previous: bool, shown_lang: str, own: Any = ()) -> tuple[Any, Any]:
        table, lists = compare_evaluation(page.runner, shown_run, files, use_previous, shown_lang, tuple(own or ()))
        if table is None:
            return gr.update(visible=False, value=None), view.status_html(None, lists, shown_lang)
        return gr.update(visible=True, value=table), lists

    compared = [tab.compare_table, tab.compare_lists]
    tab.compare_file.click(
        lambda f, s, ln: on_compare(f, s, False, ln), [tab.earlier, tab.shown, lang], compared, api_visibility="private"
    )
    tab.compare_previous.click(
        lambda s, own, ln: on_compare(None, s, True, ln, own),
        [tab.shown, tab.mine, lang],
        compared,
        api_visibility="private",
    )


def _relabels(page: _Page) -> list[tuple[Any, Any]]:
    """The tab's components to relabel and their updates for a language (the shipped files' choice kept)."""
    from citeqa.app.web.evaluate import view

    gr, tab = page.gr, page.tab

    def labelled(shown_lang: str) -> dict[str, Any]:  # the files offered, named in the language (the choice kept)
        return {"choices": [(choice_label(f, shown_lang), f.name) for f in page.fits()]}

    def said(key: str, field: str = "value", heading: bool = False) -> Callable[[str], Any]:
        def update(shown_lang: str) -> Any:
            text = evaluate_labels(shown_lang)[key]
            return gr.update(**{field: f"### {text}" if heading else text})

        return update

    return [
        (tab.intro, said("intro")),
        (tab.qa_upload, said("upload", "label")),
        (
            tab.shipped,
            lambda shown_lang: gr.update(label=evaluate_labels(shown_lang)["shipped"], **labelled(shown_lang)),
        ),
        (tab.start, said("start")),
        (tab.cancel, said("cancel")),
        (tab.cards_heading, said("cards", heading=True)),
        (tab.metrics_heading, said("metrics", heading=True)),
        (tab.chart, said("chart", "label")),
        (tab.reliability, said("reliability", "label")),
        (tab.questions_heading, said("questions", heading=True)),
        (tab.outcome_help, lambda shown_lang: view.outcome_help_html(shown_lang)),
        (tab.outcome, said("outcome", "label")),
        (tab.language, said("language", "label")),
        (tab.downloads_heading, said("downloads", heading=True)),
        (tab.compare, said("compare", "label")),
        (tab.compare_intro, said("compare_intro")),
        (tab.earlier, said("compare_upload", "label")),
        (tab.compare_file, said("compare_file")),
        (tab.compare_previous, said("compare_previous")),
        (tab.confirm, said("confirm_mismatch", "label")),
    ]


def compare_evaluation(
    runner: EvaluationRunner,
    run: FinishedRun | None,
    files: Any = None,
    use_previous: bool = False,
    lang: str = "en",
    own: tuple[int, ...] | None = None,
) -> tuple[Table | None, str]:
    """A finished run compared with uploaded earlier predictions or the run before it on this server
    (with ``own``, the ids of a page's runs: only a run of that page).

    Returns the deltas table and the fixed/broken lists as HTML (in ``lang``), or ``(None, why not)``.
    A ``.meta.json`` uploaded with the predictions adds the settings that changed.
    """
    from citeqa.app.web.evaluate.view import comparison_html, comparison_table
    from citeqa.evaluation.compare import compare_runs, load_predictions
    from citeqa.evaluation.report import meta_path

    uploaded = [(Path(upload_path(f)), unicodedata.normalize("NFKC", upload_name(f))) for f in (files or [])]
    lab = evaluate_labels(lang)
    old_records: Sequence[Mapping[str, Any]]
    old_provenance: Mapping[str, Any] | None
    try:
        if run is None:
            return None, lab["compare_no_run"]
        if use_previous:
            earlier = runner.before(run)
            if earlier is None or (own is not None and earlier.run_id not in own):
                return None, lab["compare_no_previous"]
            old_records, old_provenance, label = earlier.records(), earlier.provenance, earlier.source
        else:
            jsonl = [(p, n) for p, n in uploaded if not n.endswith(".meta.json")]
            if not jsonl:
                return None, lab["compare_no_file"]
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
                    return None, shown_error(error_said(exc, lang), copy, name)
            old_records, old_provenance, label = list(earlier_run.records), earlier_run.provenance, name
        comparison = compare_runs(
            old_records, run.records(), old_provenance=old_provenance, new_provenance=run.provenance
        )
        return comparison_table(comparison, lang), comparison_html(comparison, label, lang=lang)
    finally:
        discard_uploads(p for p, _ in uploaded)


def _stamp(path: Path) -> tuple[int, int]:
    """A file's size and modification time (0, 0 when it cannot be read): when either changes, it is read again."""
    try:
        found = path.stat()
    except OSError:
        return 0, 0
    return found.st_size, found.st_mtime_ns
