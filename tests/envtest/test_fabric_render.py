"""The GPU fabric fixture's full render, which the envtest suite renders anyway (test_apply.py):
held to `check` here, so the unit suite does not render it a second time."""

from __future__ import annotations

from tests.support import mirror, renders
from tooling import check as lint

STACK = "dev-fabric"


@mirror.needed
def test_the_fabric_fixture_renders_from_the_mirror_and_passes_every_rule() -> None:
    render = renders.rendered(STACK)
    assert renders.unmirrored_release_manifests(render) == []
    left_out = sorted(i.label for i in render.left_out)
    mirrored = sorted(i.label for i in render.installs if i.kind == "manifest")
    assert sorted(left_out + mirrored) == ["gpu-fabric/nccl-rdma-installer", "gpu-fabric/nccl-tcpxo-installer", "gpu-fabric/nri-device-injector"]
    kinds = [o.obj["kind"] for o in render.objects if o.source == "gpu-fabric"]
    assert kinds.count("Network") == 17 and kinds.count("GKENetworkParamSet") == 17
    assert [str(v) for v in lint.check(render)] == []
