"""The page's CSS and the chat's JavaScript.

Colours are explicit, not theme variables, wherever text of a reply is drawn, and the chat log sets
the theme's text variables to its own light palette (Gradio colours every ``.prose *`` with
``--body-text-color``), so that every text meets WCAG AA (4.5:1) on its own background in the light
and the dark theme alike (tests/browser/test_browser_chat.py measures both from the computed styles).
"""

from __future__ import annotations

from citeqa.qa.questions import MAX_QUESTION_CHARS

_INK, _MUTED, _LINK = "#1f2937", "#4b5563", "#1d4ed8"

#: The page's own colours where Gradio's theme falls short of WCAG AA on white (issue [3/7] item 4): the
#: primary button (white on Gradio's #f97316: 2.80:1), the stop button, the selected tab, placeholders and the
#: footer (#bbbbc2, 1.91:1); and a focus ring every control shows when reached by keyboard.
_PRIMARY, _PRIMARY_HOVER = "#c2410c", "#9a3412"  # white on them: 5.18:1 and 7.31:1
_STOP, _STOP_HOVER = "#b91c1c", "#991b1b"  # white on them: 6.47:1 and 8.31:1
_SUBDUED, _FOCUS = "#52525b", "#1d4ed8"  # on white: 7.73:1 and 6.70:1

#: The bold face. Gradio's bundled SourceSansPro-SemiBold.woff2 (its weight 600) is a 5 KB subset that holds
#: only a space, A, B and some Cyrillic letters, declared for every code point: bold text took its A and B
#: and every other letter from a fallback font, so "NVIDIA", "IA" and "GB" ended in a small capital. The page
#: uses its own family instead, regular and bold from Gradio's complete Source Sans files.
_FONTS = """
@font-face {font-family: "citeqa Sans"; font-weight: 100 500; font-style: normal;
  src: url("static/fonts/SourceSansPro/SourceSansPro-Regular.woff2") format("woff2");}
@font-face {font-family: "citeqa Sans"; font-weight: 501 900; font-style: normal;
  src: url("static/fonts/SourceSansPro/SourceSansPro-Bold.woff2") format("woff2");}
"""

CSS = (
    _FONTS
    + f"""
.gradio-container {{--font: "citeqa Sans", ui-sans-serif, system-ui, sans-serif;
  --button-primary-background-fill: {_PRIMARY}; --button-primary-background-fill-hover: {_PRIMARY_HOVER};
  --button-primary-border-color: {_PRIMARY}; --button-primary-border-color-hover: {_PRIMARY_HOVER};
  --button-primary-text-color: #ffffff; --button-primary-text-color-hover: #ffffff;
  --button-cancel-background-fill: {_STOP}; --button-cancel-background-fill-hover: {_STOP_HOVER};
  --button-cancel-border-color: {_STOP}; --button-cancel-text-color: #ffffff; --button-cancel-text-color-hover: #ffffff;
  --input-placeholder-color: {_SUBDUED}; --body-text-color-subdued: {_SUBDUED}; --color-accent: {_PRIMARY};
  --citeqa-focus: {_FOCUS};}}
.dark .gradio-container, .gradio-container.dark {{--input-placeholder-color: #a1a1aa; --body-text-color-subdued: #a1a1aa;
  --color-accent: #fb923c; --citeqa-focus: #93c5fd;}}
.gradio-container ::placeholder {{color: var(--input-placeholder-color); opacity: 1;}}
.gradio-container button.selected[role="tab"] {{color: var(--color-accent);}}
footer, footer a, footer button, footer .divider {{color: var(--body-text-color-subdued) !important; opacity: 1 !important;}}
.gradio-container :is(button, input, textarea, select, summary, a, [tabindex]):focus-visible,
#question textarea:focus {{outline: 3px solid var(--citeqa-focus) !important; outline-offset: 2px; box-shadow: none;}}
#chat .citeqa-log {{position: relative; max-height: min(68vh, 640px); overflow-y: auto; padding: 6px;
  border: 1px solid #d1d5db; border-radius: 10px; background: #ffffff; color: {_INK};
  --body-text-color: {_INK}; --body-text-color-subdued: {_MUTED}; --link-text-color: {_LINK};
  --link-text-color-hover: {_LINK}; --link-text-color-visited: {_LINK}; color-scheme: light;}}
.citeqa-empty {{color: {_MUTED}; margin: 12px 6px;}}
.citeqa-msg {{border-radius: 10px; padding: 8px 12px; margin: 8px 0; line-height: 1.5; color: {_INK};
  overflow-wrap: anywhere;}}
.citeqa-user {{background: #eff6ff; color: #1e3a8a; margin-left: 12%; border: 1px solid #bfdbfe;}}
.citeqa-bot {{background: #ffffff; border: 1px solid #e5e7eb; margin-right: 4%;}}
.citeqa-source {{border: 1px solid #d1d5db; border-radius: 8px; padding: 8px 10px; margin: 8px 0;
  background: #ffffff; color: {_INK}; scroll-margin: 12px;}}
.citeqa-secondary {{background: #f3f4f6; border-style: dashed; color: #374151;}}
.citeqa-flash {{animation: citeqa-flash 1.6s ease-out; outline: 3px solid #f59e0b;}}
@keyframes citeqa-flash {{from {{background: #fef3c7;}} to {{background: inherit;}}}}
.citeqa-where {{color: {_MUTED}; font-size: 0.85em;}}
.citeqa-passage {{margin-top: 6px; line-height: 1.45;}}
.citeqa-heading {{font-weight: 600; color: #111827;}}
.citeqa-badge {{background: #fde68a; color: #713f12; border-radius: 6px; padding: 0 6px; font-size: 0.8em;}}
.citeqa-holds {{background: #dcfce7; color: #14532d; border-radius: 6px; padding: 0 6px; font-size: 0.8em;}}
.citeqa-sources h3 {{font-size: 0.95em; margin: 10px 0 2px; color: {_INK}; font-weight: 600;}}
.citeqa-closest h3 {{color: {_MUTED}; font-style: italic;}}
.citeqa-more > summary, .citeqa-context summary, .citeqa-formats summary {{min-height: 24px; line-height: 24px;
  cursor: pointer; color: {_LINK};
  font-size: 0.9em; margin-top: 4px;}}
.citeqa-context div {{background: #f3f4f6; color: {_INK}; padding: 6px 8px; border-radius: 6px; line-height: 1.45;}}
.citeqa-cited {{background: #dbeafe; color: {_INK}; border-radius: 3px;}}
a.citeqa-ref {{color: {_LINK}; font-weight: 600; text-decoration: none; font-size: 0.85em; vertical-align: super;}}
a.citeqa-ref:hover, a.citeqa-ref:focus {{text-decoration: underline;}}
.citeqa-short {{font-size: 1.2em; color: #111827;}}
.citeqa-sentence {{color: #374151; line-height: 1.45;}}
.citeqa-possible-label {{font-weight: 600; color: #7c2d12;}}
.citeqa-note {{color: {_MUTED}; font-size: 0.85em;}}
.citeqa-meta {{margin-top: 4px; font-size: 0.85em;}}
.citeqa-confidence {{border-radius: 6px; padding: 0 6px; cursor: help;}}
.citeqa-confidence-high {{background: #dcfce7; color: #14532d;}}
.citeqa-confidence-likely {{background: #dbeafe; color: #1e3a8a;}}
.citeqa-confidence-unsure, .citeqa-confidence-none {{background: #ffedd5; color: #7c2d12;}}
mark {{background: #fef08a; color: #111827; padding: 0 2px; border-radius: 3px;}}
.citeqa-tools {{margin-top: 6px; display: flex; flex-wrap: wrap; gap: 6px; align-items: center; font-size: 0.85em;}}
.citeqa-tools button {{border: 1px solid #9ca3af; border-radius: 6px; padding: 1px 8px; color: {_INK};
  background: #f9fafb; cursor: pointer; font-size: 0.9em; font-weight: normal;
  min-height: 24px; min-width: 24px;}}
.citeqa-formats {{flex-basis: 100%;}}
.citeqa-format {{white-space: pre-wrap; font-size: 0.85em; background: #f3f4f6; color: {_INK};
  padding: 4px 6px; border-radius: 6px; margin: 4px 0;}}
.citeqa-head b {{cursor: pointer;}}
.citeqa-relation {{border-radius: 6px; padding: 0 6px; font-size: 0.8em; background: #e5e7eb; color: #111827;}}
.citeqa-supports {{background: #bbf7d0; color: #14532d;}}
.citeqa-conflicts {{background: #fecaca; color: #7f1d1d;}}
.citeqa-verdict-supported {{color: #15803d;}}
.citeqa-verdict-conflicting {{color: #b91c1c;}}
.citeqa-verdict-not-found {{color: #92400e;}}
.citeqa-values {{margin-top: 4px; font-size: 0.9em;}}
#question-info {{font-size: 0.85em; color: var(--body-text-color-subdued); display: flex; justify-content: space-between; gap: 8px;
  align-items: baseline; margin-top: -8px;}}
#question-count {{margin-left: auto; white-space: nowrap;}}
#question-info .citeqa-over {{color: #991b1b; background: #fef2f2; font-weight: 600; border-radius: 4px;
  padding: 0 4px;}}
.citeqa-refusal {{color: #991b1b; background: #fef2f2; border: 1px solid #fecaca; border-radius: 8px;
  padding: 2px 10px; margin: 0;}}
#ask-row {{align-items: stretch;}}
.citeqa-doc {{white-space: pre-wrap; max-height: 60vh; overflow-y: auto; line-height: 1.5; padding: 8px 10px;
  border: 1px solid var(--border-color-primary); border-radius: 8px;}}
mark.citeqa-given, .citeqa-key-given {{background: #bfdbfe; color: #111827; padding: 0 2px; border-radius: 3px;}}
mark.citeqa-gold, .citeqa-key-gold {{background: #bbf7d0; color: #111827; box-shadow: inset 0 -3px #15803d;}}
mark.citeqa-gold.citeqa-given {{background: #bfdbfe;}}
.citeqa-eval-question {{font-size: 1.1em; font-weight: 600;}}
.citeqa-eval-status progress {{width: 40%; vertical-align: middle;}}
.citeqa-eval-error {{color: #b91c1c; font-weight: 600;}}
.citeqa-outcome {{border-radius: 6px; padding: 0 6px; background: #fee2e2; color: #7f1d1d;}}
.citeqa-outcome-right, .citeqa-outcome-right-abstention {{background: #dcfce7; color: #14532d;}}
.citeqa-from-gold, .citeqa-relevant {{background: #dcfce7; color: #14532d;}}
.citeqa-record {{white-space: pre-wrap; font-size: 0.85em;}}
#eval-browse {{align-items: flex-start;}}
#eval-detail .citeqa-eval-detail {{max-height: 680px; overflow-y: auto; padding-right: 4px;}}
.citeqa-cards {{display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 8px; margin: 4px 0;}}
.citeqa-card {{border: 1px solid #d1d5db; border-left-width: 6px; border-radius: 8px; padding: 6px 10px;
  background: #ffffff; color: {_INK}; --body-text-color: {_INK};}}
.citeqa-card-met {{border-left-color: #15803d;}}
.citeqa-card-missed {{border-left-color: #b91c1c;}}
.citeqa-card-none {{border-left-color: #9ca3af;}}
.citeqa-card-mismatch {{border-left-color: #b45309; border-left-style: dashed;}}
.citeqa-fit-warning {{color: #7c2d12; background: #fff7ed; border: 1px solid #fdba74; border-left: 6px solid {_PRIMARY};
  border-radius: 8px; padding: 6px 10px; font-weight: 600; margin: 4px 0;}}
.citeqa-card-name {{font-size: 0.85em; color: {_MUTED};}}
.citeqa-card-value {{font-size: 1.5em; font-weight: 700;}}
.citeqa-card-target {{font-size: 0.8em; color: {_MUTED};}}
.citeqa-outcomes {{font-size: 0.9em; margin: 0;}}
@media (max-width: 640px) {{
  .citeqa-user {{margin-left: 0;}} .citeqa-bot {{margin-right: 0;}}
  #chat .citeqa-log {{max-height: 60vh;}}
}}
"""
)

#: The chat's clicks and the question box. A [n] link brings its card into view (opening the fold
#: it is in) and flashes it; copy buttons copy a citation format (the text stays shown in the fold
#: when the browser refuses); a title or "Open document" opens the document (a "select" event).
#: A new turn scrolls the log to its question. Ask is disabled while the box is blank or over the
#: limit, and the counter under the box says how many characters there are.
CHAT_JS = """
const LIMIT = __LIMIT__;
const flash = (card) => {
  card.classList.remove('citeqa-flash'); void card.offsetWidth; card.classList.add('citeqa-flash');
  setTimeout(() => card.classList.remove('citeqa-flash'), 1600);
};
element.addEventListener('click', async (event) => {
  const ref = event.target.closest('a.citeqa-ref');
  if (ref) {
    event.preventDefault();
    const card = document.getElementById(ref.dataset.target);
    if (!card) return;
    const fold = card.closest('details'); if (fold) fold.open = true;
    const log = card.closest('.citeqa-log');
    if (log) log.scrollTop += card.getBoundingClientRect().top - log.getBoundingClientRect().top - 8;
    const r = card.getBoundingClientRect();
    if (r.top < 0 || r.top > innerHeight - 40) card.scrollIntoView({block: 'start'});
    card.focus({preventScroll: true}); flash(card);
    return;
  }
  const copy = event.target.closest('[data-citeqa-copy]');
  if (copy) {
    const tools = copy.closest('.citeqa-tools');
    const pre = tools.querySelector('pre[data-format="' + copy.dataset.citeqaCopy + '"]');
    const text = pre ? pre.textContent : '';
    let done = false;
    try { await navigator.clipboard.writeText(text); done = true; } catch (e) { done = false; }
    if (!done) {
      const fold = tools.querySelector('details'); if (fold) fold.open = true;
      const range = document.createRange(); range.selectNodeContents(pre);
      const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      try { done = document.execCommand('copy'); } catch (e) { done = false; }
    }
    copy.dataset.copied = done ? 'yes' : 'no';
    copy.textContent = (done ? '\\u2713 ' : '') + copy.dataset.label;
    return;
  }
  const open = event.target.closest('.citeqa-open, .citeqa-head b');
  if (open) {
    const tools = open.closest('.citeqa-source').querySelector('.citeqa-tools');
    if (tools) trigger('select', {doc: tools.dataset.doc, start: Number(tools.dataset.start),
                                  end: Number(tools.dataset.end)});
  }
});
const toLatest = () => setTimeout(() => {
  const log = element.querySelector('.citeqa-log'); if (!log) return;
  const asked = log.querySelectorAll('.citeqa-user');
  if (asked.length) log.scrollTop = asked[asked.length - 1].offsetTop - 6;
}, 30);
watch('value', toLatest);
const sync = () => {
  const box = document.querySelector('#question textarea'), ask = document.querySelector('#ask');
  if (!box || !ask) return;
  const n = box.value.length, ok = box.value.trim().length > 0 && n <= LIMIT;
  if (ask.disabled === ok) { ask.disabled = !ok; ask.setAttribute('aria-disabled', String(!ok)); }
  const count = document.querySelector('#question-count');
  if (count) {
    const text = (count.dataset.format || '{n} / {limit}').replace('{n}', n).replace('{limit}', LIMIT);
    if (count.textContent !== text) count.textContent = text;
    count.classList.toggle('citeqa-over', n > LIMIT);
  }
};
document.addEventListener('input', sync, true);
setInterval(sync, 200);
sync();
""".replace("__LIMIT__", str(MAX_QUESTION_CHARS))

#: The document viewer brings the cited passage into view whenever it shows a document.
VIEWER_JS = """
const show = () => setTimeout(() => {
  const mark = element.querySelector('mark#cited');
  if (mark) mark.scrollIntoView({block: 'center'});
}, 60);
watch('value', show);
show();
"""
