"""Every Plotly figure and HTML fragment, and the self-contained HTML report; no statistics computed here."""
