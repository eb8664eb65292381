"""LeakLens engine: has this model seen this text before?

Everything the dashboard and the CLI do lives here, importable without Streamlit.
"""

__version__ = "0.1.0"
