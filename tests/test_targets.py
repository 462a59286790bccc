"""Loading and checking targets: every misbehaviour is a TargetError naming the target."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
import json
import textwrap
import time

import numpy as np
import pytest

from dpaudit.exceptions import DatasetError, ParameterValueError, TargetError, TargetTimeoutError
from dpaudit.mechanisms import LaplaceMechanism
from dpaudit.targets import Target, load_target, parse_dataset
from _array_likes import GradTensor, Unreadable

D = np.array([1.0, 0.0, 1.0])


# -- plain callables --------------------------------------------------------------------
def plain(data):
    return float(np.sum(data))


def with_rng(data, *, rng):
    return float(np.sum(data)) + rng.normal()


def with_size_rng(data, *, size=None, rng=None):
    return np.sum(data) + rng.normal(size=size)


def with_kwargs(data, **kwargs):
    return float(np.sum(data)) + kwargs["rng"].normal(size=kwargs.get("size"))


def vector_out(data, *, rng):
    return np.array([np.sum(data), len(data)]) + rng.normal(size=2)


def int_out(data, *, rng):
    return int(rng.integers(0, 3))


def test_detects_size_and_rng():
    assert (Target(plain).vectorised, Target(plain).seeded) == (False, False)
    assert (Target(with_rng).vectorised, Target(with_rng).seeded) == (False, True)
    assert (Target(with_size_rng).vectorised, Target(with_size_rng).seeded) == (True, True)
    assert (Target(with_kwargs).vectorised, Target(with_kwargs).seeded) == (True, True)


@pytest.mark.parametrize("fn, shape", [(plain, (7,)), (with_rng, (7,)), (with_size_rng, (7,)),
                                        (with_kwargs, (7,)), (vector_out, (7, 2)), (int_out, (7,))])
def test_sample_shapes(fn, shape):
    out = Target(fn).sample(D, 7, rng=1, chunk_size=3)
    assert out.shape == shape
    if fn is int_out:
        assert out.dtype.kind == "i"


def test_builtin_name_and_instance():
    t = load_target("laplace", epsilon=0.5)
    assert t.name == "laplace" and t.claim.point_epsilon == 0.5 and t.seeded and t.vectorised
    assert load_target(LaplaceMechanism()).claim.point_epsilon == LaplaceMechanism().epsilon


def test_module_target():
    t = load_target("dpaudit.mechanisms:LaplaceMechanism.__call__")
    assert t.name == "dpaudit.mechanisms:LaplaceMechanism.__call__"


def test_file_target(tmp_path):
    f = tmp_path / "mech.py"
    f.write_text(textwrap.dedent("""
        import numpy as np
        def release(data, *, size=None, rng=None):
            return len(data) + rng.laplace(0, 1, size)
        CONST = 3
    """))
    t = load_target(f"{f}:release")
    assert t.vectorised and t.seeded
    a = t.sample(D, 100, rng=5)
    assert a.shape == (100,) and np.array_equal(a, t.sample(D, 100, rng=5))
    with pytest.raises(ParameterValueError, match="not callable"):
        load_target(f"{f}:CONST")
    with pytest.raises(ParameterValueError, match="no attribute 'nope'"):
        load_target(f"{f}:nope")


@pytest.mark.parametrize("spec, match", [
    ("nocolon", "neither a built-in"),
    ("missing/file.py:f", "file not found"),
    ("dpaudit_no_such_module:f", "cannot import module"),
    ("numpy:", "both parts"),
])
def test_bad_specs(spec, match):
    with pytest.raises(ParameterValueError, match=match) as info:
        load_target(spec)
    assert repr(spec) in str(info.value)


def test_file_that_fails_to_execute(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("1/0\n")
    with pytest.raises(ParameterValueError, match="ZeroDivisionError"):
        load_target(f"{f}:g")


# -- misbehaviour -----------------------------------------------------------------------
def raises(data):
    raise RuntimeError("boom")


def nan_at_17():
    calls = {"i": 0}

    def f(data):
        calls["i"] += 1
        return float("nan") if calls["i"] == 18 else 1.0

    return f


def returns_inf(data, *, size, rng):
    out = np.zeros(size)
    out[3] = np.inf
    return out


def shape_change():
    calls = {"i": 0}

    def f(data):
        calls["i"] += 1
        return np.zeros(2 if calls["i"] < 5 else 3)

    return f


def mutates(data):
    data[0] = 99
    return 1.0


def hangs(data):
    time.sleep(2.0)
    return 1.0


@pytest.mark.parametrize("fn, match", [
    (raises, r"raised RuntimeError: boom in release 0"),
    (nan_at_17(), r"returned NaN in release 17"),
    (returns_inf, r"returned inf in release 3"),
    (shape_change(), r"changed its output shape from \(2,\) to \(3,\) in release 4"),
    (mutates, r"mutated the dataset"),
    (lambda data: "yes", r"non-numeric value of type str"),
    (lambda data: {"a": 1}, r"non-numeric value of type dict"),
    (lambda data: None, r"non-numeric value of type NoneType"),
    (lambda data: np.complex64(1 + 1j), r"non-numeric value of type complex64 \(\(1\+1j\)\) in release 0 on"),
    (lambda data, *, size: np.full(size, 1 + 1j),
     r"non-numeric value of type ndarray \(dtype complex128, shape \(30,\), first value \(1\+1j\)\) in "
     r"releases 0..29 on the dataset \[1.0, 0.0, 1.0\]$"),
    (lambda data: ["yes", 1.0],
     r"non-numeric value of type list \(dtype <U32, shape \(2,\), first value 'yes'\) in release 0 on"),
    (lambda data, *, size: np.zeros(size + 1), r"returned shape \(31,\) for size=30"),
    (lambda data: np.zeros((2, 2)), r"a release must be a scalar or a 1-D array"),
])
def test_misbehaviour_is_a_target_error_naming_the_target(fn, match):
    with pytest.raises(TargetError, match=match) as info:
        Target(fn, name="mod:f").sample(D, 30, rng=0, chunk_size=100)
    assert "'mod:f'" in str(info.value)


@pytest.mark.parametrize("data, shown", [
    (np.array([]), r"on the dataset \[\]$"),               # the empty side of an add-remove pair a search chose
    (np.array([[1.0, 2.0]]), r"on the dataset \[\[1.0, 2.0\]\]$"),
    (np.zeros((11,)), r"on a dataset of shape \(11,\)$"),
])
def test_a_target_error_shows_the_dataset_it_came_from(data, shown):
    # A pair search chooses the datasets, so "returned NaN in release 0" alone left the user nothing to reproduce.
    nan = lambda data, *, size: np.full(size, np.nan)  # noqa: E731
    with pytest.raises(TargetError, match=r"returned NaN in release 0 " + shown):
        Target(nan, name="t").sample(data, 5)


def test_a_mutating_target_is_shown_the_dataset_it_was_given():
    def mutates(data, *, size):
        data[...] = 7.0
        return np.zeros(size)

    with pytest.raises(TargetError, match=r"mutated the dataset it was given .* on the dataset \[1.0, 0.0, 1.0\]$"):
        Target(mutates, name="t").sample(D, 5)


@pytest.mark.parametrize("batch, match", [
    ([1e308, 1e308, 1.0], None),  # finite, though their sum overflows: the exact check must clear them
    ([1.0, -np.inf, np.inf], r"returned -inf in release 1"),  # the sum is NaN, not inf
    ([np.float32(3e38)] * 3 + [np.float32(np.nan)], r"returned NaN in release 3"),
])
def test_batch_finiteness_is_exact(batch, match):
    arr = np.array(batch)
    f = lambda data, *, size: arr  # noqa: E731
    t = Target(f, name="t")
    if match is None:
        assert t.sample(D, len(arr)).tolist() == arr.tolist()
    else:
        with pytest.raises(TargetError, match=match):
            t.sample(D, len(arr))


def test_shape_change_between_size_batches():
    calls = {"i": 0}

    def f(data, *, size):
        calls["i"] += 1
        return np.zeros((size, 2 if calls["i"] == 1 else 3))

    with pytest.raises(TargetError, match=r"changed its output shape from \(2,\) to \(3,\) in release 5"):
        Target(f, name="t").sample(D, 10, chunk_size=5)


def test_mutation_never_reaches_the_caller():
    data = D.copy()
    with pytest.raises(TargetError):
        Target(mutates).sample(data, 3)
    assert np.array_equal(data, D)


def test_timeout():
    t0 = time.perf_counter()
    with pytest.raises(TargetTimeoutError, match=r"'slow'.*did not return within 0.2 s"):
        Target(hangs, name="slow").sample(D, 3, timeout=0.2)
    assert time.perf_counter() - t0 < 1.5


def test_timeout_passes_fast_targets():
    assert Target(with_rng).sample(D, 5, rng=0, timeout=5).shape == (5,)


# -- reproducibility ----------------------------------------------------------------------
@pytest.mark.parametrize("fn", [with_rng, with_size_rng])
def test_same_seed_same_samples_for_any_n_jobs(fn):
    t = Target(fn)
    one = t.sample(D, 600, rng=42, chunk_size=100, n_jobs=1)
    two = t.sample(D, 600, rng=42, chunk_size=100, n_jobs=2)
    assert np.array_equal(one, two)
    assert not np.array_equal(one, t.sample(D, 600, rng=43, chunk_size=100))


def test_file_target_in_worker_processes(tmp_path):
    f = tmp_path / "per_call.py"
    f.write_text("def release(data, *, rng):\n    return float(data.sum()) + rng.normal()\n")
    t = load_target(f"{f}:release")
    assert np.array_equal(t.sample(D, 40, rng=3, chunk_size=10, n_jobs=2), t.sample(D, 40, rng=3, chunk_size=10))


# -- datasets -----------------------------------------------------------------------------
def test_parse_literals():
    assert parse_dataset("[0,1,1]").tolist() == [0, 1, 1]
    assert parse_dataset("[[1,2],[3,4]]").shape == (2, 2)
    assert parse_dataset("[true, false]").tolist() == [1, 0]


def test_parse_files(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps([1.5, 2]))
    np.save(tmp_path / "b.npy", np.arange(6).reshape(3, 2))
    (tmp_path / "c.csv").write_text("x,y\n1,2\n3,4\n")
    (tmp_path / "d.csv").write_text("1\n0\n1\n")
    assert parse_dataset(str(tmp_path / "a.json")).tolist() == [1.5, 2.0]
    assert parse_dataset(str(tmp_path / "b.npy")).shape == (3, 2)
    assert parse_dataset(str(tmp_path / "c.csv")).tolist() == [[1, 2], [3, 4]]
    assert parse_dataset(str(tmp_path / "d.csv")).tolist() == [1, 0, 1]


@pytest.mark.parametrize("text, match", [
    ("[[1,2],[3]]", "ragged"),
    ('["a", 1]', "non-numeric value 'a'"),
    ("[null]", "non-numeric value None"),
    ("[[]]", "records with no fields"),  # "[]" is an empty dataset (tests/test_datasets.py)
    ("[[[1]]]", "3-D"),
    ("[1, 2", "invalid JSON"),
    ("5", "file not found"),
    ("nofile.csv", "file not found"),
])
def test_parse_errors_name_the_argument(text, match):
    with pytest.raises(DatasetError, match=match) as info:
        parse_dataset(text, name="--neighbor")
    assert str(info.value).startswith("--neighbor:")


def test_parse_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n3\n")
    with pytest.raises(DatasetError, match=r"--dataset: .*bad.csv.*ragged CSV"):
        parse_dataset(str(bad))
    txt = tmp_path / "data.txt"
    txt.write_text("1")
    with pytest.raises(DatasetError, match="unsupported file type '.txt'"):
        parse_dataset(str(txt))
    word = tmp_path / "w.csv"
    word.write_text("1\nabc\n")
    with pytest.raises(DatasetError, match="non-numeric value 'abc'"):
        parse_dataset(str(word))


# -- empty vectors and ints beyond 64 bits: clear errors naming the target ---------------------------------
def empty_per_call(data, *, rng):
    return np.array([])


def empty_sized(data, *, size=None, rng=None):
    return np.zeros((0,)) if size is None else np.zeros((size, 0))


def wide_int(data, *, rng):
    return 2**70 + int(rng.integers(0, 3))


def wide_int_list(data, *, rng):
    return [1, 2**70]


@pytest.mark.parametrize("fn", [empty_per_call, empty_sized])
def test_empty_vector_is_a_target_error(fn):
    with pytest.raises(TargetError, match=r"'empty_\w+' returned an empty array"):
        Target(fn).sample(D, 5, rng=0)


@pytest.mark.parametrize("fn", [wide_int, wide_int_list])
def test_int_beyond_64_bits_is_named_as_such(fn):
    with pytest.raises(TargetError, match=r"'wide_int\w*' returned an int that does not fit in 64 bits"):
        Target(fn).sample(D, 3, rng=0)


def test_empty_vector_audit_error_names_target():
    import dpaudit

    with pytest.raises(TargetError, match="returned an empty array"):
        dpaudit.audit(empty_per_call, [1.0], [0.0], epsilon=1.0, samples=1000, seed=0)


# -- array libraries' objects numpy refuses -------------------------------------------------
def test_a_release_that_requires_grad_is_read_by_its_numbers():
    # A training loop's `model(x)` (a tensor that requires grad) once stopped the audit with
    # "returned a non-numeric value of type Tensor (Can't call numpy() ...)"; the numbers are the same.
    def scalar(data, rng=None):
        return GradTensor(float(np.sum(data)) + rng.normal())

    def batch(data, size=None, rng=None):
        return GradTensor(np.sum(data) + rng.normal(size=(size, 2)))

    def listed(data, rng=None):
        return [GradTensor(float(np.sum(data))), GradTensor(rng.normal())]

    assert Target(scalar).sample(D, 5, rng=0).shape == (5,)
    assert Target(batch).sample(D, 5, rng=0).shape == (5, 2)
    out = Target(listed).sample(D, 3, rng=0)
    assert out.shape == (3, 2) and np.all(out[:, 0] == 2.0)


def test_a_release_numpy_cannot_read_names_the_target_and_the_cause():
    with pytest.raises(TargetError, match=r"target 'unreadable' returned a non-numeric value of type Unreadable "
                                          r"in release 0 \(Got unsupported ScalarType BFloat16\)"):
        Target(lambda data: Unreadable(), name="unreadable").sample(D, 2, rng=0)
@pytest.mark.parametrize("fn, expected", [
    (lambda data: Fraction(3, 2), [1.5] * 4),
    (lambda data: Decimal("2.5"), [2.5] * 4),
    (lambda data: [Fraction(1, 4), 2], [[0.25, 2.0]] * 4),
    (lambda data, *, size: [Fraction(1, 2)] * size, [0.5] * 4),
])
def test_fractions_and_decimals_are_real_numbers(fn, expected):
    # An exact sampler (Canonne, Kamath and Steinke 2020) may release Fractions; they were refused as
    # "a non-numeric value of type Fraction", though a Fraction is a real number.
    out = Target(fn, name="t").sample(D, 4, rng=0)
    assert np.asarray(out).dtype == np.float64 and np.asarray(out).tolist() == expected


def test_a_nan_decimal_is_still_refused():
    with pytest.raises(TargetError, match=r"returned NaN in release 0"):
        Target(lambda data: Decimal("NaN"), name="t").sample(D, 3, rng=0)


@pytest.mark.parametrize("fn, match", [
    (lambda data: None, r"non-numeric value of type NoneType \(None\) in release 0 \(code 'no answer' as a number"),
    (lambda data: [1.0, None], r"type list .* \(code 'no answer' as a number"),
])
def test_an_abort_returned_as_none_is_told_how_to_code_it(fn, match):
    # A propose-test-release mechanism that returns None to abort was told only "non-numeric value of type
    # NoneType": not what to release instead.
    with pytest.raises(TargetError, match=match):
        Target(fn, name="t").sample(D, 3, rng=0)


def test_a_string_release_gets_no_abort_hint():
    with pytest.raises(TargetError, match=r"type str \('yes'\) in release 0 on the dataset") as info:
        Target(lambda data: "yes", name="t").sample(D, 3, rng=0)
    assert "no answer" not in str(info.value)


class Bfloat16Like:
    """The form of a JAX array in ``bfloat16`` (ml_dtypes' float type): numpy's own view of it has dtype kind
    ``"V"`` (no fields), and asked for float it gives the numbers."""

    def __init__(self, value):
        self.value = np.asarray(value, dtype=np.float32)

    def __array__(self, dtype=None, copy=None):
        if dtype is None:
            return np.zeros(self.value.shape, dtype="V2")
        return self.value.astype(dtype)


def test_a_release_in_a_float_type_numpy_has_no_kind_for_is_read_by_its_numbers():
    # A JAX DP-SGD returning its iterates in bfloat16 was refused: "returned a non-numeric value of type
    # ArrayImpl (dtype bfloat16, shape (4,), first value -0.00628...)", a number in the message itself.
    def scalar(data, rng=None):
        return Bfloat16Like(float(np.sum(data)) + 0.5)

    def batch(data, size=None, rng=None):
        return Bfloat16Like(np.full((size, 2), 1.5))

    out = Target(scalar).sample(D, 3, rng=0)
    assert out.dtype == np.float64 and out.tolist() == [2.5] * 3
    assert Target(batch).sample(D, 4, rng=0).tolist() == [[1.5, 1.5]] * 4


def test_void_data_that_is_no_number_is_still_refused():
    with pytest.raises(TargetError, match=r"returned a non-numeric value of type ndarray \(dtype \|V2"):
        Target(lambda data: np.zeros(2, dtype="V2"), name="void").sample(D, 2, rng=0)


def test_a_release_of_parts_of_different_shapes_names_their_shapes_and_the_fix():
    # `return iterates, weights` from a training loop (shapes (4,) and (6,)) was refused with numpy's
    # "inhomogeneous shape after 1 dimensions" alone, naming neither the parts nor what a release may be.
    with pytest.raises(TargetError, match=r"returned a non-numeric value of type tuple in release 0 \(its 2 parts "
                                          r"have shapes \(4,\), \(6,\); a release is one scalar or one 1-D array"):
        Target(lambda data: (np.zeros(4), np.ones(6)), name="pair").sample(D, 2, rng=0)
    with pytest.raises(TargetError) as info:                         # a ragged nested list is told the same
        Target(lambda data: [[1.0, 2.0], [3.0]], name="ragged").sample(D, 2, rng=0)
    assert "its 2 parts have shapes (2,), (1,)" in str(info.value)
    with pytest.raises(TargetError) as info:                         # numpy's words alone where no part has a shape
        Target(lambda data: [object(), 1.0], name="odd").sample(D, 2, rng=0)
    assert "parts have shapes" not in str(info.value)
