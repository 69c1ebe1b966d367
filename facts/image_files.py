"""Files and directories an image carries that a process is told to read (`python -m stacks
check` rule files-provided): everything else must come from a volume mount. Each entry is read
at the image's source at the pinned version. Imports nothing."""

from __future__ import annotations

IMAGE_FILES: dict[str, tuple[tuple[str, ...], str]] = {
    "grafana": (
        ("/etc/grafana/provisioning", "/var/log/grafana", "/var/lib/grafana", "/usr/share/grafana"),
        "grafana/grafana Dockerfile, final stage: GF_PATHS_* and `mkdir -p \"$GF_PATHS_PROVISIONING/...\" "
        "\"$GF_PATHS_LOGS\" \"$GF_PATHS_PLUGINS\" \"$GF_PATHS_DATA\"` (the same in every stored copy from 7.x on; "
        "not read at the 13.2.0 tag itself)",
    ),
    "dra-driver-nvidia-gpu": (
        ("/usr/bin/kubelet-plugin-prestart.sh",),
        "kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 deployments/container/Dockerfile line 143: "
        "`COPY /hack/kubelet-plugin-prestart.sh /usr/bin/kubelet-plugin-prestart.sh` (the kubelet plugin's init container runs it)",
    ),
}
"""Image name (the last element of its repository path) -> (paths it provides, where that was read)."""


ENV_NOT_READ: dict[str, tuple[frozenset[str], str]] = {
    "/usr/bin/kubelet-plugin-prestart.sh": (
        frozenset({"KUBELET_REGISTRAR_DIRECTORY_PATH", "KUBELET_PLUGINS_DIRECTORY_PATH"}),
        "kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 hack/kubelet-plugin-prestart.sh reads NVIDIA_DRIVER_ROOT only; the "
        "chart sets the kubelet directories in its init container too, and the kubelet plugins read them "
        "(cmd/gpu-kubelet-plugin/main.go EnvVars) in the containers that mount them",
    ),
}
"""A program a container runs (its command's script or binary) -> environment variables its
container sets that it does not read (so they name no file it needs), and where that was read."""


def image_provides(image: str, path: str) -> bool:
    """Whether `image` (a reference, any registry) carries `path` (or a directory above it)."""
    name = image.rsplit("@", 1)[0].rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image.rsplit("@", 1)[0]
    provided, _ = IMAGE_FILES.get(name.rsplit("/", 1)[-1], ((), ""))
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in provided)
