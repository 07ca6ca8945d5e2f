"""``manage.py show_policy``: the effective policy, every rule of
config/policy.py with the operator policy file's overrides (POLICY_FILE),
in oslo.policy's YAML format (a valid policy file itself)."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from config import policy


class Command(BaseCommand):
    help = "Print the effective policy (the defaults with POLICY_FILE's overrides) as oslo.policy YAML."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rule", help="print only this rule")

    def handle(self, *args: Any, **options: Any) -> None:
        rules = policy.effective()
        if options["rule"]:
            rules = {name: check for name, check in rules.items() if name == options["rule"]}
        for name, check in rules.items():
            self.stdout.write(f"{json.dumps(name)}: {json.dumps(check)}")
