"""NVIDIA DCGM dashboard: every GPU's utilisation, memory, clocks, temperature, power, PCIe
and NVLink traffic and health counters, per node and GPU. Shipped with the platform rather
than fetched from grafana.com at Grafana's start (NVIDIA publishes one there, id 12239), so
an air-gapped or mirrored cluster fetches nothing at run time.

Every metric is one the pinned exporter collects by default: the chart's default counters
(NVIDIA/dcgm-exporter deployment/ chart 4.8.2, templates/metrics-configmap.yaml, mounted as
/etc/dcgm-exporter/default-counters.csv); tests/test_dashboards.py reads that file in the
pinned chart and fails on a metric it does not enable. Units are the file's: MHz, C, W, mJ,
MiB, % and ratios (0-1), bytes per second for the DCP PCIe fields. GKE's managed DCGM
collection exports a subset of these; panels of the others stay empty there.

Labels: the exporter's `gpu` (index on the node) and `modelName`; `node` from our
ServiceMonitor's relabelling (components/dashboards/common.py NODE).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row
from grafana_foundation_sdk.builders.timeseries import Panel as Timeseries

from components.dashboards.common import NODE, label_variable, new_dashboard, query, stat, timeseries

UID = "mlplatform-dcgm"
SEL = f'{NODE}=~"$node",gpu=~"$gpu"'
LEGEND = f"{{{{{NODE}}}}} GPU {{{{gpu}}}}"


def per_gpu(metric: str, scale: str = "") -> str:
    """`metric` of the selected GPUs, one series each."""
    return f"max by ({NODE}, gpu) ({metric}{{{SEL}}}){scale}"


def gpu_panel(title: str, unit: str, metric: str, description: str = "", width: int = 8) -> Timeseries:
    """One counter of the selected GPUs, a series per GPU."""
    return timeseries(title, unit, query(per_gpu(metric), LEGEND), description=description, width=width)


def dashboard() -> Dashboard:
    return (
        new_dashboard(
            "NVIDIA DCGM",
            UID,
            "Every GPU from NVIDIA's DCGM exporter: utilisation, memory, clocks, temperature, power, PCIe, NVLink, errors.",
        )
        .with_variable(label_variable("node", "Node", f"label_values(DCGM_FI_DEV_GPU_TEMP, {NODE})"))
        .with_variable(label_variable("gpu", "GPU", f'label_values(DCGM_FI_DEV_GPU_TEMP{{{NODE}=~"$node"}}, gpu)'))
        .with_row(Row("Fleet"))
        .with_panel(stat("GPUs reporting", "none", query(f"count(DCGM_FI_DEV_GPU_TEMP{{{SEL}}})", "GPUs")))
        .with_panel(stat("Mean utilisation", "percent", query(f"avg(DCGM_FI_DEV_GPU_UTIL{{{SEL}}})", "utilisation")))
        .with_panel(stat("Power draw", "watt", query(f"sum(DCGM_FI_DEV_POWER_USAGE{{{SEL}}})", "power")))
        .with_panel(stat("Hottest GPU", "celsius", query(f"max(DCGM_FI_DEV_GPU_TEMP{{{SEL}}})", "temperature")))
        .with_row(Row("Utilisation"))
        .with_panel(gpu_panel("GPU utilisation", "percent", "DCGM_FI_DEV_GPU_UTIL"))
        .with_panel(
            gpu_panel(
                "Tensor core activity",
                "percentunit",
                "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                description="Ratio of cycles the tensor (HMMA) pipe is active.",
            )
        )
        .with_panel(
            gpu_panel(
                "Graphics engine activity",
                "percentunit",
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                description="Ratio of time the graphics engine is active.",
            )
        )
        .with_panel(
            gpu_panel(
                "Memory interface activity",
                "percentunit",
                "DCGM_FI_PROF_DRAM_ACTIVE",
                description="Ratio of cycles the device memory interface sends or receives data.",
            )
        )
        .with_panel(gpu_panel("Memory copy utilisation", "percent", "DCGM_FI_DEV_MEM_COPY_UTIL"))
        .with_panel(
            timeseries(
                "Encoder and decoder",
                "percent",
                query(per_gpu("DCGM_FI_DEV_ENC_UTIL"), f"{LEGEND} encoder"),
                query(per_gpu("DCGM_FI_DEV_DEC_UTIL"), f"{LEGEND} decoder"),
                width=8,
            )
        )
        .with_row(Row("Memory"))
        .with_panel(gpu_panel("Framebuffer used", "decmbytes", "DCGM_FI_DEV_FB_USED", width=12))
        .with_panel(
            timeseries(
                "Framebuffer used share",
                "percentunit",
                query(
                    f"max by ({NODE}, gpu) (DCGM_FI_DEV_FB_USED{{{SEL}}} / (DCGM_FI_DEV_FB_USED{{{SEL}}} + DCGM_FI_DEV_FB_FREE{{{SEL}}}))",
                    LEGEND,
                ),
            )
        )
        .with_row(Row("Clocks, temperature, power"))
        .with_panel(
            timeseries("SM clock", "hertz", query(per_gpu("DCGM_FI_DEV_SM_CLOCK", " * 1000000"), LEGEND), width=8)
        )
        .with_panel(
            timeseries("Memory clock", "hertz", query(per_gpu("DCGM_FI_DEV_MEM_CLOCK", " * 1000000"), LEGEND), width=8)
        )
        .with_panel(
            timeseries(
                "Temperature",
                "celsius",
                query(per_gpu("DCGM_FI_DEV_GPU_TEMP"), f"{LEGEND} GPU"),
                query(per_gpu("DCGM_FI_DEV_MEMORY_TEMP"), f"{LEGEND} memory"),
                width=8,
            )
        )
        .with_panel(gpu_panel("Power draw", "watt", "DCGM_FI_DEV_POWER_USAGE", width=12))
        .with_panel(
            timeseries(
                "Energy per hour",
                "joule",
                query(
                    f"max by ({NODE}, gpu) (increase(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{SEL}}}[1h])) / 1000",
                    LEGEND,
                ),
                description="Energy used over the past hour (the counter is in mJ since boot).",
            )
        )
        .with_row(Row("Interconnect"))
        .with_panel(
            timeseries(
                "PCIe traffic",
                "Bps",
                query(per_gpu("DCGM_FI_PROF_PCIE_TX_BYTES"), f"{LEGEND} tx"),
                query(per_gpu("DCGM_FI_PROF_PCIE_RX_BYTES"), f"{LEGEND} rx"),
            )
        )
        .with_panel(
            timeseries(
                "NVLink bandwidth counter rate",
                "none",
                query(
                    f"max by ({NODE}, gpu) (rate(DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{{{SEL}}}[$__rate_interval]))",
                    LEGEND,
                ),
                description="Per-second rate of the NVLink bandwidth counter over all lanes (GPUs without NVLink report none).",
            )
        )
        .with_row(Row("Health"))
        .with_panel(
            gpu_panel(
                "Last XID error",
                "none",
                "DCGM_FI_DEV_XID_ERRORS",
                description="The last XID error each GPU reported (0: none); NVIDIA's XID catalog says what each means.",
            )
        )
        .with_panel(
            timeseries(
                "PCIe replays",
                "none",
                query(f"max by ({NODE}, gpu) (increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{{{SEL}}}[$__range]))", LEGEND),
                description="PCIe retries in the time range shown.",
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "Remapped memory rows",
                "none",
                query(per_gpu("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"), f"{LEGEND} uncorrectable"),
                query(per_gpu("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"), f"{LEGEND} correctable"),
                query(per_gpu("DCGM_FI_DEV_ROW_REMAP_FAILURE"), f"{LEGEND} remap failed"),
                description="Rows remapped after memory errors; a failed remap needs the GPU serviced.",
                width=8,
            )
        )
    )
