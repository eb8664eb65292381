"""The sidebar's served-model choice: a server's URL, its model and key variable, and Check connection."""

from __future__ import annotations

import streamlit as st

from core.engine.served import Endpoint, ServedModel, connect
from core.errors import LeakLensError

SERVED_LABEL = "Served model (vLLM or OpenAI-compatible URL)…"
SERVED_PAGES = "every page that tests a model (Overlap search needs none)"
"""Where a served model runs: every test that reads a model."""


def served_model_inputs(where, key: str) -> ServedModel | None:
    """The served model once Check connection has reached it (kept by the session while it stays chosen)."""
    url = where.text_input("Server URL", key=f"{key}_url", placeholder="http://gpu-node:8000/v1")
    name = where.text_input("Model on the server", key=f"{key}_served", placeholder="the only one it serves")
    key_var = where.text_input(
        "API key variable",
        key=f"{key}_key_var",
        placeholder="e.g. VLLM_API_KEY (optional)",
        help="The name of an environment variable of the LeakLens server that holds the key: the key itself "
        "is never typed here, shown or stored.",
    )
    if where.button("Check connection", key=f"{key}_check", disabled=not url.strip()):
        try:
            reached = connect(Endpoint(url.strip(), model=name.strip() or None, api_key_env=key_var.strip() or None))
        except LeakLensError as exc:
            where.error(str(exc))
            return None
        st.session_state[f"{key}_connected"] = reached
    served: ServedModel | None = st.session_state.get(f"{key}_connected")
    if served is None:
        where.caption(f"Enter the server's URL and press **Check connection**. Runs on: {SERVED_PAGES}.")
        return None
    version = f"vLLM {served.server_version}" if served.server_version else "an OpenAI-compatible server"
    where.caption(
        f"Connected to {version}: **{served.name}** ({served.model_root}), context {served.max_context:,} tokens. "
        f"Runs on: {SERVED_PAGES}."
    )
    return served
