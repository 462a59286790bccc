"""Importing the module a target names: a dotted module, a file, or a file inside a package.

:func:`dpaudit.targets.load_target` resolves ``"package.module:attribute"`` and
``"path/to/file.py:attribute"`` here.  A file inside a package is imported by its package name, so
its relative imports work; any other file runs on its own and is pickled by value, so worker
processes can call what it defines without importing it by name.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from .datasets import expand_user as _expand
from .exceptions import ParameterValueError

__all__ = ["extend_sys_path", "import_target_module", "callable_attribute", "no_colon_message"]


def import_target_module(spec: Any, left: str) -> tuple[Any, tuple, str]:
    """``(module, folders, where)`` for the part ``left`` of target ``spec`` before its colon.

    ``folders`` were put on ``sys.path`` to import it (a worker process puts them there too before
    unpickling the target); ``where`` names the module or file in a message.
    """
    if left.endswith(".py") or "/" in left or os.sep in left:
        path = _expand(left)
        if not path.is_file():
            raise ParameterValueError(f"target {spec!r}: file not found: {left!r}")
        package = _package_module_name(path)
        module, failure = _load_package_module(package, path) if package else (None, "")
        if module is None:
            return _load_file_module(path, spec, failure), (str(path.resolve().parent),), f"file {left!r}"
        return module, (str(package[1]),), f"file {left!r}"
    folders: tuple = ()
    try:
        module = importlib.import_module(left)
    except ModuleNotFoundError as exc:
        module, folders = _import_from_cwd(left, spec, exc)
    except ImportError as exc:
        raise ParameterValueError(f"target {spec!r}: cannot import module {left!r}: {exc}") from exc
    except Exception as exc:
        raise ParameterValueError(
            f"target {spec!r}: importing module {left!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    return module, folders, f"module {left!r}"


def callable_attribute(module: Any, attr: str, *, spec: Any, where: str) -> Any:
    """The callable at the dotted ``attr`` of ``module``; a missing name gets a "did you mean"."""
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            from ._validation import did_you_mean

            hint = did_you_mean(part, [n for n in dir(obj) if not n.startswith("_")])
            raise ParameterValueError(f"target {spec!r}: {where} has no attribute {attr!r}{hint}") from None
    if not callable(obj):
        raise ParameterValueError(f"target {spec!r}: {attr!r} is not callable (it is a {type(obj).__name__})")
    return obj


def extend_sys_path(folders: tuple) -> tuple:
    """Append each folder to ``sys.path`` unless it is there: installed packages keep precedence."""
    for folder in folders:
        if folder not in sys.path:
            sys.path.append(folder)
    return tuple(folders)


def _load_file_module(path: Path, spec_text: str, failure: str = "") -> Any:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    mod_name = f"_dpaudit_target_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ParameterValueError(f"target {spec_text!r}: cannot load {str(path)!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    extend_sys_path((str(path.resolve().parent),))  # the file imports its siblings, as when run as a script
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[mod_name]
        raise ParameterValueError(
            f"target {spec_text!r}: executing {str(path)!r} failed: {type(exc).__name__}: {exc}{failure}"
        ) from exc
    for pickler in _cloudpickles():  # worker processes cannot import this module by name: pickle it by value
        pickler.register_pickle_by_value(module)
    return module


def _package_module_name(path: Path) -> tuple[str, Path] | None:
    """``("pkg.sub.mod", root)`` when the file lies in a package (its folder has ``__init__.py``), else None.

    ``root`` is the first folder above that is not a package: put on ``sys.path``, it makes the file
    importable by that name, so its relative imports (``from .util import f``) work.
    """
    path = path.resolve()
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return None
    parts = [] if path.stem == "__init__" else [path.stem]
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts), folder


def _load_package_module(package: tuple[str, Path], path: Path) -> tuple[Any, str]:
    """Import the file at ``path`` by its package name (a library's file imports its package relatively).

    Returns ``(module, "")``, or ``(None, why)`` when that fails or the name resolves to another file
    (an installed or already imported package of the same name keeps precedence): the caller then
    runs the file on its own instead, and names ``why`` if that fails too.
    """
    name, root = package
    extend_sys_path((str(root),))
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        return None, f"; imported as module {name!r} (its folder is a package): {type(exc).__name__}: {exc}"
    loaded = getattr(module, "__file__", None)
    if loaded is None or Path(loaded).resolve() != path.resolve():
        return None, f"; the module name {name!r} is taken by {loaded!r}"
    return module, ""


def _cloudpickles() -> list:
    """Every cloudpickle that may send a target to a worker: the package (Dask's, ours, and joblib's
    loky from joblib 1.5) and the copy older joblib vendors for loky, a module of its own whose
    by-value registry is separate."""
    picklers = []
    try:
        import cloudpickle

        picklers.append(cloudpickle)
    except ImportError:  # pragma: no cover - a dependency; missing only in a broken install
        pass
    try:
        from joblib.externals import cloudpickle as vendored
    except ImportError:  # joblib >= 1.5 no longer vendors it
        vendored = None
    if vendored is not None and all(vendored is not p for p in picklers):
        picklers.append(vendored)
    return picklers


def _import_from_cwd(left: str, spec: str, exc: ModuleNotFoundError) -> tuple[Any, tuple]:
    """Import module ``left`` from the current folder, as ``python script.py`` there would (a console
    script does not put it on ``sys.path``); ``exc`` is re-raised as a clear error when it is not there."""
    top = left.split(".")[0]
    cwd = os.getcwd()
    if exc.name == top and (Path(cwd, f"{top}.py").is_file() or Path(cwd, top).is_dir()):
        extend_sys_path((cwd,))
        try:
            return importlib.import_module(left), (cwd,)
        except ImportError as again:
            exc = again  # type: ignore[assignment]
        except Exception as again:
            raise ParameterValueError(
                f"target {spec!r}: importing module {left!r} failed: {type(again).__name__}: {again}"
            ) from again
    raise ParameterValueError(f"target {spec!r}: cannot import module {left!r}: {exc}") from exc


def no_colon_message(spec: Any, text: str, registry) -> str:
    """Why a target without ``:`` is not understood, with the likeliest fix."""
    from ._validation import did_you_mean

    if text.endswith(".py") or "/" in text or os.sep in text:
        path = _expand(text)
        names = []
        if path.is_file():
            import ast

            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
                names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                         and not n.name.startswith("_")]
            except (OSError, SyntaxError, UnicodeDecodeError):
                names = []
        example = f"{text}:{names[0]}" if names else f"{text}:function_name"
        found = f" (it defines: {', '.join(names[:8])})" if names else ""
        return (f"target {spec!r} names a file but not the callable in it: write {example!r}{found}")
    hint = did_you_mean(text, registry)
    if hint:
        return f"target {spec!r} is not a built-in mechanism{hint}; `dpaudit list` shows them all"
    return (f"target {spec!r} is neither a built-in mechanism (see `dpaudit list`) nor of the form "
            "'package.module:attribute' or 'path/to/file.py:attribute'")
