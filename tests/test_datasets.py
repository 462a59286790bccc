"""One dataset loader for Python, the command line and YAML: the same checks and the same CSVs everywhere.

The audits here are tiny and seeded; the assertions compare results across
the three entry points (same seed, same data, so the same report) and check
error messages, so nothing here is random.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

import dpaudit
from dpaudit.exceptions import ConfigError, DatasetError, ParameterValueError
from dpaudit.runner import load_config, run_experiment
from dpaudit.targets import parse_dataset

QUIET = dict(echo=lambda s: None, progress=False)
SIZE = dict(samples=2000, seed=3, ideal=True)


def never_reads(dataset, size=None, rng=None):
    """A target that ignores its dataset: only the loader can object to NaN."""
    return rng.laplace(0.0, 1.0, size=size)


def count(dataset, size=None, rng=None):
    """A Laplace count of the dataset's first column: a header read as a number would change it."""
    data = np.asarray(dataset, float)
    first = data[:, 0] if data.ndim == 2 else data
    return float(np.sum(first)) + rng.laplace(0.0, 1.0, size=size)


TARGET_SOURCE = """
import numpy as np

def count(dataset, size=None, rng=None):
    data = np.asarray(dataset, float)
    first = data[:, 0] if data.ndim == 2 else data
    return float(np.sum(first)) + rng.laplace(0.0, 1.0, size=size)
"""


@pytest.mark.parametrize("dataset, neighbor, name, what", [
    ([np.nan, 1.0], [0.0, 1.0], "dataset", "NaN"),
    ([0.0, 1.0], [np.inf, 1.0], "neighbor", "inf"),
    ("[NaN, 1]", "[0, 1]", "dataset", "NaN"),  # JSON literals may spell NaN too
])
def test_python_rejects_non_finite_data_naming_it(dataset, neighbor, name, what):
    """The target never reads the values, so the error can only come from the loader."""
    with pytest.raises(ParameterValueError, match=rf"^{name}: .*NaN or infinite") as info:
        dpaudit.audit(never_reads, dataset, neighbor, epsilon=1.0, **SIZE)
    assert isinstance(info.value, DatasetError), what


def test_cli_rejects_non_finite_data_naming_it(tmp_path):
    (tmp_path / "t.py").write_text(TARGET_SOURCE)
    (tmp_path / "d.csv").write_text("age\nnan\n1\n")
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", f"{tmp_path / 't.py'}:count", "--dataset",
                           str(tmp_path / "d.csv"), "--neighbor", "[0, 1]", "--epsilon", "1", "--samples", "2000"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpaudit: error: --dataset: ") and "d.csv" in lines[0]
    assert "NaN or infinite" in lines[0]


def test_yaml_rejects_non_finite_data_naming_it(tmp_path):
    (tmp_path / "d.csv").write_text("age\n1\ninf\n")
    cfg = {"name": "nan", "seed": 1, "audit": {"samples": 2000},
           "mechanisms": [{"target": "t.py:count", "epsilon": 1.0, "dataset": "d.csv", "neighbor": [0, 1]}]}
    (tmp_path / "t.py").write_text(TARGET_SOURCE)
    (tmp_path / "nan.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match=r"mechanisms\[0\]\.dataset: .*d\.csv.*NaN or infinite"):
        load_config(tmp_path / "nan.yaml")


@pytest.fixture
def header_csvs(tmp_path):
    """D and D' as CSVs with a header row, two columns; the JSON report of each entry point is compared."""
    (tmp_path / "t.py").write_text(TARGET_SOURCE)
    (tmp_path / "d.csv").write_text("age,income\n1,10\n1,20\n")
    (tmp_path / "n.csv").write_text("age,income\n1,10\n0,20\n")
    return tmp_path


def _stable(report: dict) -> dict:
    return {k: report[k] for k in ("epsilon_lower_bound", "tp", "fp", "n_test", "seed", "samples")}


def test_header_csv_works_in_python_cli_and_yaml(header_csvs):
    d = header_csvs
    assert dpaudit.datasets.load_dataset(str(d / "d.csv")).tolist() == [[1, 10], [1, 20]]
    py = dpaudit.audit(count, str(d / "d.csv"), str(d / "n.csv"), epsilon=1.0, **SIZE).to_dict()

    proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", f"{d / 't.py'}:count", "--dataset",
                           str(d / "d.csv"), "--neighbor", str(d / "n.csv"), "--epsilon", "1", "--samples", "2000",
                           "--seed", "3", "--ideal", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    assert _stable(cli) == _stable(py)

    cfg = {"name": "hdr", "seed": 1, "audit": {"samples": 2000, "ideal": True},
           "mechanisms": [{"target": "t.py:count", "epsilon": 1.0, "dataset": "d.csv", "neighbor": "n.csv"}]}
    (d / "hdr.yaml").write_text(yaml.safe_dump(cfg))
    out = run_experiment(d / "hdr.yaml", out=d / "res", **QUIET)
    assert out.summary["complete"]
    trial = json.loads((d / "res" / "hdr" / "trials.jsonl").read_text().splitlines()[0])["result"]
    # The trial's seed comes from the config's seed, so compare with a Python audit at that seed.
    again = dpaudit.audit(count, str(d / "d.csv"), str(d / "n.csv"), epsilon=1.0, samples=2000, ideal=True,
                          seed=trial["seed"]).to_dict()
    assert _stable(trial) == _stable(again)


@pytest.mark.parametrize("command", ["audit", "scores", "one-run"])
def test_an_empty_npy_file_is_a_dataset_error_naming_it(tmp_path, command):
    # A 0-byte .npy has no header: numpy raises EOFError, which the loader must turn into exit 2 naming the
    # file, as it does for an empty .csv or .json (it was exit 3, "internal error").
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    np.save(tmp_path / "ok.npy", np.array([0.0, 1.0, 0.0, 1.0]))
    ok = str(tmp_path / "ok.npy")
    args = {"audit": ["audit", "laplace", "--dataset", str(empty), "--neighbor", "[0]", "--epsilon", "1",
                      "--samples", "2000"],
            "scores": ["scores", str(empty), ok, "--epsilon", "1"],
            "one-run": ["one-run", str(empty), ok, "--epsilon", "1"]}[command]
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "empty.npy" in lines[0] and "empty" in lines[0].split("empty.npy", 1)[1], lines
    with pytest.raises(DatasetError, match="empty.npy.*the file is empty"):
        dpaudit.audit_scores(str(empty), ok, epsilon=1.0)


def _noisy_count(dataset, size=None, rng=None):
    return float(len(dataset)) + rng.laplace(0.0, 1.0, size=size)


def test_an_empty_dataset_is_an_add_remove_neighbour(tmp_path):
    # [] and [1] differ by one added record: a count of an empty dataset is a legitimate audit (it was refused,
    # "the dataset is empty").  [] beside 2-field records takes their shape, so [] and [[1, 2]] are neighbours too.
    # Seed 2: Laplace's tail events have ratio exactly e^1, so a correct audit exceeds 1 with probability up to
    # 2.5%, and seed 1 is such a draw (1.0014).
    r = dpaudit.audit(_noisy_count, [], [1], epsilon=1.0, samples=20_000, seed=2, ideal=True)
    assert r.verdict == "no violation found" and 0.5 < r.epsilon_lower_bound <= 1.0
    r2 = dpaudit.audit(_noisy_count, [], [[1, 2]], epsilon=1.0, samples=20_000, seed=2, ideal=True)
    assert r2.epsilon_lower_bound == r.epsilon_lower_bound  # the same releases: only the shapes differ
    target = tmp_path / "count.py"
    target.write_text("import numpy as np\n"
                      "def f(dataset, size=None, rng=None):\n"
                      "    return float(len(dataset)) + rng.laplace(0.0, 1.0, size=size)\n")
    out = subprocess.run([sys.executable, "-m", "dpaudit", "audit", f"{target}:f", "--dataset", "[]", "--neighbor",
                          "[[1, 2]]", "--epsilon", "1", "--samples", "20000", "--seed", "2", "--ideal", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr
    assert json.loads(out.stdout)["epsilon_lower_bound"] == r.epsilon_lower_bound
    with pytest.raises(DatasetError, match="0 scores"):
        dpaudit.audit_scores([], np.zeros(100), epsilon=1.0)


def test_a_csv_with_a_byte_order_mark_keeps_its_first_value(tmp_path):
    # A spreadsheet's "CSV UTF-8" starts with U+FEFF: '\ufeff5' was no number, so the first row was read
    # as a header and the dataset [5, 1, 1] silently became [1, 1] (a different pair was audited).
    (tmp_path / "d.csv").write_bytes(b"\xef\xbb\xbf5\n1\n1\n")
    (tmp_path / "h.csv").write_bytes(b"\xef\xbb\xbfvalue\n5\n1\n")
    (tmp_path / "d.json").write_bytes(b"\xef\xbb\xbf[5, 1, 1]")
    assert dpaudit.datasets.load_dataset(str(tmp_path / "d.csv")).tolist() == [5, 1, 1]
    assert dpaudit.datasets.load_dataset(str(tmp_path / "h.csv")).tolist() == [5, 1]
    assert dpaudit.datasets.load_dataset(str(tmp_path / "d.json")).tolist() == [5, 1, 1]


def test_a_csv_of_true_and_false_reads_as_ones_and_zeros(tmp_path):
    # pandas writes a bool column as True/False: one-run's INCLUDED file was refused ("non-numeric value
    # 'True'"), and without a header its first row would have been taken for one.
    rng = np.random.default_rng(0)
    inc = rng.integers(0, 2, 200)
    scores = inc + rng.normal(0, 0.5, 200)
    (tmp_path / "hdr.csv").write_text("included\n" + "\n".join(str(bool(b)) for b in inc) + "\n")
    (tmp_path / "bare.csv").write_text("\n".join(("true" if b else "FALSE") for b in inc) + "\n")
    expected = dpaudit.audit_one_run(scores, inc, epsilon=1.0, seed=0).to_dict()
    for name in ("hdr.csv", "bare.csv"):
        assert dpaudit.datasets.load_dataset(str(tmp_path / name)).tolist() == inc.tolist()
        got = dpaudit.audit_one_run(scores, str(tmp_path / name), epsilon=1.0, seed=0).to_dict()
        assert (got["correct"], got["epsilon_lower_bound"]) == (expected["correct"], expected["epsilon_lower_bound"])
    (tmp_path / "bad.csv").write_text("included\nyes\nno\n")
    with pytest.raises(DatasetError, match="non-numeric value 'yes' in row 1"):
        dpaudit.datasets.load_dataset(str(tmp_path / "bad.csv"))


def test_numbers_written_as_strings_are_named_as_such(tmp_path):
    # ["1", "0"] was refused with "non-numeric value None": every value reads as a number, none was named.
    (tmp_path / "inc.json").write_text('["1", "0", "1"]')
    with pytest.raises(DatasetError, match=r"inc\.json'?: values are strings, not numbers \(the first is '1'\)"):
        dpaudit.datasets.load_dataset(str(tmp_path / "inc.json"))
    with pytest.raises(DatasetError, match="non-numeric value 'a'"):
        dpaudit.datasets.load_dataset('["1", "a"]')


def test_integers_beyond_int64_read_as_numbers(tmp_path):
    # JSON's 100000000000000000000 is a number; numpy keeps it as an object, and it was refused as
    # "non-numeric value None", naming nothing.
    (tmp_path / "big.json").write_text("[100000000000000000000, 1, 2.5]")
    assert dpaudit.datasets.load_dataset(str(tmp_path / "big.json")).tolist() == [1e20, 1.0, 2.5]
    assert dpaudit.datasets.load_scores("[[100000000000000000000], [3]]").tolist() == [1e20, 3.0]
    with pytest.raises(DatasetError, match=r"big\.json'?: the integer 10000000000000000000\.\.\. \(401 digits\) is "
                                           "beyond the largest float"):
        (tmp_path / "big.json").write_text(f"[{10**400}, 1]")
        dpaudit.datasets.load_dataset(str(tmp_path / "big.json"))


def test_a_scores_csv_with_pandas_index_says_so(tmp_path):
    # pd.Series.to_csv writes ",0" then "0,s0", "1,s1", ...: read as '' in row 1, or as shape (n, 2) with no hint.
    from dpaudit.datasets import load_scores

    for header in (",0", ",score"):  # an unnamed Series, a DataFrame's column; the first read '' as a value
        path = tmp_path / "s.csv"
        path.write_text(header + "\n" + "".join(f"{i},{0.5 * i + 0.25}\n" for i in range(30)))
        with pytest.raises(DatasetError, match=r"shape \(30, 2\); its first column counts 0, 1, 2, \.\.\.: an index"):
            load_scores(str(path), name="IN")
    path.write_text(",3.5\n1,2\n")  # a first record missing its first value is no header: still an error
    with pytest.raises(DatasetError, match="non-numeric value '' in row 1"):
        load_scores(str(path), name="IN")
    with pytest.raises(DatasetError) as other:  # two columns of anything else: no hint
        load_scores([[1.0, 2.0], [3.0, 4.0]], name="IN")
    assert "index" not in str(other.value)


CSV_TEXTS = ["1\n2\n", "score\n0.5\n-1e3\n", "1\n\n2\n", "1\n   \n2\n", " 1.5 \n2\n", "1_0\n2\n", "true\n0\n",
             '"1"\n2\n', "1,\n2,\n", "1\r\n2\r\n", "1\n2", "1.\n.5\n", "a,b\n1,2\n3,4\n", "1,2\n3\n", "x\n",
             "\n\nx\n1\n", "1,,2\n", "Infinity\n1e5\n", "\ufeff5\n1\n", "\ufeffvalue\n5\n", "h\n1\n#2\n", "2,x\n1,2\n",
             ",0\n0,1.5\n1,2.5\n", ",score\n0,1.5\n", ",3.5\n1,2\n"]


@pytest.mark.parametrize("text", CSV_TEXTS)
def test_numpy_reads_a_csv_as_the_careful_reader_does(tmp_path, text):
    # A plain CSV of numbers is read by numpy's C reader, anything else by the row-by-row reader with its
    # messages: whenever the fast one answers, it answers what the careful one does.
    from dpaudit.datasets import _read_csv_fast, _read_csv_rows

    path = tmp_path / "d.csv"
    path.write_text(text, encoding="utf-8")
    fast = _read_csv_fast(path)
    try:
        careful = _read_csv_rows(path, "D")
    except dpaudit.exceptions.DatasetError:
        assert fast is None
        return
    assert fast is None or (fast.shape == careful.shape and fast.tolist() == careful.tolist())


def test_a_large_csv_of_scores_is_read_without_a_python_object_per_value(tmp_path):
    # Read row by row, 10^7 scores in a CSV took 47 s and 3.5 GB (a list of lists of floats, ~350 bytes a score);
    # now numpy's reader: the array and its buffers.
    import tracemalloc

    n = 200_000
    values = np.random.default_rng(0).normal(size=n)
    path = tmp_path / "in.csv"
    np.savetxt(path, values, fmt="%.17g", header="score", comments="")
    tracemalloc.start()
    try:
        scores = dpaudit.datasets.load_scores(str(path), name="IN")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert scores.tolist() == values.tolist()
    assert peak < 60 * n, f"{peak / n:.0f} bytes per score"


def test_python_sequences_read_and_iterators_are_refused_with_a_hint():
    # range(...) was refused as "expected a JSON array or a file path, got range", wording for the command line;
    # a generator got the same, with no word of what to pass.
    from dpaudit.datasets import load_scores

    assert load_scores(range(30), name="IN").tolist() == [float(i) for i in range(30)]
    with pytest.raises(DatasetError, match=r"IN: expected an array, a list, .* got generator; pass a list"):
        load_scores((x for x in range(30)), name="IN")


def test_a_dataset_numpy_refuses_until_detached_is_read_and_one_it_cannot_read_is_named():
    # A torch tensor that requires grad, passed as the dataset, once raised numpy's RuntimeError untouched.
    from _array_likes import GradTensor, Unreadable

    from dpaudit.datasets import load_dataset

    assert load_dataset(GradTensor([[1.0, 2.0], [3.0, 4.0]])).shape == (2, 2)
    with pytest.raises(DatasetError,
                       match=r"dataset: array: numpy cannot read the Unreadable \(TypeError: Got unsupported"):
        load_dataset(Unreadable())


def test_scores_in_a_float_type_numpy_has_no_kind_for_are_read_as_numbers():
    # JAX scores in bfloat16 passed to dpaudit.audit_scores were refused as "values are strings, not numbers
    # (the first is 0.60546875); write them without quotes".
    class Bfloat16Like:
        def __init__(self, value):
            self.value = np.asarray(value, dtype=np.float32)

        def __array__(self, dtype=None, copy=None):
            return np.zeros(self.value.shape, dtype="V2") if dtype is None else self.value.astype(dtype)

    from dpaudit.datasets import load_scores

    scores = load_scores(Bfloat16Like(np.linspace(0.0, 1.0, 40)), name="IN")
    assert scores.dtype == np.float64 and scores.tolist() == np.linspace(0.0, 1.0, 40, dtype=np.float32).tolist()


def test_an_empty_csv_is_the_empty_dataset_as_json_is(tmp_path, capsys):
    # '[]' and a .json file holding [] were an empty dataset, an empty .csv "the dataset is empty" (exit 2).
    from dpaudit.cli import main

    (tmp_path / "none.csv").write_bytes(b"")
    (tmp_path / "blank.csv").write_text("\n \n")
    (tmp_path / "none.json").write_text("[]\n")
    forms = ["[]", str(tmp_path / "none.json"), str(tmp_path / "none.csv"), str(tmp_path / "blank.csv")]
    loaded = [parse_dataset(f) for f in forms]
    assert all(a.shape == (0,) and a.dtype == loaded[0].dtype for a in loaded), [(a.shape, a.dtype) for a in loaded]
    reports = []
    for form in forms:
        code = main(["audit", "laplace", "--dataset", form, "--neighbor", "[1]", "--epsilon", "1", "--samples", "2000",
                     "--seed", "1", "--json"])
        out = capsys.readouterr().out
        assert code in (0, 1), form
        reports.append({k: v for k, v in json.loads(out).items() if k != "elapsed_seconds"})
    assert all(r == reports[0] for r in reports)
    # Still refused: a 0-byte .json (no JSON value; the message says how an empty dataset is written) and a CSV
    # whose one line is read as a header (more often data in another format than an empty dataset).
    (tmp_path / "zero.json").write_bytes(b"")
    with pytest.raises(DatasetError, match=r"zero.json.*the file is empty \(an empty dataset is written \[\]\)"):
        parse_dataset(str(tmp_path / "zero.json"))
    (tmp_path / "header.csv").write_text("value\n")
    with pytest.raises(DatasetError, match="read as a header"):
        parse_dataset(str(tmp_path / "header.csv"))
