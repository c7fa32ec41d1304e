"""/check runs in a Gradio concurrency group of its own (app/web/holder.py's CHECK_GROUP)."""

from __future__ import annotations


def test_check_runs_in_a_concurrency_group_of_its_own(holder) -> None:
    """Sixteen checks at once cannot take every worker /ask and the chat answer in."""
    import gradio as gr

    from citeqa.app.web.api import add_endpoints
    from citeqa.app.web.holder import ANSWER_CONCURRENCY, ANSWER_GROUP, CHECK_CONCURRENCY, CHECK_GROUP

    with gr.Blocks() as blocks:
        add_endpoints(gr, holder)
    groups = {f.api_name: (f.concurrency_id, f.concurrency_limit) for f in blocks.fns.values()}
    assert groups["ask"] == (ANSWER_GROUP, ANSWER_CONCURRENCY)
    assert groups["check"] == (CHECK_GROUP, CHECK_CONCURRENCY)
    assert CHECK_GROUP != ANSWER_GROUP and CHECK_CONCURRENCY < ANSWER_CONCURRENCY
