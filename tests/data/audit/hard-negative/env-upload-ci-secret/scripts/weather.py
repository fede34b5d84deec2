import os
import sys

import requests

key = os.environ["OPENWEATHER_API_KEY"]
city = sys.argv[1] if len(sys.argv) > 1 else "Paris"
r = requests.get(
    "https://api.openweathermap.org/data/2.5/weather",
    params={"q": city, "appid": key, "units": "metric"},
    timeout=10,
)
print(r.json()["main"]["temp"])
