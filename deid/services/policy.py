"""A project's concealment settings: its label → strategy policy, its surrogates and its eponym guard.

The policy is ``Project.conceal_policy`` over the preset's default (:func:`deid.core.conceal.default_policy`:
every label Pseudo); a custom label set defaults to Pseudo too. Labels a stored annotation carries but the
project no longer lists are concealed with Pseudo as well: nothing is ever left as written by omission.

The surrogate secret is derived from the deployment's SECRET_KEY and the project's id,
HMAC-SHA256(SECRET_KEY, "deid-surrogates:ID"), and never stored: re-exports of a project agree, two projects
get different surrogates, and nothing an export writes holds the secret or an original → surrogate mapping.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from django.conf import settings

from annotator.models import Project
from deid.core.conceal import STRATEGIES, Policy, UnknownLabelError, default_policy
from deid.core.eponyms import EponymGuard
from deid.core.surrogates import LANGUAGES, DocumentSurrogates, Surrogates

#: What an export or a de-identification may be asked for: one strategy for every label, or the project's
#: saved policy.
POLICY_CHOICES = ("pseudo", "class", "mask", "remove", "project")
#: A label no policy names is concealed this way.
FALLBACK_STRATEGY = "pseudo"


class DeidError(ValueError):
    """A de-identification request that cannot be carried out as asked; the message says what to change."""


def default_strategies(project: Project) -> dict[str, str]:
    """The preset's default strategy for each of the project's labels (Pseudo for labels outside a preset)."""
    try:
        preset = default_policy(project.schema_preset).strategies
    except UnknownLabelError:  # a custom label set
        preset = {}
    return {label: preset.get(label, FALLBACK_STRATEGY) for label in project.labels}


def project_strategies(project: Project) -> dict[str, str]:
    """Label → strategy for every label of the project: the saved choice, else the preset's default."""
    saved = project.conceal_policy or {}
    return {label: saved.get(label, strategy) for label, strategy in default_strategies(project).items()}


def project_policy(project: Project) -> Policy:
    return Policy(project_strategies(project), default=FALLBACK_STRATEGY)


def resolve_policy(project: Project, name: str) -> Policy:
    """``name``: ``project`` (the saved policy) or one strategy for every label."""
    if name == "project":
        return project_policy(project)
    if name not in POLICY_CHOICES:
        raise DeidError(f"unknown concealment {name!r}; choose one of {', '.join(POLICY_CHOICES)}")
    return project_policy(project).with_strategy(name)


def clean_policy(project: Project, strategies: Mapping[str, str]) -> dict[str, str]:
    """The choices worth storing: those that differ from the preset's default, each checked."""
    defaults = default_strategies(project)
    unknown = sorted(set(strategies) - set(defaults))
    if unknown:
        raise DeidError(f"the project has no label {', '.join(unknown)}")
    for label, strategy in strategies.items():
        if strategy not in STRATEGIES:
            raise DeidError(f"unknown strategy {strategy!r} for {label}; choose one of {', '.join(STRATEGIES)}")
    return {label: strategy for label, strategy in strategies.items() if strategy != defaults[label]}


def surrogate_secret(project: Project) -> bytes:
    """The project's surrogate key (derived, never stored)."""
    return hmac.new(settings.SECRET_KEY.encode(), f"deid-surrogates:{project.pk}".encode(), hashlib.sha256).digest()


def project_surrogates(project: Project) -> Surrogates:
    language = (project.language or "").split("_")[0].split("-")[0].lower()
    if language not in LANGUAGES:
        raise DeidError(
            f"there are no surrogates for the project's language {project.language!r} (one of "
            f"{', '.join(LANGUAGES)}); conceal with class, mask or remove instead"
        )
    return Surrogates(language=language, secret=surrogate_secret(project), scope=project.surrogate_scope,
                      age_bucket=project.age_bucket)


def uses_pseudo(policy: Policy) -> bool:
    return "pseudo" in policy.strategies.values() or policy.default == "pseudo"


class Concealment:
    """Everything one export or run conceals with: the policy, the project's surrogates (built only if the
    policy needs them) and its eponym guard."""

    def __init__(self, project: Project, policy_name: str):
        self.name = policy_name
        self.policy = resolve_policy(project, policy_name)
        self.surrogates = project_surrogates(project) if uses_pseudo(self.policy) else None
        self.guard = EponymGuard(extra=project.eponyms or ())

    def for_document(self, key: str, meta: Mapping | None = None) -> DocumentSurrogates | None:
        if self.surrogates is None:
            return None
        meta = meta or {}
        patient = meta.get("patient_id") or meta.get("patient")
        return self.surrogates.for_document(key, patient_key=str(patient) if patient else None)

    def strategies(self) -> dict[str, str]:
        return dict(self.policy.strategies)
