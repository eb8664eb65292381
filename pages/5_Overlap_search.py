"""Train/test overlap: build and manage indexes of training sets, search them with a test set, report
contamination and download decontaminated training files."""

from __future__ import annotations

import html
import os
import tempfile
from pathlib import Path

import streamlit as st

from core.config import cache_subdir
from core.errors import LeakLensError
from core.overlap.backends import get_backend
from core.overlap.decontaminate import decontaminate
from core.overlap.indexing import DEFAULT_NGRAM_SIZE, build_index
from core.overlap.matching import DEFAULT_SEARCH_SIZE, SearchSettings, search
from core.overlap.report import write_outputs
from core.overlap.sources import TrainingSource, dataset_name, eval_set_from_table, parse_mixer, parse_query_filter
from core.viz.overlap_plots import contamination_heatmap, highlighted_html
from core.data.tables import load_rows, load_uploaded
from ui.common import model_picker, page_setup, streamlit_progress

RESULT_KEY = "overlap_result"
MAX_SHOWN = 50
STYLE = """<style>
.ll-pair {display:grid; grid-template-columns:1fr 1fr; gap:12px; margin-bottom:6px}
.ll-pair div {border:1px solid #ddd; border-radius:6px; padding:8px; white-space:pre-wrap; font-size:0.9rem}
mark.ll-match {background:#ffb4a2; padding:0 1px; border-radius:2px}
</style>"""

page_setup("Overlap search")
model_picker()
st.title("Train/test overlap search")
st.caption(
    "Index training sets, search them with every instance of a test set, and see how much of each instance "
    "appears in training data. n-gram: share of the test tokens covered by N-word sequences of the best "
    "training document; exact: whole instance found verbatim; vector: cosine similarity of the nearest "
    "document. The embedded index is exact and needs no server; Elasticsearch serves large, shared corpora."
)

with st.sidebar:
    backend_kind = st.radio("Backend", ["embedded", "elasticsearch"], key="overlap_backend", horizontal=True)
    es_url = ""
    if backend_kind == "elasticsearch":
        es_url = st.text_input("Elasticsearch URL", value=os.environ.get("ES_URL", ""), key="overlap_es_url",
                               help="Credentials come from ELASTIC_USER / ELASTIC_PASSWORD or ELASTIC_API_KEY.")


def _backend():
    return get_backend(backend_kind, es_url=es_url or None)


def _save_upload(upload) -> str:
    """Uploaded training files are kept in the cache so the index can re-read them to decontaminate."""
    folder = cache_subdir("uploads")
    path = folder / Path(upload.name).name
    path.write_bytes(upload.getvalue())
    return str(path)


def _show_skipped(label: str, skipped) -> None:
    if skipped:
        lines = ", ".join(str(s.line) for s in skipped[:30])
        more = "" if len(skipped) <= 30 else f" and {len(skipped) - 30} more"
        st.warning(f"{label}: skipped {len(skipped)} rows (lines {lines}{more}): {skipped[0].reason}.")


tab_indexes, tab_search = st.tabs(["Indexes", "Search"])

with tab_indexes:
    try:
        backend = _backend()
        infos = backend.list()
    except LeakLensError as exc:
        st.error(str(exc))
        backend, infos = None, []
    if backend is not None:
        if infos:
            st.dataframe(
                [
                    {"name": i.name, "type": i.index_type, "documents": i.n_docs,
                     "size (MiB)": round(i.size_bytes / 2**20, 3),
                     "training sets": ", ".join(f"{d} ({n})" for d, n in i.datasets.items()),
                     "model": i.model or ""}
                    for i in infos
                ],
                hide_index=True,
                key="overlap_index_table",
            )
            with st.form("overlap_delete"):
                doomed = st.selectbox("Index to delete", [i.name for i in infos], key="overlap_delete_name")
                if st.form_submit_button("Delete index"):
                    try:
                        backend.delete(doomed)
                        st.success(f"Deleted {doomed}.")
                        st.rerun()
                    except LeakLensError as exc:
                        st.error(str(exc))
        else:
            st.info("No indexes yet: build one below.")

        st.subheader("Build an index")
        with st.form("overlap_build"):
            name = st.text_input("Index name", key="overlap_name", placeholder="e.g. tulu-mix")
            source_text = st.text_input("Training sets: local files or hub dataset ids (comma-separated)",
                                        key="overlap_train_source")
            upload = st.file_uploader("…or upload a JSONL / CSV / Parquet file", type=["jsonl", "json", "csv", "parquet"],
                                      key="overlap_train_upload")
            mixer = st.text_input("…or a dataset-mixer YAML path", key="overlap_mixer")
            col1, col2, col3, col4 = st.columns(4)
            text_field = col1.text_input("Text field", value="text", key="overlap_text_field")
            messages_field = col2.text_input("Messages field (conversations)", key="overlap_messages_field")
            query_filter = col3.text_input("Turn filter", value="role:user", key="overlap_query_filter")
            query_field = col4.text_input("Turn text field", value="content", key="overlap_query_field")
            col5, col6, col7 = st.columns(3)
            index_type = col5.selectbox("Index type", ["text", "vector"], key="overlap_index_type")
            model = col6.text_input("Embedding model (vector)", value="all-MiniLM-L6-v2", key="overlap_model")
            ngram_size = col7.number_input("n-gram size (embedded text)", 1, 64, DEFAULT_NGRAM_SIZE,
                                           key="overlap_build_ngram")
            overwrite = st.checkbox("Replace an index of the same name", key="overlap_overwrite")
            build = st.form_submit_button("Build index", type="primary")
        if build:
            try:
                options = {
                    "text_field": text_field.strip() or "text",
                    "messages_field": messages_field.strip() or None,
                    "query_filter": parse_query_filter(query_filter.strip()) if messages_field.strip() else None,
                    "query_field": query_field.strip() or "content",
                }
                sources = [TrainingSource(s.strip(), **options) for s in source_text.split(",") if s.strip()]
                if upload is not None:
                    sources.append(TrainingSource(_save_upload(upload), **options))
                if mixer.strip():
                    sources += parse_mixer(mixer.strip(), **options)
                if not sources:
                    raise LeakLensError("Give a training set: a path or hub id, an upload, or a dataset-mixer YAML.")
                result = build_index(backend, name, sources, index_type=index_type, ngram_size=int(ngram_size),
                                     model=model.strip() or None, overwrite=overwrite,
                                     progress=streamlit_progress("Indexing documents"))
                st.success(f"Built {result.info.name}: {result.info.n_docs} documents "
                           f"({result.info.size_bytes / 2**20:.2f} MiB).")
                for dataset, skipped in result.skipped.items():
                    _show_skipped(dataset, skipped)
                st.button("Refresh the list", key="overlap_refresh")
            except LeakLensError as exc:
                st.error(str(exc))

with tab_search:
    names = [i.name for i in infos]
    if not names:
        st.info("Build an index first (Indexes tab).")
    else:
        with st.form("overlap_search"):
            chosen = st.multiselect("Indexes", names, default=names[:1], key="overlap_indexes")
            test_source = st.text_input("Test set: local file or hub dataset id", key="overlap_test_source")
            test_upload = st.file_uploader("…or upload a test set", type=["jsonl", "json", "csv", "parquet"],
                                           key="overlap_test_upload")
            col1, col2, col3 = st.columns(3)
            field = col1.text_input("Text field", value="question", key="overlap_field")
            id_field = col2.text_input("Id field (optional)", key="overlap_id_field")
            mode = col3.selectbox("Mode", ["ngram", "exact", "vector"], key="overlap_mode")
            col4, col5, col6 = st.columns(3)
            n = col4.number_input("n-gram size", 1, 64, DEFAULT_NGRAM_SIZE, key="overlap_ngram")
            threshold = col5.text_input("Match threshold (empty: raw scores)", key="overlap_threshold")
            search_size = col6.number_input("Search size (Elasticsearch)", 1, 10000, DEFAULT_SEARCH_SIZE,
                                            key="overlap_search_size")
            clean = st.checkbox("Write decontaminated training files", key="overlap_decontaminate")
            go = st.form_submit_button("Search", type="primary")
        if go:
            try:
                try:
                    value = float(threshold) if threshold.strip() else None
                except ValueError as exc:
                    raise LeakLensError(f"The match threshold must be a number in [0, 1], not '{threshold}'.") from exc
                settings = SearchSettings(mode=mode, ngram_size=int(n), match_threshold=value,
                                          search_size=int(search_size))
                if test_upload is not None:
                    table = load_uploaded(test_upload.getvalue(), test_upload.name)
                    eval_name = dataset_name(test_upload.name)
                elif test_source.strip():
                    table = load_rows(test_source.strip())
                    eval_name = dataset_name(test_source.strip())
                else:
                    raise LeakLensError("Give a test set: a path or hub id, or upload a file.")
                test_set = eval_set_from_table(table, field.strip(), name=eval_name,
                                               id_field=id_field.strip() or None)
                matches = search(backend, chosen, [test_set], settings,
                                 progress=streamlit_progress("Searching test instances"))
                out_dir = Path(tempfile.mkdtemp(prefix="leaklens-overlap-"))
                report, paths = write_outputs(matches, out_dir)
                cleaned = decontaminate(backend, matches, [test_set], settings, out_dir) if clean else []
                st.session_state[RESULT_KEY] = {"matches": matches, "report": report, "paths": paths,
                                                "cleaned": cleaned, "skipped": test_set.skipped}
            except LeakLensError as exc:
                st.error(str(exc))

    result = st.session_state.get(RESULT_KEY)
    if result:
        _show_skipped("Test set", result["skipped"])
        report = result["report"]
        st.plotly_chart(contamination_heatmap(report), key="overlap_heatmap")
        st.dataframe([dict(zip(report.table()[0], row)) for row in report.table()[1:]], hide_index=True,
                     key="overlap_report_table")
        cols = st.columns(4)
        for i, path in enumerate(result["paths"]):
            cols[i % 4].download_button(f"⬇ {path.name}", path.read_bytes(), file_name=path.name,
                                        key=f"overlap_dl_{i}")
        for i, c in enumerate(result["cleaned"]):
            note = "" if c.still_matching is None else f"; re-check: {c.still_matching} instances still match"
            st.write(f"**{c.dataset}**: removed {c.n_removed} of {c.n_rows} rows{note}")
            st.download_button(f"⬇ {c.path.name}", c.path.read_bytes(), file_name=c.path.name,
                               key=f"overlap_clean_{i}")

        st.subheader("Instances by score")
        ranked = sorted(result["matches"], key=lambda m: (-m.value, m.eval_name, m.test_id))
        shown = [m for m in ranked if m.value > 0][:MAX_SHOWN]
        st.caption(f"{sum(m.value > 0 for m in ranked)} of {len(ranked)} (instance, training set) pairs have a match; "
                   f"showing the top {len(shown)}. Highlighted: the matched words in the test instance (left) and "
                   "in the best training document (right).")
        blocks = [STYLE]
        for m in shown:
            doc = m.best
            where = f"{m.train_dataset} row {doc.row}" + ("" if doc.turn is None else f" turn {doc.turn}")
            blocks.append(
                f"<p><b>{html.escape(m.test_id)}</b> · score {m.score:.3f} (value {m.value:.3f}) · "
                f"{html.escape(where)}</p><div class='ll-pair'><div>{highlighted_html(m.test_text, m.test_spans)}"
                f"</div><div>{highlighted_html(doc.text, m.train_spans)}</div></div>"
            )
        st.html("".join(blocks))
