"""Where training runs and what the evidence records about it.

``resolve_device("auto")`` takes CUDA, then Apple's MPS, then the CPU;
``device_description`` is what every run records (device, its name, the CPU,
threads, torch and platform).
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import torch

DEVICES = ("auto", "cpu", "cuda", "mps")


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def resolve_device(choice: str = "auto") -> torch.device:
    """``auto``: CUDA, then Apple's MPS, then the CPU; a named device must be present."""
    mps = getattr(torch.backends, "mps", None)
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": bool(mps and mps.is_available()),
    }
    if choice == "auto":
        return torch.device(next(d for d in ("cuda", "mps", "cpu") if available[d]))
    if choice not in available:
        raise ValueError(
            f"unknown device {choice!r}; choose one of {', '.join(DEVICES)}"
        )
    if not available[choice]:
        raise ValueError(
            f"this machine's PyTorch has no {choice} device; use --device auto or cpu"
        )
    return torch.device(choice)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "mps":
        try:  # the chip's name, e.g. "Apple M2 Max"
            return (
                subprocess.run(
                    ["sysctl", "-n", "machdep.cpu.brand_string"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout.strip()
                or "Apple GPU (MPS)"
            )
        except (OSError, subprocess.SubprocessError):
            return "Apple GPU (MPS)"
    return cpu_name()


def device_description(device: torch.device | str = "cpu") -> dict:
    device = torch.device(device)
    return {
        "device": device.type,
        "name": device_name(device),
        "cpu": cpu_name(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "platform": platform.platform(),
    }
