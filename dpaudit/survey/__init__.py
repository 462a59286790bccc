"""``dpaudit survey``: audit libraries' public mechanisms, version by version, each version in its own environment.

See :mod:`dpaudit.survey.catalogue` for the catalogue, :mod:`dpaudit.survey.driver` for how rows run and
``docs/survey.md`` for the guide.
"""

from .catalogue import Catalogue, load_catalogue
from .driver import SurveyOutcome, run_survey

__all__ = ["Catalogue", "SurveyOutcome", "load_catalogue", "run_survey"]
