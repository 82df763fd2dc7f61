"""`servebound measure`: sustained bandwidth and compute of this machine, as a hardware file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servebound.catalog.hardware import CatalogHardware, get_hardware
from servebound.cli.common import JSON, command, option
from servebound.cli.output import checked_output, console, line, new_table, print_json, progress_bar, strong
from servebound.core.units import GB, TFLOPS
from servebound.errors import InputError
from servebound.measure.device_match import match_device
from servebound.measure.hardware_file import hardware_file, write_hardware_file
from servebound.measure.machine import measure_machine


def match_catalog(names: tuple[str, ...]) -> CatalogHardware | None:
    """The catalog device a detected name (GPU, Apple chip, CPU) is, if any: the exact reported-name
    table (servebound.measure.device_match), never a fuzzy guess, since a wrong match would print a
    misleading spec."""
    for name in names:
        try:
            return get_hardware(match_device(name).id)
        except InputError:
            continue
    return None


@command(
    "measure",
    option("output", str, None, "Write the measured hardware file here (TOML).", "--output", "-o"),
    option("device", str, None, "cpu, cuda:0, mps ... (default: first GPU, else CPU).", "--device"),
    option("quick", bool, False, "A few seconds instead of the default ~30 s at most.", "--quick"),
    option(
        "array_mb",
        float,
        None,
        "Bandwidth array size per array, MB (three must fit in free memory).",
        "--array-mb",
        minimum=0,
        exclusive_minimum=True,
        maximum=1e7,
        unit="MB",
    ),
    option(
        "threads", int, None, "CPU threads for the bandwidth kernels.", "--threads", minimum=1, maximum=65_536
    ),
    option("name", str, None, "Name for the hardware file.", "--name"),
    option("overwrite", bool, False, "Replace an existing --output file.", "--overwrite"),
    JSON,
    examples=("servebound measure --quick", "servebound measure --device cpu --output my-box.toml"),
)
def measure_command(
    output: str | None,
    device: str | None,
    quick: bool,
    array_mb: float | None,
    threads: int | None,
    name: str | None,
    overwrite: bool,
    json_out: bool,
) -> None:
    path = None if output is None else Path(output)

    if path is not None:  # before minutes of measuring, not after
        checked_output(path, {".toml": "TOML"}, overwrite=overwrite)
    array_bytes = None
    if array_mb is not None:
        array_bytes = int(array_mb * 1e6)
    with progress_bar(transient=True, disable=json_out) as bar:
        task = bar.add_task("measuring", total=1.0)

        def progress(label: str, fraction: float) -> None:
            bar.update(task, description=label, completed=fraction)

        measurement = measure_machine(
            device=device,
            preset="quick" if quick else "default",
            array_bytes=array_bytes,
            threads=threads,
            progress=progress,
        )
    made = (
        write_hardware_file(measurement, path, overwrite=overwrite, name=name)
        if path is not None
        else hardware_file(measurement, name=name)
    )
    spec = match_catalog(measurement.machine.device_names)
    if json_out:
        data: dict[str, Any] = {"hardware_file": dict(made.document), "catalog_match": None}
        if spec is not None:
            data["catalog_match"] = {
                "id": spec.id,
                "memory_gb": spec.memory_gb,
                "bandwidth_gb_per_s": spec.bandwidth_gb_per_s,
                "compute_tflops": spec.compute_tflops,
            }
        print_json(data)
        return
    hw = made.hardware
    console.print(
        line(strong(hw.name), f" measured in {measurement.elapsed_s:.1f} s ({measurement.preset} preset)")
    )
    table = new_table(
        "quantity",
        "measured",
        f"catalog spec ({spec.id})" if spec else "catalog spec",
        "measured / spec",
        left=("quantity",),
    )

    def row(label: str, measured: float | None, spec_value: float | None, unit: str) -> None:
        ratio = "" if not (measured and spec_value) else f"{measured / spec_value:.0%}"
        table.add_row(
            label,
            "-" if measured is None else f"{measured:,.1f} {unit}",
            "-" if spec_value is None else f"{spec_value:,.1f} {unit}",
            ratio,
        )

    row("memory C", hw.memory_bytes / GB, spec.memory_gb if spec else None, "GB")
    row("bandwidth R", hw.bandwidth_bytes_per_s / GB, spec.bandwidth_gb_per_s if spec else None, "GB/s")
    for mode, rate in hw.compute_flop_per_s.items():
        row(f"{mode} dense", rate / TFLOPS, spec.compute_tflops.get(mode) if spec else None, "TFLOPS")
    console.print(table)
    for mode, why in measurement.matmul.unavailable.items():
        console.print(f"- {mode}: not measured ({why})")
    if path is not None:
        console.print(f"wrote {path}: use it with --hardware {path}")
    else:
        console.print(made.text, markup=False)
