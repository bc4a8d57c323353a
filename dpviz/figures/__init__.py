"""Figure builders: data in, plotly ``go.Figure`` out. No bound is computed here and
nothing imports Streamlit."""
