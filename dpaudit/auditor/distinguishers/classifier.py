"""scikit-learn classifiers as distinguishers (DP-Sniper style)."""

from __future__ import annotations

import numpy as np

from ...exceptions import ParameterValueError

from .base import as_2d

__all__ = ["ClassifierScore"]


class ClassifierScore:
    """Vector outputs: a scikit-learn classifier's log-odds, in the spirit of DP-Sniper.

    Bichsel et al. 2021 train a classifier on releases labelled D / D' and
    threshold its output; any ``predict_proba`` estimator works.  Fitting uses
    at most ``max_fit`` releases per side so that the audit stays fast.
    """

    def __init__(self, kind: str = "logistic", *, max_fit: int = 20_000, random_state: int = 0):
        self.kind = kind
        self.name = kind
        self.max_fit = max_fit
        self.random_state = random_state

    def _model(self):
        if self.kind == "logistic":
            from sklearn.linear_model import LogisticRegression
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        if self.kind == "mlp":
            from sklearn.neural_network import MLPClassifier
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=200,
                                                                  early_stopping=True,
                                                                  random_state=self.random_state))
        if self.kind == "boosting":
            from sklearn.ensemble import HistGradientBoostingClassifier

            return HistGradientBoostingClassifier(max_iter=100, random_state=self.random_state)
        raise ParameterValueError(f"attack must name a known classifier; got {self.kind!r}")

    def fit(self, x0, x1):
        a = as_2d(np.asarray(x0, float))[: self.max_fit]
        b = as_2d(np.asarray(x1, float))[: self.max_fit]
        X = np.concatenate([a, b])
        y = np.r_[np.ones(len(a)), np.zeros(len(b))]
        import warnings

        with warnings.catch_warnings():
            # A classifier that stops early on easy data is still a valid score;
            # its convergence warnings would otherwise abort the audit.
            warnings.simplefilter("ignore")
            self.model = self._model().fit(X, y)
        return self

    def score(self, x):
        p = self.model.predict_proba(as_2d(np.asarray(x, float)))[:, 1]
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return np.log(p) - np.log1p(-p)

