"""dpviz — Streamlit entry point: navigation between the views."""

import streamlit as st

st.set_page_config(page_title="dpviz — DP composition explorer", page_icon=":material/shield_lock:",
                   layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/privacy_regions.py", title="Privacy regions", icon=":material/square:",
            url_path="regions"),
    st.Page("pages/composition_curves.py", title="Composition curves", icon=":material/show_chart:",
            url_path="curves"),
]

st.navigation(PAGES).run()
