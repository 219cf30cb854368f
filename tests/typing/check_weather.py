"""Never run, only type-checked (tests/generator/render/test_typing.py runs mypy --strict on it).

It shows how the generated weather package types for its users: correct
implementations and client calls pass, and every line marked
`# type: ignore[...]` MUST be an error (mypy's warn_unused_ignores turns a
line that stops failing into an error, so these expectations cannot rot).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from weather_mcp import AsyncWeatherClient, WeatherClient, WeatherServer
from weather_mcp.client import AsyncTaskHandle, TaskHandle, TaskStatus
from weather_mcp.models import AlertsSearchArgs, Day, GetForecastArgs, GetForecastOutput, Region


class Good(WeatherServer):
    def get_forecast(self, args: GetForecastArgs) -> GetForecastOutput:
        days = [Day(date="2026-12-02", high_c=1, low_c=0.5)]  # format: date is text; 1 stays 1
        Day(date=dt.date(2026, 12, 2), high_c=1, low_c=0)  # type: ignore[arg-type]
        Day(date="2026-12-02", high_c=1, low_c=0, summary=None)  # type: ignore[arg-type]
        Region(country="FR", state="x").state.upper()  # type: ignore[union-attr]
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


def progress_printer(progress: float, total: float | None, message: str | None) -> None:
    print(progress, total, message)


async def async_progress_printer(progress: float, total: float | None, message: str | None) -> None:
    print(progress, total, message)


def wrong_progress(progress: str) -> None:
    print(progress)


def tasks_and_progress_sync(client: WeatherClient) -> None:
    with WeatherClient.stdio(["python", "-m", "weather_mcp"], protocol="legacy"):
        pass
    WeatherClient.stdio("python -m weather_mcp", protocol="stateless")  # type: ignore[arg-type]
    remote: WeatherClient = WeatherClient.http(
        "http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer t"}, timeout=5
    )
    remote_async: AsyncWeatherClient = AsyncWeatherClient.http("http://127.0.0.1:8000/mcp")
    WeatherClient.http("http://127.0.0.1:8000/mcp", headers=[("a", "b")])  # type: ignore[arg-type]
    print(remote, remote_async)
    handle: TaskHandle[GetForecastOutput] = client.start_get_forecast("Paris", days=2)
    state: TaskStatus = handle.status()
    identifier: str | None = state.task_id
    forecast: GetForecastOutput = handle.result(timeout=10)
    cancelled: TaskStatus = handle.cancel()
    print(identifier, forecast.city, cancelled.status, cancelled.terminal, handle.task_id)
    temperature: float = client.current_temperature("Oslo", on_progress=progress_printer)
    client.current_temperature("Oslo", on_progress=wrong_progress)  # type: ignore[arg-type]
    client.current_temperature("Oslo", on_progress=async_progress_printer)  # type: ignore[arg-type]
    client.start_current_temperature("Oslo")  # type: ignore[attr-defined]
    wrong: TaskHandle[float] = client.start_get_forecast("Paris")  # type: ignore[assignment]
    print(temperature, wrong)


async def tasks_and_progress_async(client: AsyncWeatherClient) -> None:
    handle: AsyncTaskHandle[GetForecastOutput] = await client.start_get_forecast(
        "Paris", on_progress=async_progress_printer
    )
    state: TaskStatus = await handle.status()
    forecast: GetForecastOutput = await handle.result()
    await handle.cancel()
    temperature: float = await client.current_temperature("Oslo", on_progress=progress_printer)
    await client.current_temperature("Oslo", on_progress=wrong_progress)  # type: ignore[arg-type]
    handle.result()  # type: ignore[unused-coroutine]
    print(state.status, forecast.days, temperature)
