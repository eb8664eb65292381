"""Streamlit helpers shared by the pages (thin: no scoring logic here)."""
