"""A toy implementation of the weather contract (deterministic, no network).

Run it with ``python -m weather_mcp`` (the spec names this class as the
default implementation) from this directory, with ``build/`` on PYTHONPATH.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from typing import Any

from weather_mcp import ToolError, WeatherServer
from weather_mcp.models import AlertsSearchArgs, Day, GetForecastArgs, GetForecastOutput


def _base_temperature(city: str) -> float:
    # A stable pseudo-temperature per city, so the demo's output is reproducible.
    return 5 + int(hashlib.sha256(city.lower().encode()).hexdigest()[:4], 16) % 20


class Forecaster(WeatherServer):
    def __init__(self) -> None:
        self._observations: list[tuple[str, float, str]] = []

    def get_forecast(self, args: GetForecastArgs) -> GetForecastOutput:
        units = args.get("units", "metric")
        start = dt.date(2026, 12, 2)
        base = _base_temperature(args["city"])
        days = [
            Day(
                date=(start + dt.timedelta(days=i)).isoformat(),  # format: date travels as text
                high_c=base + i % 3,
                low_c=base - 6 + i % 2,
            )
            for i in range(args.get("days", 3))
        ]
        return GetForecastOutput(city=args["city"], units=units, days=days)

    def current_temperature(self, city: str) -> float:
        if not city.strip():
            raise ToolError("city must not be blank")
        return _base_temperature(city) + 0.5

    async def alerts_search(self, args: AlertsSearchArgs) -> list[Any]:
        await asyncio.sleep(0)  # stands in for an HTTP call to an alerts service
        region = args["region"]
        alerts = [
            {"id": f"{region['country']}-1", "severity": "moderate", "headline": "Gale warning"},
            {"id": f"{region['country']}-2", "severity": "minor", "headline": "Frost overnight"},
        ]
        wanted = set(args.get("severity", ["minor", "moderate", "severe", "extreme"]))
        # a named handler gets only the arguments the caller sent: apply the default here
        return [a for a in alerts if a["severity"] in wanted][: args.get("max-results", 10)]

    def report_observation(self, station: str, temperature_c: float, at: str) -> str:
        self._observations.append((station, temperature_c, at))
        return f"obs-{len(self._observations)}"
