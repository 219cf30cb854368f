"""Call the generated weather server through the generated client.

Run after `mcpgen build examples/weather/tools.yaml` (`make demo` does both).
The package is written beside the spec (examples/weather/weather_mcp), so the
server starts as `python -m weather_mcp` from that folder with no PYTHONPATH,
serving the implementation the spec names (`weather_impl:Forecaster`).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # this script may be started from anywhere

from weather_mcp import ToolError, WeatherClient


def main() -> None:
    with WeatherClient.stdio([sys.executable, "-m", "weather_mcp"], cwd=HERE) as client:
        print("tools:", ", ".join(tool.display_name for tool in client.list_tools()))
        forecast = client.get_forecast("Paris", days=2)
        print(f"get_forecast('Paris', days=2) -> {forecast.city}, {forecast.units}:")
        for day in forecast.days:
            print(f"  {day.date}: {day.low_c:.0f}..{day.high_c:.0f} °C")
        print("current_temperature('Oslo') ->", client.current_temperature("Oslo"))
        print("alerts_search({'country': 'NO'}) ->", client.alerts_search({"country": "NO"}))
        print("report_observation(...) ->",
              client.report_observation("EGLL", 7.5, "2026-12-02T10:00:00Z"))
        try:
            client.current_temperature("  ")
        except ToolError as exc:
            print("current_temperature('  ') -> ToolError:", exc)


if __name__ == "__main__":
    main()
