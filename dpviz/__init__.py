"""dpviz: how differential privacy degrades under composition.

The package is layered one way only: math modules (numpy/scipy, no plotting) →
``dpviz.figures`` (data → plotly Figure) → the Streamlit pages. Nothing under
``dpviz`` imports Streamlit except ``dpviz.ui``.
"""

from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import ParameterError

__all__ = ["Guarantee", "Kind", "ParameterError"]
__version__ = "0.1.0"
