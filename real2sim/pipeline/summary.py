"""What each stage of ``process`` found, as typed values: kept in ``run.json`` and read back when a stage is reused."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from real2sim.results import CalibrationResult, SimPackage
from real2sim.scene import Scene


@dataclass(frozen=True)
class ObjectSummary:
    """One reconstructed object: size [m], volume [m^3], whether its mesh is closed, position [m]."""

    name: str
    extent_m: tuple[float, ...]
    volume_m3: float
    watertight: bool
    position_m: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "extent_m": list(self.extent_m),
            "volume_m3": self.volume_m3,
            "watertight": self.watertight,
            "position_m": list(self.position_m),
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> ObjectSummary:
        return ObjectSummary(
            d["name"], tuple(d["extent_m"]), d["volume_m3"], d["watertight"], tuple(d["position_m"])
        )


@dataclass(frozen=True)
class SceneSummary:
    """The recon stage: which source it used, the objects found and the kind of support."""

    source: str
    objects: tuple[ObjectSummary, ...]
    support: str

    @staticmethod
    def of(source: str, scene: Scene) -> SceneSummary:
        objs = tuple(
            ObjectSummary(
                name=o.name,
                extent_m=tuple(round(float(x), 4) for x in o.mesh.extents),
                volume_m3=float(o.mesh.volume),
                watertight=bool(o.mesh.is_watertight),
                position_m=tuple(round(float(x), 4) for x in o.world_from_object[:3, 3]),
            )
            for o in scene.objects
        )
        return SceneSummary(source, objs, scene.support.kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "objects": [o.to_json() for o in self.objects],
            "support": self.support,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> SceneSummary:
        return SceneSummary(
            d["source"], tuple(ObjectSummary.from_json(o) for o in d["objects"]), d["support"]
        )


@dataclass(frozen=True)
class CheckSummary:
    name: str
    passed: bool
    detail: str
    skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "passed": self.passed, "detail": self.detail}
        return d | {"skipped": True} if self.skipped else d


@dataclass(frozen=True)
class PackageSummary:
    """The export stage: the model files written (names in the package folder) and the checks they passed."""

    mjcf: str
    scene_xml: str
    urdf: str | None
    checks: tuple[CheckSummary, ...]

    @staticmethod
    def of(pkg: SimPackage) -> PackageSummary:
        checks = tuple(CheckSummary(c.name, c.passed, c.detail, c.skipped) for c in pkg.checks)
        return PackageSummary(pkg.mjcf.name, pkg.scene_xml.name, pkg.urdf.name if pkg.urdf else None, checks)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def skipped(self) -> int:
        return sum(c.skipped for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "mjcf": self.mjcf,
            "scene_xml": self.scene_xml,
            "urdf": self.urdf,
            "checks": [c.to_json() for c in self.checks],
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> PackageSummary:
        checks = tuple(
            CheckSummary(c["name"], c["passed"], c["detail"], c.get("skipped", False)) for c in d["checks"]
        )
        return PackageSummary(d["mjcf"], d["scene_xml"], d["urdf"], checks)


@dataclass(frozen=True)
class ParamSummary:
    value: float
    stderr: float | None
    """None: not identifiable (JSON has no inf)."""


@dataclass(frozen=True)
class LogSummary:
    split: str
    rmse_qpos: float
    """[rad]"""
    rmse_qvel: float
    """[rad/s]"""


@dataclass(frozen=True)
class CalibrationSummary:
    """The calibrate stage: fitted values with standard errors, cost before/after, error per log, warnings."""

    parameters: dict[str, ParamSummary]
    cost_initial: float
    cost_final: float
    logs: dict[str, LogSummary]
    warnings: tuple[str, ...]

    @staticmethod
    def of(res: CalibrationResult) -> CalibrationSummary:
        params = {
            p.name: ParamSummary(float(v), _finite_or_none(e))
            for p, v, e in zip(res.params, res.values, res.stderr, strict=True)
        }
        logs = {lg.file: LogSummary(lg.split, lg.rmse_qpos, lg.rmse_qvel) for lg in res.logs}
        return CalibrationSummary(
            params, float(res.cost_initial), float(res.cost_final), logs, tuple(res.warnings)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "parameters": {n: {"value": p.value, "stderr": p.stderr} for n, p in self.parameters.items()},
            "cost": {"initial": self.cost_initial, "final": self.cost_final},
            "logs": {
                f: {"split": lg.split, "rmse_qpos": lg.rmse_qpos, "rmse_qvel": lg.rmse_qvel}
                for f, lg in self.logs.items()
            },
            "warnings": list(self.warnings),
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> CalibrationSummary:
        return CalibrationSummary(
            parameters={n: ParamSummary(p["value"], p["stderr"]) for n, p in d["parameters"].items()},
            cost_initial=d["cost"]["initial"],
            cost_final=d["cost"]["final"],
            logs={
                f: LogSummary(lg["split"], lg["rmse_qpos"], lg["rmse_qvel"]) for f, lg in d["logs"].items()
            },
            warnings=tuple(d["warnings"]),
        )


@dataclass(frozen=True)
class TwinSummary:
    """The twin stage: where the base stands (route, pose, uncertainty), how still home is, what was cut."""

    base: dict[str, Any]
    max_object_motion_m: float
    cut: tuple[str, ...]
    usd: str | None

    @staticmethod
    def of(manifest: dict[str, Any]) -> TwinSummary:
        cut = tuple(c["geom"] for c in manifest["package"]["cut"])
        return TwinSummary(
            manifest["base"], manifest["home"]["max_object_motion_m"], cut, manifest["usd"].get("file")
        )

    def to_json(self) -> dict[str, Any]:
        return {"base": self.base, "max_object_motion_m": self.max_object_motion_m, "cut": list(self.cut),
                "usd": self.usd}  # fmt: skip

    @staticmethod
    def from_json(d: dict[str, Any]) -> TwinSummary:
        return TwinSummary(d["base"], d["max_object_motion_m"], tuple(d["cut"]), d["usd"])


StageSummary = SceneSummary | PackageSummary | CalibrationSummary | TwinSummary
SUMMARY_TYPES: dict[
    str, type[SceneSummary] | type[PackageSummary] | type[CalibrationSummary] | type[TwinSummary]
] = {
    "recon": SceneSummary,
    "export": PackageSummary,
    "calibrate": CalibrationSummary,
    "twin": TwinSummary,
}


def _finite_or_none(x: float) -> float | None:
    """JSON has no inf: an unidentifiable parameter's standard error is written as null."""
    return float(x) if math.isfinite(x) else None
