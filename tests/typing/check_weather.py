"""Never run, only type-checked (tests/test_typing.py runs mypy --strict on it).

It shows how the generated weather package types for its users: correct
implementations and client calls pass, and every line marked
`# type: ignore[...]` MUST be an error (mypy's warn_unused_ignores turns a
line that stops failing into an error, so these expectations cannot rot).
"""

from __future__ import annotations

from typing import Any

from weather_mcp import AsyncWeatherClient, WeatherClient, WeatherServer
from weather_mcp.models import AlertsSearchArgs, Day, GetForecastArgs, GetForecastOutput


class Good(WeatherServer):
    def get_forecast(self, args: GetForecastArgs) -> GetForecastOutput:
        days = [Day(date="2026-12-02", high_c=1.0, low_c=0.0)]  # type: ignore[arg-type]
        return GetForecastOutput(city=args["city"], units=args.get("units", "metric"), days=days)

    def current_temperature(self, city: str) -> float:
        return 1.5

    async def alerts_search(self, args: AlertsSearchArgs) -> list[Any]:
        return [args["max-results"]]

    def report_observation(self, station: str, temperature_c: float, at: str) -> str:
        return station


class WrongSignatures(Good):
    def current_temperature(self, city: int) -> float:  # type: ignore[override]
        return 1.5

    def report_observation(self, station: str, temperature_c: float, at: str) -> int:  # type: ignore[override]
        return 1


def use_args(args: GetForecastArgs) -> None:
    args["city"].upper()
    args["nope"]  # type: ignore[typeddict-item]


def call_sync(client: WeatherClient) -> None:
    forecast: GetForecastOutput = client.get_forecast("Paris", days=2, units="imperial")
    temperature: float = client.current_temperature("Oslo")
    client.get_forecast("Paris", units="kelvin")  # type: ignore[arg-type]
    client.current_temperature(42)  # type: ignore[arg-type]
    print(forecast.days[0].high_c, temperature)


async def call_async(client: AsyncWeatherClient) -> None:
    identifier: str = await client.report_observation("EGLL", 7.5, "2026-12-02T10:00:00Z")
    print(identifier)
