"""The links a teacher hands out: a view with the lesson's numbers in the URL."""

LESSON_LINKS = (
    "Privacy_regions?eps0=0.1&delta0=0.001&k=10",
    "Composition_curves?eps0=0.1&delta=1e-5&k_max=1000",
    "Database_priors?preset=365+hospital+nights&k=2000",
    "Attack_lab?mechanism=randomized-response&eps0=1&k=10",
    "Mechanisms?mechanism=gaussian&sigma=1.1&sampling_rate=0.01&k=1000",
    "Plan_a_budget?epsilon=1&delta=1e-5&k=100",
)

CLASS_LINK = LESSON_LINKS[0]
"""The link a whole class opens at once in ``run.py``'s class scenario."""
