"""BibTeX for the sources behind each view (docs/REFERENCES.md lists them with their versions):
what a report that quotes a dpviz number should cite. Data only."""

from __future__ import annotations

BIBTEX: dict[str, str] = {
    "KOV": """@article{KOV,
  author  = {Peter Kairouz and Sewoong Oh and Pramod Viswanath},
  title   = {The Composition Theorem for Differential Privacy},
  journal = {IEEE Transactions on Information Theory},
  volume  = {63},
  number  = {6},
  year    = {2017},
  note    = {ICML 2015; arXiv:1311.0776v4},
}""",
    "HBW": """@misc{HBW,
  author = {Valentin Hartmann and Vincent Bindschaedler and Robert West},
  title  = {On the Choice of Databases in Differential Privacy Composition},
  year   = {2022},
  note   = {arXiv:2209.13697},
}""",
    "Steinke": """@incollection{Steinke,
  author    = {Thomas Steinke},
  title     = {Composition of Differential Privacy \\& Privacy Amplification by Subsampling},
  booktitle = {Differential Privacy for Artificial Intelligence Applications},
  year      = {2022},
  note      = {arXiv:2210.00597v4},
}""",
    "Roth": """@misc{Roth,
  author = {Aaron Roth},
  title  = {{CIS} 800/002 The Algorithmic Foundations of Data Privacy, Lecture 4: Composition Theorems},
  year   = {2011},
  note   = {Lecture notes, University of Pennsylvania, 20 September 2011},
}""",
    "MM": """@inproceedings{MM,
  author    = {Sebastian Meiser and Esfandiar Mohammadi},
  title     = {Tight on Budget? Tight Bounds for r-Fold Approximate Differential Privacy},
  booktitle = {ACM CCS},
  pages     = {247--264},
  year      = {2018},
  note      = {IACR ePrint 2017/1034},
}""",
    "DRV": """@inproceedings{DRV,
  author    = {Cynthia Dwork and Guy N. Rothblum and Salil Vadhan},
  title     = {Boosting and Differential Privacy},
  booktitle = {FOCS},
  pages     = {51--60},
  year      = {2010},
}""",
    "CTD": """@inproceedings{CTD,
  author    = {Vadym Doroshenko and Badih Ghazi and Pritish Kamath and Ravi Kumar and Pasin Manurangsi},
  title     = {Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions},
  booktitle = {PETS},
  year      = {2022},
  note      = {arXiv:2207.04380},
}""",
    "McSherry": """@inproceedings{McSherry,
  author    = {Frank McSherry},
  title     = {Privacy Integrated Queries},
  booktitle = {SIGMOD},
  year      = {2009},
}""",
    "Mironov": """@inproceedings{Mironov,
  author    = {Ilya Mironov},
  title     = {R{\\'e}nyi Differential Privacy},
  booktitle = {CSF},
  year      = {2017},
  note      = {arXiv:1702.07476v3},
}""",
}
"""One entry per key of docs/REFERENCES.md that a view's numbers rest on (the key is the
citation key, as the code cites it: "KOV Thm 3.3")."""

VIEW_SOURCES: dict[str, tuple[str, ...]] = {
    "regions": ("KOV", "DRV", "Steinke"),
    "curves": ("KOV", "DRV", "Roth", "Steinke"),
    "priors": ("HBW", "KOV", "DRV", "Steinke", "McSherry"),
    "mechanisms": ("Steinke", "KOV", "CTD", "MM", "Mironov"),
    "planner": ("KOV", "Steinke", "HBW", "DRV"),
    "attack": ("KOV", "Steinke", "HBW"),
}
"""The sources each view's rows cite, by the view's CLI name."""


def bibtex(view: str) -> str:
    """The BibTeX entries behind ``view`` (``VIEW_SOURCES``), one blank line apart."""
    return "\n\n".join(BIBTEX[key] for key in VIEW_SOURCES[view]) + "\n"
