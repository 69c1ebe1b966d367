"""The post-renderer that leaves a chart's templates out (plumbing/postrender.py), run as Helm
runs it: the rendered manifests on its stdin, `# Source:` before each template's documents."""

from __future__ import annotations

import pytest

from plumbing import postrender

# As `helm template` and Helm's install print a chart's manifests (helm.sh/helm/v3 pkg/action/action.go renderResources).
RENDERED = """---
# Source: kserve-llmisvc-crd/templates/serving.kserve.io_clusterstoragecontainers.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterstoragecontainers.serving.kserve.io
---
# Source: kserve-llmisvc-crd/templates/serving.kserve.io_llminferenceservices.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: llminferenceservices.serving.kserve.io
"""


def test_the_named_template_is_left_out_and_the_rest_kept() -> None:
    out = postrender.run(postrender.omitting(["templates/serving.kserve.io_clusterstoragecontainers.yaml"]), RENDERED)
    assert "clusterstoragecontainers" not in out
    assert "# Source: kserve-llmisvc-crd/templates/serving.kserve.io_llminferenceservices.yaml" in out
    assert "name: llminferenceservices.serving.kserve.io" in out


def test_a_template_that_renders_nothing_fails_naming_it() -> None:
    """Renamed upstream, the install stops instead of keeping the object it was meant to leave out."""
    with pytest.raises(postrender.PostRenderError, match=r"templates/gone\.yaml"):
        postrender.run(postrender.omitting(["templates/gone.yaml"]), RENDERED)


def test_the_chart_gets_the_same_command_the_offline_render_runs() -> None:
    renderer = postrender.omitting(["templates/x.yaml"])
    args = renderer.chart_args()
    assert (args.command, args.args) == ("python3", ["-c", postrender.SCRIPT, "templates/x.yaml"])
