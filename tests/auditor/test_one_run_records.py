"""The one-run harness on records of any form: arrays as before, text, tuples and objects as lists, pandas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import DatasetError, ParameterValueError


class Recorder:
    """A training function that keeps what it was given and returns it as the model."""

    def __init__(self):
        self.calls = []

    def __call__(self, data, rng):
        self.calls.append(data)
        return data


def _received_canaries(recorder, n_dataset):
    assert len(recorder.calls) == 1, "train is called exactly once"
    return recorder.calls[0][n_dataset:]


def test_numeric_records_give_the_reports_of_the_float_only_harness():
    # Pinned from the harness before it took other records (commit 7ad8246): same seed, same bits, same training
    # data, same report.
    seen = []

    def train(data, rng):
        seen.append(data)
        return data.sum(axis=0) + rng.normal(0.0, 1.0, data.shape[1])

    r = dpaudit.one_run(train, np.zeros((5, 200)), np.eye(200), lambda m, c: float(m @ c), epsilon=1.0, seed=11)
    assert seen[0].dtype == np.float64 and seen[0].shape == (101, 200)
    inc = seen[0][5:].argmax(axis=1)
    assert inc[:20].tolist() == [3, 5, 6, 8, 13, 15, 17, 18, 19, 20, 22, 23, 24, 27, 29, 31, 33, 34, 35, 36]
    assert int(inc.sum()) == 9537 and np.all(np.diff(inc) > 0)  # appended in canary order
    assert (r.included, r.guesses, r.correct, r.seed) == (96, 50, 43, 11)
    assert r.epsilon_lower_bound == 0.8858941253271576


def test_labelled_tuples_reach_train_and_score_as_given():
    # (features, label) pairs with array features: numpy cannot read them as one array, so they stay tuples.
    rng = np.random.default_rng(0)
    dataset = tuple((rng.normal(size=3), int(rng.integers(2))) for _ in range(7))
    canaries = [(np.full(3, 10.0 + i), 1) for i in range(40)]
    train, scored = Recorder(), []

    def score(model, canary):
        scored.append(canary)
        return float(any(canary is x for x in model))

    r = dpaudit.one_run(train, dataset, canaries, score, epsilon=1.0, seed=4)
    data = train.calls[0]
    assert isinstance(data, list) and all(a is b for a, b in zip(data, dataset))
    got = _received_canaries(train, len(dataset))
    assert len(got) == r.included and 0 < r.included < 40
    # exactly the included canaries, the objects themselves, in canary order
    assert [id(c) for c in got] == [id(c) for c in canaries if any(c is g for g in got)]
    assert len(scored) == 40 and all(a is b for a, b in zip(scored, canaries))
    assert r.correct == r.guesses  # the score saw the bits exactly: every guess is right


def test_text_canaries_are_a_list_of_strings():
    texts = [f"my pin is {i:04d}" for i in range(30)]
    train = Recorder()
    r = dpaudit.one_run(train, [], texts, lambda model, t: float(t in model), epsilon=1.0, seed=2)
    got = _received_canaries(train, 0)
    assert isinstance(train.calls[0], list) and all(isinstance(t, str) for t in got)
    assert got == [t for t in texts if t in got] and len(got) == r.included


def test_an_int_array_keeps_its_dtype_and_shape_checks():
    dataset, canaries = np.zeros((4, 60), dtype=np.int64), np.eye(60, dtype=np.int64)
    train, scored = Recorder(), []

    def score(model, canary):
        scored.append(canary)
        return float(model.sum(axis=0) @ canary)

    r = dpaudit.one_run(train, dataset, canaries, score, epsilon=1.0, seed=5)
    data = train.calls[0]
    assert data.dtype == np.int64 and data.shape == (4 + r.included, 60)
    assert np.array_equal(data[4:], canaries[data[4:].argmax(axis=1)]) and np.all(np.diff(data[4:].argmax(1)) > 0)
    assert all(c.dtype == np.int64 for c in scored) and r.correct == r.guesses
    with pytest.raises(DatasetError, match=r"^canaries: each has shape \(60,\), the dataset's records \(3,\)"):
        dpaudit.one_run(train, np.zeros((4, 3), dtype=int), canaries, score, epsilon=1.0, seed=5)


def test_an_object_array_and_ragged_rows_are_lists_of_the_records():
    canaries = np.empty(20, dtype=object)
    canaries[:] = [frozenset({i, i + 100}) for i in range(20)]
    train = Recorder()
    r = dpaudit.one_run(train, [[1.0, 2.0], [3.0]], canaries, lambda model, c: float(c in model), epsilon=1.0,
                        seed=1)
    data = train.calls[0]
    assert data[:2] == [[1.0, 2.0], [3.0]] and len(data) == 2 + r.included
    assert all(c in set(canaries) for c in data[2:])


def test_an_empty_list_dataset_takes_the_canaries_form():
    train = Recorder()
    r = dpaudit.one_run(train, [], np.eye(10), lambda model, c: float(model.sum(axis=0) @ c), epsilon=1.0, seed=3)
    assert train.calls[0].shape == (r.included, 10)


def test_pandas_frames_are_joined_by_pandas():
    pd = pytest.importorskip("pandas")
    dataset = pd.DataFrame({"text": ["a", "b", "c"], "label": [0, 1, 0]})
    canaries = pd.DataFrame({"text": [f"canary {i}" for i in range(12)], "label": [1] * 12})
    train, scored = Recorder(), []

    def score(model, row):
        scored.append(row)
        return float(row["text"] in set(model["text"]))

    r = dpaudit.one_run(train, dataset, canaries, score, epsilon=1.0, seed=0)
    data = train.calls[0]
    assert isinstance(data, pd.DataFrame) and list(data.columns) == ["text", "label"]
    assert list(data.index) == list(range(3 + r.included)) and list(data["text"][:3]) == ["a", "b", "c"]
    assert all(isinstance(row, pd.Series) for row in scored) and r.correct == r.guesses
    with pytest.raises(DatasetError, match=r"^canaries: columns \['text'\] differ from the dataset's"):
        dpaudit.one_run(train, dataset, canaries[["text"]], score, epsilon=1.0, seed=0)
    with pytest.raises(DatasetError, match="^canaries: expected a pandas DataFrame like the other argument"):
        dpaudit.one_run(train, dataset, ["x", "y"], score, epsilon=1.0, seed=0)


@pytest.mark.parametrize("dataset, canaries, error, match", [
    ([], (f"c{i}" for i in range(5)), DatasetError,
     r"^canaries: expected a sequence of records \(a list, tuple or array\), got a generator; pass a list, "
     r"e\.g\. list\(canaries\)$"),
    ({"a": 1}, ["x", "y"], DatasetError, "^dataset: expected a sequence of records .* got a dict"),
    ([], {"x", "y"}, DatasetError, "^canaries: .* got a set; pass a list"),
    ([], "some text", DatasetError, "^canaries: expected a sequence of records, got one str; pass a list"),
    ([], 3.0, DatasetError, "^canaries: .* got a float; pass a list of records$"),
    ([], np.float64(3.0), DatasetError, "^canaries: expected a sequence of records, got one float64 value"),
    ([], ["only one"], ParameterValueError, "^canaries: at least 2 are needed; got 1"),
    (np.zeros((2, 3)), np.eye(1, 3), ParameterValueError, "^canaries: at least 2 are needed; got 1"),
])
def test_records_that_are_no_sequence_are_named(dataset, canaries, error, match):
    with pytest.raises(error, match=match):
        dpaudit.one_run(Recorder(), dataset, canaries, lambda model, c: 0.0, epsilon=1.0, seed=0)


def _rr_train(universe, eps):
    """Randomized response on each text's membership: epsilon-DP for adding or removing one text."""
    def train(data, rng):
        seen, flip = set(data), 1.0 / (1.0 + math.exp(eps))
        return {t: (t in seen) != (rng.random() < flip) for t in universe}
    return train


def test_text_canaries_through_an_eps_dp_training_find_no_violation_of_a_true_claim():
    # Statistics unchanged, wiring new: the harness on text must not break a correct claim, yet must see that the
    # same run is not 0.5-DP (its bound, 0.9, is near what 1-DP randomized response allows 1,000 canaries).
    texts = [f"user {i:04d} wrote: my pin is {i * 7919 % 10000:04d}" for i in range(1000)]
    score = lambda model, t: float(model[t])  # noqa: E731
    true = dpaudit.one_run(_rr_train(texts, 1.0), ["a", "b"], texts, score, epsilon=1.0, seed=0)
    assert true.verdict == "no violation found" and 0.5 < true.epsilon_lower_bound <= 1.0
    assert dpaudit.one_run(_rr_train(texts, 1.0), ["a", "b"], texts, score, epsilon=0.5, seed=0).violation


# --------------------------------------------------------------------------- the run's evidence (save=)
def _noisy_sum(data, rng):
    return data.sum(axis=0) + rng.normal(0.0, 1.0, data.shape[1])


def _dot(model, canary):
    return float(model @ canary)


def test_saved_evidence_gives_the_same_report_from_the_command_line(tmp_path, capsys):
    import json

    from dpaudit.cli import main

    r = dpaudit.one_run(_noisy_sum, np.zeros((10, 300)), np.eye(300), _dot, claim="gdp:mu=0.5", seed=4,
                        save=tmp_path / "run")
    scores = np.loadtxt(tmp_path / "run" / "scores.csv")
    bits = np.loadtxt(tmp_path / "run" / "included.csv")
    assert len(scores) == 300 and set(np.unique(bits)) <= {0.0, 1.0} and bits.sum() == r.included
    saved = json.loads((tmp_path / "run" / "report.json").read_text())
    assert saved["epsilon_lower_bound"] == r.epsilon_lower_bound and saved["seed"] == r.seed
    code = main(["one-run", str(tmp_path / "run" / "scores.csv"), str(tmp_path / "run" / "included.csv"),
                 "--claim", "gdp:mu=0.5", "--seed", str(r.seed), "--json"])
    again = json.loads(capsys.readouterr().out)
    assert code == (1 if r.violation else 0)
    drop = {"elapsed_seconds"}
    assert {k: v for k, v in again.items() if k not in drop} == {k: v for k, v in saved.items() if k not in drop}


def test_the_scores_are_saved_before_the_audit_that_may_fail(tmp_path, monkeypatch):
    import importlib

    harness = importlib.import_module("dpaudit.auditor.one_run")  # the module: the package's name is the function

    def broken(*args, **kwargs):
        raise RuntimeError("the audit broke after training")

    monkeypatch.setattr(harness, "audit_one_run", broken)
    with pytest.raises(RuntimeError, match="after training"):
        harness.one_run(_noisy_sum, np.zeros((2, 50)), np.eye(50), _dot, epsilon=1.0, seed=0, save=tmp_path)
    assert len(np.loadtxt(tmp_path / "scores.csv")) == 50 and not (tmp_path / "report.json").exists()


@pytest.mark.parametrize("kw, match", [({"claim": "gdp:mu=-1"}, "mu must be"), ({"epsilon": 1.0, "guesses": 60},
                                       "at most the number of canaries"), ({"epsilon": 1.0, "confidence": 2.0},
                                       "confidence"), ({}, "epsilon: required")])
def test_bad_arguments_are_refused_before_training(kw, match):
    rec = Recorder()
    with pytest.raises(ParameterValueError, match=match):
        dpaudit.one_run(rec, np.zeros((2, 50)), np.eye(50), _dot, **kw)
    assert rec.calls == [], "a bad argument must not cost a training run"


@pytest.mark.parametrize("score, match", [
    (lambda model: 0.0, r"score must take \(model, canary\)"),
    (lambda model, canary, extra: 0.0, r"score must take \(model, canary\)"),
    (None, "score must be callable"),
])
def test_a_score_that_cannot_be_called_is_refused_before_training(score, match):
    # A scorer of the wrong signature once failed only after the training run, the costly part, was spent.
    from dpaudit.exceptions import ParameterTypeError

    rec = Recorder()
    with pytest.raises(ParameterTypeError, match=match):
        dpaudit.one_run(rec, np.zeros((2, 50)), np.eye(50), score, epsilon=1.0, seed=0)
    assert rec.calls == [], "a score that cannot be called must not cost a training run"


def _train_without_rng(data):
    return data


def _train_with_a_seed(data, seed):
    return data


@pytest.mark.parametrize("train, match", [
    (_train_without_rng, r"train must take \(data, rng=\.\.\.\)"),
    (_train_with_a_seed, r"train must take \(data, rng=\.\.\.\)"),
    (np.zeros(3), "train must be callable"),
])
def test_a_train_that_cannot_take_the_rng_is_refused_by_name(train, match):
    # Such a train surfaced as Python's "got an unexpected keyword argument 'rng'", not naming the contract.
    from dpaudit.exceptions import ParameterTypeError

    with pytest.raises(ParameterTypeError, match=match):
        dpaudit.one_run(train, np.zeros((2, 50)), np.eye(50), _dot, epsilon=1.0, seed=0)


@pytest.mark.parametrize("train", [lambda data, *, rng: data, lambda data, **kw: data, lambda *args, **kw: args[0]])
def test_a_train_that_takes_the_rng_by_keyword_is_accepted(train):
    r = dpaudit.one_run(train, np.zeros((2, 50)), np.eye(50), lambda model, c, *rest: float(model.sum(axis=0) @ c),
                        epsilon=1.0, seed=0)
    assert r.canaries == 50


def test_an_unwritable_save_directory_is_named(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DatasetError, match="save: cannot write"):
        dpaudit.one_run(_noisy_sum, np.zeros((2, 50)), np.eye(50), _dot, epsilon=1.0, seed=0, save=blocker / "x")


@pytest.mark.parametrize("where", ["file", "file/x"])
def test_a_save_directory_that_cannot_be_made_is_refused_before_training(tmp_path, where):
    # The directory was made only once the canaries were scored: a save= path under a file cost the training run.
    (tmp_path / "file").write_text("")
    rec = Recorder()
    with pytest.raises(DatasetError, match="save: cannot write"):
        dpaudit.one_run(rec, np.zeros((2, 50)), np.eye(50), _dot, epsilon=1.0, seed=0, save=tmp_path / where)
    assert rec.calls == [], "a save directory that cannot be made must not cost a training run"
