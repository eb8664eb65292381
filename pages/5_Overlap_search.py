"""Train/test overlap: build and manage indexes of training sets, search them with a test set, report
contamination and download decontaminated training files."""

from __future__ import annotations

import os

import streamlit as st

from core.errors import DataError, LeakLensError
from core.overlap.backends import get_backend
from core.overlap.indexing import DEFAULT_NGRAM_SIZE, build_index
from core.overlap.matching import DEFAULT_SEARCH_SIZE, SearchSettings
from core.overlap.run import results_dir, run_search
from core.overlap.sources import skipped_note, training_sources
from ui.common import streamlit_progress
from ui.dataset_picker import dataset_picker, demo_examples
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.overlap import (
    BuiltIndex,
    ShownSearch,
    built_note,
    eval_set_label,
    index_table,
    indexes_input,
    load_test_set,
    search_results,
    training_datasets,
)
from ui.presentation import how_to_make, show_linked_result

# (Comments, not docstrings: a bare string in a page script is drawn on the page.)
RESULT_KEY = "overlap_result"
BUILD_KEY = "overlap_built"  # the last build's outcome, shown at the top until a search supersedes it
BUILT_NOW_KEY = "overlap_built_now"  # set by a build that just ended: this draw brings its outcome into view

INTRO = (
    "Index training sets, search them with every instance of a test set, and see how much of each instance "
    "appears in training data. n-gram: share of the test tokens covered by N-word sequences of the best "
    "training document; exact: whole instance found verbatim; vector: cosine similarity of the nearest "
    "document. The embedded index is exact and needs no server; Elasticsearch serves large, shared corpora."
)
PRESENT_INTRO = (
    "**Were the test questions already in the training data?** Every test item is searched in the training "
    "data; an item whose words appear there was seen before, and its score says how much of it was copied "
    "(1 = word for word)."
)
frame = result_first_page(
    "Overlap search", INTRO, has_result=RESULT_KEY in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (), how_to_make=how_to_make("search an index"))

with frame.setup:
    backend_kind = st.radio(
        "Backend",
        ["embedded", "elasticsearch"],
        key="overlap_backend",
        horizontal=True,
        help="Embedded: exact indexes on this machine, no server. Elasticsearch: a cluster "
        "you run, for large and shared corpora.",
    )
    es_url, es_ca_certs, es_verify = "", "", True
    if backend_kind == "elasticsearch":
        es_cols = st.columns(3)
        es_url = es_cols[0].text_input(
            "Elasticsearch URL",
            value=os.environ.get("ES_URL", ""),
            key="overlap_es_url",
            help="Credentials come from ELASTIC_USER / ELASTIC_PASSWORD or ELASTIC_API_KEY.",
        )
        es_ca_certs = es_cols[1].text_input(
            "CA certificate (HTTPS clusters)",
            value=os.environ.get("ELASTIC_CA_CERTS", ""),
            key="overlap_es_ca_certs",
            help="PEM file of the CA that signed the cluster's certificate; ES 8+ "
            "writes it to config/certs/http_ca.crt.",
        )
        es_verify = es_cols[2].checkbox(
            "Verify the TLS certificate",
            value=True,
            key="overlap_es_verify",
            help="Turn off only on a network you trust: without it anyone on the path can read and change the traffic.",
        )

    tab_indexes, tab_search = st.tabs(["Indexes", "Search"])

    with tab_indexes:
        try:
            backend = get_backend(
                backend_kind, es_url=es_url or None, es_ca_certs=es_ca_certs or None, es_verify_certs=es_verify
            )
            if getattr(backend, "tls_warning", None):
                st.warning(backend.tls_warning)
            infos = backend.list()
        except LeakLensError as exc:
            st.error(str(exc))
            backend, infos = None, []
        # The list is drawn above the build form but filled after it, so that an index built in this run
        # is listed (and searchable) at once, without another rerun.
        listing = st.container()
        build = False
        if backend is not None:
            st.subheader("Build an index")
            train = dataset_picker(
                "Training sets",
                demo_examples("overlap-train"),
                key="overlap_train",
                several=True,
                path_placeholder="/data/train.jsonl, /data/chat.jsonl",
                hub_placeholder="allenai/tulu-3-sft-mixture",
                split_placeholder="train",
            )
            with st.form("overlap_build"):
                name = st.text_input("Index name", key="overlap_name", placeholder="e.g. tulu-mix")
                mixer = st.text_input(
                    "Dataset-mixer YAML path (optional: its datasets are indexed too)", key="overlap_mixer"
                )
                col1, col2, col3, col4 = st.columns(4)
                text_field = col1.text_input("Text field", value="text", key="overlap_text_field")
                messages_field = col2.text_input("Messages field (conversations)", key="overlap_messages_field")
                query_filter = col3.text_input("Turn filter", value="role:user", key="overlap_query_filter")
                query_field = col4.text_input("Turn text field", value="content", key="overlap_query_field")
                col5, col6, col7 = st.columns(3)
                index_type = col5.selectbox("Index type", ["text", "vector"], key="overlap_index_type")
                model = col6.text_input("Embedding model (vector)", value="all-MiniLM-L6-v2", key="overlap_model")
                ngram_size = col7.number_input(
                    "n-gram size (text)", 1, 64, DEFAULT_NGRAM_SIZE, key="overlap_build_ngram"
                )
                overwrite = st.checkbox("Replace an index of the same name", key="overlap_overwrite")
                build = st.form_submit_button("Build index", type="primary")
        if build:
            with frame.result:  # progress, then the outcome, where the eye is when the build ends
                scroll_to_result_area()
                slot = st.empty()
                try:
                    sources = training_sources(
                        training_datasets(train),
                        text_field=text_field,
                        messages_field=messages_field,
                        query_filter=query_filter,
                        query_field=query_field,
                        split=train.split if train else None,
                        config=train.config if train else None,
                        mixer_config=mixer,
                    )
                    with slot.container():
                        result = build_index(
                            backend,
                            name,
                            sources,
                            index_type=index_type,
                            ngram_size=int(ngram_size),
                            model=model.strip() or None,
                            overwrite=overwrite,
                            progress=streamlit_progress("Indexing documents"),
                        )
                    slot.empty()
                    notes = tuple(n for n in (skipped_note(d, s) for d, s in result.skipped.items()) if n)
                    st.session_state[BUILD_KEY] = BuiltIndex(
                        result.info.name, result.info.n_docs, result.info.size_bytes, notes
                    )
                    st.session_state[BUILT_NOW_KEY] = True
                    infos = backend.list()
                except LeakLensError as exc:
                    slot.empty()
                    st.error(str(exc))

        with listing:
            if infos:
                index_table(infos)
                with st.form("overlap_delete"):
                    doomed = st.selectbox("Index to delete", [i.name for i in infos], key="overlap_delete_name")
                    if st.form_submit_button("Delete index"):
                        try:
                            backend.delete(doomed)
                            built = st.session_state.get(BUILD_KEY)
                            if built is not None and built.name == doomed:
                                st.session_state.pop(BUILD_KEY, None)
                            st.success(f"Deleted {doomed}.")
                            st.rerun()
                        except LeakLensError as exc:
                            st.error(str(exc))
            elif backend is not None:
                st.info("No indexes yet: build one below.")

    with tab_search:
        names = [i.name for i in infos]
        if not names:
            st.info("Build an index first (Indexes tab): the ready example indexes a small demo corpus in seconds.")
        test = dataset_picker(
            "Test set",
            demo_examples("overlap-test"),
            key="overlap_test",
            path_placeholder="/data/eval.jsonl",
            hub_placeholder="cais/mmlu",
            split_placeholder="test",
        )
        # No form: a form would search on Enter in any field, and would show edited values the results do not
        # reflect.
        with st.container(border=True):
            # Drawn only once an index exists, so that the first index built becomes the default choice.
            chosen = st.multiselect("Indexes", names, default=names[:1], key="overlap_indexes") if names else []
            col1, col2, col3 = st.columns(3)
            field = col1.text_input("Text field", placeholder="auto: question, text, prompt, …", key="overlap_field")
            id_field = col2.text_input("Id field (optional)", key="overlap_id_field")
            mode = col3.selectbox("Mode", ["ngram", "exact", "vector"], key="overlap_mode")
            col4, col5, col6 = st.columns(3)
            n = col4.number_input("n-gram size", 1, 64, DEFAULT_NGRAM_SIZE, key="overlap_ngram")
            threshold = col5.number_input(
                "Match threshold (empty: raw scores)", 0.0, 1.0, value=None, step=0.05, key="overlap_threshold"
            )
            search_size = col6.number_input(
                "Search size (Elasticsearch)", 1, 10000, DEFAULT_SEARCH_SIZE, key="overlap_search_size"
            )
            clean = st.checkbox("Write decontaminated training files", key="overlap_decontaminate")
            go = st.button("Search", type="primary", key="overlap_search", disabled=not names)
        inputs = [
            setting("backend", f"{backend_kind} {es_url}".strip()),
            indexes_input(chosen, infos),
            setting("test set", test),
            setting("text field", field.strip() or "auto"),
            setting("id field", id_field.strip() or None),
            setting("mode", mode),
            setting("n-gram size", int(n)),
            setting("match threshold", threshold),
            setting("search size", int(search_size)),
            setting("decontaminated files", clean),
        ]

with frame.result:
    if go:
        scroll_to_result_area()
        try:
            if test is None:
                raise DataError("Give a test set: a ready example, an upload, a file path or a hub dataset id.")
            settings = SearchSettings(
                mode=mode, ngram_size=int(n), match_threshold=threshold, search_size=int(search_size)
            )
            test_set = load_test_set(test, field.strip() or None, id_field.strip() or None)
            outcome = run_search(
                backend,
                chosen,
                [test_set],
                settings,
                results_dir(),
                clean=clean,
                progress=streamlit_progress("Searching test instances"),
            )
            models = sorted({i.model for i in infos if i.name in chosen and i.model})
            shown_search = ShownSearch(
                outcome, eval_set_label(test), tuple(chosen), ", ".join(models) or "no model (text search)"
            )
            st.session_state.pop(BUILD_KEY, None)  # the verdict is now the page's news
            finish_run(RESULT_KEY, shown_search, inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    if BUILD_KEY in st.session_state:
        built_note(st.session_state[BUILD_KEY])
        if st.session_state.pop(BUILT_NOW_KEY, False):
            scroll_to_result_area()
    shown = show_result(RESULT_KEY, inputs, search_results, action="Search")
    if shown:
        scroll_after_run()
    elif not (linked or frame.present) and BUILD_KEY not in st.session_state and not names:
        st.info(
            "Start in Setup: on the *Indexes* tab build an index of a training set (the ready example is a "
            "small demo corpus), then search it from the *Search* tab."
        )
