"""A certificate and a claim kind defined in this one file, used through every entry point with no edit to dpaudit.

``Hoeffding`` bounds the event's TPR and FPR with Hoeffding's inequality (Hoeffding 1963): valid for any
mechanism, never tighter than the exact Clopper-Pearson intervals (the binomial tail is below Hoeffding's
bound on it), so its epsilon is at most Clopper-Pearson's on the same counts.  ``StepClaim`` promises epsilon
at delta 1e-6 and half of it from delta 1e-3 on.  Both reach ``audit``, ``audit_scores``, ``search`` and a YAML
experiment through the public keywords only (an instance, a registered name, or ``"module:attr"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
import yaml

import dpaudit
from dpaudit.claims import Claim, register_claim_kind
from dpaudit.results import TRIALS_FILE, read_trials
from dpaudit.runner import run_experiment
from dpaudit.stats.certificate import IntervalCertificate, register_certificate


class Hoeffding(IntervalCertificate):
    """One-sided Hoeffding bounds on TPR and FPR, each at half the failure probability."""

    name = "hoeffding-test"
    description = "Hoeffding bounds on TPR/FPR of a held-out event (a test plug-in)"

    def rate_bounds(self, counts, *, confidence):
        a = (1.0 - confidence) / 2
        slack = [math.sqrt(math.log(1 / a) / (2 * max(n, 1))) for n in (counts.n0, counts.n1)]
        return counts.tpr - slack[0], counts.fpr + slack[1]




@dataclass(frozen=True)
class StepClaim(Claim):
    """``top`` at delta 1e-6, ``top / 2`` from delta 1e-3 on."""

    top: float

    def grid(self):
        return np.array([1e-6, 1e-3]), np.array([self.top, self.top / 2])


@pytest.fixture(autouse=True, scope="module")
def _registered():
    """The plug-ins registered as a user's module would at import, and removed after, so that other tests
    see the package's own lists."""
    from dpaudit.claims import CLAIM_PARSERS
    from dpaudit.stats.certificate import CERTIFICATES

    register_certificate(Hoeffding)
    register_claim_kind("step", lambda body, *, spec: StepClaim(float(body), spec=spec))
    yield
    CERTIFICATES.pop(Hoeffding.name, None)
    CLAIM_PARSERS.pop("step", None)

# The built-in Laplace mechanism with its own pair: epsilon 1.  Fixed size, ideal: one round whose events do
# not depend on the certificate or on the claimed epsilon, so two runs of one seed compare count for count.
AUDIT = dict(samples=200_000, seed=3, ideal=True)
POINT = dict(epsilon=0.5, delta=1e-5)


def _scores(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(1.0, 1.0, 20_000), rng.normal(0.0, 1.0, 20_000)


# ----------------------------------------------------------------------------- the certificate
@pytest.mark.parametrize("estimator", [Hoeffding(), "hoeffding-test", f"{__name__}:Hoeffding"])
def test_audit_uses_the_plugin_by_instance_name_or_import_path(estimator):
    mine = dpaudit.audit("laplace", **POINT, **AUDIT, estimator=estimator)
    cp = dpaudit.audit("laplace", **POINT, **AUDIT)
    assert mine.estimator == mine.certificate == "hoeffding-test" and cp.estimator == "clopper-pearson"
    assert (mine.tp, mine.fp, mine.event) == (cp.tp, cp.fp, cp.event)  # the same event and counts
    assert 0.5 < mine.epsilon_lower_bound < cp.epsilon_lower_bound <= 1.0
    assert mine.verdict == "violation" and mine.epsilon_lower_bound <= mine.ceiling < cp.ceiling


def test_the_verdict_is_the_plugins():
    mine = dpaudit.audit("laplace", **POINT, **AUDIT, estimator=Hoeffding())
    cp = dpaudit.audit("laplace", **POINT, **AUDIT)
    # A claim between the two bounds: Clopper-Pearson certifies a violation of it, Hoeffding does not, and the
    # report says what Hoeffding certified.
    between = (mine.epsilon_lower_bound + cp.epsilon_lower_bound) / 2
    assert dpaudit.audit("laplace", epsilon=between, delta=1e-5, **AUDIT).verdict == "violation"
    assert dpaudit.audit("laplace", epsilon=between, delta=1e-5, **AUDIT, estimator=Hoeffding()).verdict == \
        "no violation found"


def test_audit_scores_uses_the_plugin():
    s_in, s_out = _scores()
    mine = dpaudit.audit_scores(s_in, s_out, **POINT, seed=1, estimator="hoeffding-test")
    cp = dpaudit.audit_scores(s_in, s_out, **POINT, seed=1)
    assert mine.estimator == "hoeffding-test" and mine.verdict == "violation"
    assert 0.5 < mine.epsilon_lower_bound <= cp.epsilon_lower_bound
    assert dpaudit.audit_scores(s_in, s_out, epsilon=5.0, delta=1e-5, seed=1,
                                estimator=Hoeffding()).verdict == "no violation found"


def test_search_passes_the_plugin_to_its_audit():
    r = dpaudit.search("laplace", **POINT, size=3, low=0, high=1, max_samples=20_000, seed=1, ideal=True,
                       estimator=f"{__name__}:Hoeffding")
    assert r.audit.estimator == "hoeffding-test" and r.verdict == "violation"


def _yaml_run(tmp_path, audit: dict, estimator: dict) -> dict:
    config = {"name": "plugin", "seed": 1, "mechanisms": ["laplace"], "audit": {**audit, "ideal": True},
              "estimator": estimator}
    path = tmp_path / "plugin.yaml"
    path.write_text(yaml.safe_dump(config))
    out = run_experiment(str(path), out=tmp_path / "out", draw=False, echo=lambda s: None, progress=False)
    (trial,) = read_trials(out.directory / TRIALS_FILE)
    return trial["result"]


def test_a_yaml_experiment_names_the_plugin(tmp_path):
    result = _yaml_run(tmp_path, {"samples": 200_000, "claim": "eps:0.5,delta=1e-5"},
                       {"name": "hoeffding-test"})
    assert result["estimator"] == "hoeffding-test" and result["verdict"] == "violation"
    cp = dpaudit.audit("laplace", **POINT, samples=200_000, seed=1, ideal=True)
    assert result["epsilon_lower_bound"] <= cp.epsilon_lower_bound


# ----------------------------------------------------------------------------- the claim kind
def test_audit_reads_the_new_claim_kind():
    bad = dpaudit.audit("laplace", claim="step:0.6", **AUDIT)
    assert bad.verdict == "violation" and bad.claim == "step:0.6"
    assert bad.claim_curve["claimed_epsilon"] == [0.6, 0.3]
    assert dpaudit.audit("laplace", claim=StepClaim(4.0, spec="step:4"), **AUDIT).verdict == "no violation found"
    mine = dpaudit.audit("laplace", claim="step:0.6", **AUDIT, estimator=Hoeffding())
    assert mine.verdict == "violation" and mine.estimator == "hoeffding-test"
    # The same event on the same counts: Hoeffding's certified curve lies below Clopper-Pearson's at both points.
    assert all(h <= c for h, c in zip(mine.claim_curve["epsilon_lower_bound"], bad.claim_curve["epsilon_lower_bound"]))


def test_audit_scores_reads_the_new_claim_kind():
    s_in, s_out = _scores()
    assert dpaudit.audit_scores(s_in, s_out, claim="step:0.5", seed=1).verdict == "violation"
    assert dpaudit.audit_scores(s_in, s_out, claim="step:8", seed=1,
                                estimator="hoeffding-test").verdict == "no violation found"


def test_search_reads_the_new_claim_kind():
    r = dpaudit.search("laplace", claim="step:0.6", size=3, low=0, high=1, max_samples=20_000, seed=1, ideal=True)
    assert r.verdict == "violation" and r.audit.claim == "step:0.6"


def test_a_yaml_experiment_reads_the_new_claim_kind(tmp_path):
    result = _yaml_run(tmp_path, {"samples": 200_000, "claim": "step:0.6"}, {"name": "hoeffding-test"})
    assert result["claim"] == "step:0.6" and result["verdict"] == "violation"
    assert result["estimator"] == "hoeffding-test"


def test_the_certificates_guide_runs(monkeypatch):
    # docs/certificates.md defines and registers its own Hoeffding and step claim; each block runs as a module
    # (a dataclass needs one), and what it registers is removed after.
    import re
    import sys
    import types
    from pathlib import Path

    from dpaudit.claims import CLAIM_PARSERS
    from dpaudit.stats.certificate import CERTIFICATES

    text = (Path(__file__).resolve().parents[1] / "docs" / "certificates.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 3
    try:
        modules = []
        for i, code in enumerate(blocks):
            module = types.ModuleType(f"docs_certificates_{i}")
            monkeypatch.setitem(sys.modules, module.__name__, module)
            exec(compile(code, f"docs/certificates.md block {i}", "exec"), module.__dict__)
            modules.append(module)
        assert modules[1].parse_claim("step:0.6").epsilon(1e-3) == 0.3
        assert modules[2].r.violation and modules[2].r.witness == (1.2, 1e-3)  # the anytime audits' certificate
    finally:
        CERTIFICATES.pop("hoeffding", None)
        CLAIM_PARSERS.pop("step", None)
