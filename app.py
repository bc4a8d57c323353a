"""dpviz — Streamlit entry point: navigation between the views."""

import streamlit as st

st.set_page_config(page_title="dpviz — DP composition explorer", page_icon="🔒", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon="🏠", default=True),
    st.Page("pages/privacy_regions.py", title="Privacy regions", icon="🟦", url_path="regions"),
    st.Page("pages/composition_curves.py", title="Composition curves", icon="📈", url_path="curves"),
]

st.navigation(PAGES).run()
