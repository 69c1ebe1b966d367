"""The components of the platform: the one list a component is added to (docs/development.md,
"Adding a component"). The schema root (`mlplatform:components`), the check that a stack
installs what its components need, the install order, the stack-file reference and with them
the architecture diagram are derived from it; each entry is the component's spec, written
beside its settings' model in its module of stackmodel/components/ (spec.py ComponentSpec).

The order is the reference's; the install order follows the specs' needs (install_order).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, partial
from typing import Any, TypeVar

from pydantic import ConfigDict, Field, PrivateAttr, ValidationInfo, create_model, model_validator
from pydantic.functional_validators import ModelWrapValidatorHandler

from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.dcgm import DCGM_EXPORTER
from stackmodel.components.dra import NVIDIA_DRA_DRIVER
from stackmodel.components.fabric import GPU_FABRIC
from stackmodel.components.idle_reclaim import IDLE_RECLAIM
from stackmodel.components.inference_gateway import INFERENCE_GATEWAY
from stackmodel.components.istio import ISTIO
from stackmodel.components.jobset import JOBSET
from stackmodel.components.katib import KATIB
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kuberay import KUBERAY
from stackmodel.components.kueue import KUEUE
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET
from stackmodel.components.model_registry import MODEL_REGISTRY
from stackmodel.components.monitoring import MONITORING
from stackmodel.components.pipelines import PIPELINES
from stackmodel.components.serving import SERVING
from stackmodel.components.spark import SPARK
from stackmodel.components.spec import ComponentSpec, install_order
from stackmodel.components.trainer import TRAINER
from stackmodel.schema.common import Model

COMPONENTS: tuple[ComponentSpec[Any], ...] = (
    CERT_MANAGER,
    ISTIO,
    KUBEFLOW,
    JOBSET,
    TRAINER,
    KUBERAY,
    KUEUE,
    MONITORING,
    DCGM_EXPORTER,
    NVIDIA_DRA_DRIVER,
    PIPELINES,
    KATIB,
    MODEL_REGISTRY,
    SPARK,
    SERVING,
    IDLE_RECLAIM,
    GPU_FABRIC,
    LEADER_WORKER_SET,
    INFERENCE_GATEWAY,
)

# --- the schema root, from the list ---------------------------------------------------------

M = TypeVar("M", bound=Model)

SPECS = "components"
"""The key of a validation context that gives the list of components to parse
`mlplatform:components` with (default: stackmodel/registry.py COMPONENTS); a test adds one
this way (tests/test_adding_a_component.py)."""


def _default_settings(spec: ComponentSpec[Any]) -> Model:
    """A component's settings when the stack says nothing of it."""
    if isinstance(spec.on_by_default, bool):
        return spec.model.model_validate({"enabled": spec.on_by_default})
    return spec.model()


def _settings_notes(spec: ComponentSpec[Any]) -> str:
    if isinstance(spec.on_by_default, bool):
        default = "On unless `enabled: false`." if spec.on_by_default else "Off unless `enabled: true`."
    else:
        default = "On or off by the rest of the stack (below)."
    return f"{spec.summary} {default}"


@cache
def settings_model(specs: tuple[ComponentSpec[Any], ...]) -> type[Model]:
    """The model `mlplatform:components` is parsed with: a key per component of `specs`, in their
    order, each its spec's model; a component whose key the stack leaves out, or writes without
    `enabled`, is on as its spec says (`on_by_default`)."""

    def defaults(cls: type[Model], data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        filled = dict(data)
        for spec in specs:
            value = filled.get(spec.name)
            if isinstance(value, Mapping) and "enabled" not in value and isinstance(spec.on_by_default, bool):
                filled[spec.name] = {**value, "enabled": spec.on_by_default}
        return filled

    fields: dict[str, Any] = {
        spec.name: (spec.model, Field(default_factory=partial(_default_settings, spec), description=_settings_notes(spec)))
        for spec in specs
    }
    validators: dict[str, Any] = {"_defaults": model_validator(mode="before")(defaults)}
    model: type[Model] = create_model("Components", __base__=Model, __doc__=Components.__doc__, __validators__=validators, **fields)
    return model


class Components(Model):
    """In-cluster components, one key each: the list of stackmodel/registry.py, in its order.
    Each is on or off by default as the table says; a component a release adds is off."""

    model_config = ConfigDict(extra="allow")
    _specs: tuple[ComponentSpec[Any], ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _by_spec(cls, data: Any, handler: ModelWrapValidatorHandler[Components], info: ValidationInfo) -> Components:
        if isinstance(data, Components):
            return data
        specs: tuple[ComponentSpec[Any], ...] = tuple((info.context or {}).get(SPECS, COMPONENTS))
        parsed = settings_model(specs).model_validate(data, context=info.context)
        found = cls.model_construct(**{spec.name: getattr(parsed, spec.name) for spec in specs})
        found._specs = specs
        return found

    @property
    def specs(self) -> tuple[ComponentSpec[Any], ...]:
        """The components this stack was parsed with, in the list's order."""
        return self._specs

    def installed_in_order(self) -> tuple[ComponentSpec[Any], ...]:
        """The components, each after what it needs (stackmodel/components/spec.py install_order)."""
        return install_order(self._specs)

    def __getitem__(self, spec: ComponentSpec[M]) -> M:
        """The settings of `spec`'s component."""
        value = (self.__pydantic_extra__ or {}).get(spec.name)
        if not isinstance(value, spec.model):
            raise KeyError(f"{spec.name} is not a component of this stack's list (stackmodel/registry.py)")
        return value

    def replaced(self, spec: ComponentSpec[M], settings: M) -> Components:
        """These components with `spec`'s settings replaced."""
        found = type(self).model_construct(**{**(self.__pydantic_extra__ or {}), spec.name: settings})
        found._specs = self._specs
        return found
